/**
 * Input rules on every endpoint (issue 21): a fuzz over the whole route table read from
 * /openapi.json (repeated and prototype-named parameters, huge and odd values, every content
 * type, HEAD and OPTIONS) never gives a 5xx but an upstream's 502/504 or a catalogue 503, and
 * every error has the catalogue's shape. Beside it: sources named like Object.prototype's
 * members, engine names like them, repeated parameters named in the 400, HEAD never charged,
 * JSON sent as text/plain 415, and no key in any log line of the run.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/http/index.js';
import { loadConfig } from '../src/config.js';
import { catalogue } from '../src/errors.js';
import { createLogger } from '../src/log.js';
import { openService } from '../src/service.js';
import { DEFAULT_SOURCES, DIM, generateCorpus, writeCorpusJsonl } from './helpers/corpus.js';
import { Rng } from './helpers/rng.js';
import { GATEWAY_HOST, makeTempDir, type Res } from './helpers/service.js';

/** Sources named like Object.prototype's members, beside ordinary ones. */
const PROTO_NAMES = ['__proto__', 'toString', 'constructor', 'hasOwnProperty'];
const SOURCES = [
  ...PROTO_NAMES.map((name) => ({ name, homepage: `https://${name.replace(/_/g, 'x').toLowerCase()}.example/` })),
  ...DEFAULT_SOURCES.slice(0, 2),
];
const CODES = new Set(Object.values(catalogue).map((e) => e.code));

let service: Awaited<ReturnType<typeof openService>>;
let app: Awaited<ReturnType<typeof buildApp>>;
let dir: string;
const logLines: string[] = [];
let bearer: string;
let gatewaySecret: string;

beforeAll(async () => {
  dir = makeTempDir();
  const config = loadConfig({ DATA_DIR: `${dir}/data`, GATEWAY_HOST, LOG_LEVEL: 'debug', LIVE_TIMEOUT_MS: '1500' });
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  service = await openService(config, { log: createLogger('debug', sink) });
  app = await buildApp(service);
  await app.ready();
  const corpus = generateCorpus({ seed: 9, articles: 60, sources: SOURCES });
  writeCorpusJsonl(corpus, `${dir}/corpus.jsonl`);
  await service.importFile(`${dir}/corpus.jsonl`);
  bearer = service.keys.create({ scheme: 'bearer', name: 'fuzz' }).secret;
  gatewaySecret = service.keys.create({ scheme: 'gateway', name: 'fuzz gw' }).secret;
}, 120_000);

afterAll(async () => {
  await app?.close();
  await service?.close();
});

async function call(method: string, url: string, opts: { headers?: Record<string, string>; payload?: string | Buffer } = {}): Promise<Res> {
  const res = await app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${bearer}`, ...opts.headers }, payload: opts.payload });
  let body: any;
  try {
    body = JSON.parse(res.body);
  } catch {
    body = undefined;
  }
  return { status: res.statusCode, headers: res.headers as Res['headers'], body, raw: res.body };
}

/** Statuses a request may get for reasons outside its input: an upstream down, a product off, no text mode. */
const UPSTREAM = new Set([502, 504]);
const EXPECTED_503 = new Set(['product_unavailable', 'text_mode_unavailable', 'embed_unavailable', 'overloaded', 'not_ready']);

function problem(desc: string, res: Res, method: string): string | null {
  if (res.status >= 500 && !UPSTREAM.has(res.status) && !(res.status === 503 && EXPECTED_503.has(res.body?.error)))
    return `${desc}: ${res.status} ${res.raw.slice(0, 300)}`;
  if (method === 'HEAD') return res.raw === '' ? null : `${desc}: HEAD with a body`;
  if (res.status < 400) return null;
  if (!String(res.headers['content-type'] ?? '').startsWith('application/json')) return `${desc}: ${res.status} content-type ${res.headers['content-type']}`;
  const b = res.body;
  if (typeof b?.error !== 'string' || typeof b.message !== 'string' || typeof b.detail !== 'string')
    return `${desc}: ${res.status} not the error shape: ${res.raw.slice(0, 200)}`;
  if (!CODES.has(b.error)) return `${desc}: error ${b.error} is not in the catalogue`;
  return null;
}

const ODD = [
  '',
  ' ',
  '%00',
  '%ff',
  '%E2%80%AE',
  'x'.repeat(10_000),
  '-1',
  '0',
  '1e309',
  'NaN',
  'true',
  '__proto__',
  'constructor',
  'toString',
  '💥',
  '<script>',
  '..%2F..%2Fetc%2Fpasswd',
  'a,b,,c',
];
const PROTO_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype', '__proto__[x]', 'constructor[prototype]'];

function randomJson(rng: Rng, depth = 0): unknown {
  switch (rng.int(depth > 2 ? 4 : 7)) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.pick([0, -1, 1.5, 1e308, 2 ** 53, -0]);
    case 3:
      return rng.pick(ODD);
    case 4:
      return Array.from({ length: rng.int(4) }, () => randomJson(rng, depth + 1));
    case 5: {
      const o: Record<string, unknown> = {};
      for (let i = 0; i < rng.int(4); i++) o[rng.pick([...PROTO_KEYS, 'vector', 'text', 'q', 'limit', 'credits', 'name'])] = randomJson(rng, depth + 1);
      return o;
    }
    default:
      return Array.from({ length: DIM }, () => rng.gauss());
  }
}

/** The route table: every documented method and path, path parameters filled. */
async function routes(): Promise<{ method: string; path: string; params: string[] }[]> {
  const spec = (await call('GET', '/openapi.json')).body;
  const out: { method: string; path: string; params: string[] }[] = [];
  for (const [path, ops] of Object.entries<Record<string, any>>(spec.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) {
      const params = (op.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name as string);
      out.push({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, 'x'), params });
    }
  }
  return out;
}

describe('every endpoint, fuzzed', () => {
  it('the route table is the whole API (the live endpoints declare their parameters)', async () => {
    const table = await routes();
    expect(table.length).toBeGreaterThan(25);
    const contacts = table.find((r) => r.path === '/v1/contacts');
    expect(contacts?.params).toContain('domain');
    const search = table.find((r) => r.path === '/v1/search');
    expect(search?.params).toEqual(expect.arrayContaining(['engine', 'q', 'page']));
  });

  it('repeated, prototype-named, huge and odd parameters, random bodies, every content type, HEAD and OPTIONS: no 5xx, the catalogue shape', async () => {
    const rng = new Rng(0x2121);
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    for (const r of await routes()) {
      const names = r.params.length ? r.params : ['q'];
      for (let i = 0; i < 14; i++) {
        const pairs: string[] = [];
        for (let j = 0; j < 1 + rng.int(4); j++) {
          const name = rng.chance(0.25) ? rng.pick(PROTO_KEYS) : rng.pick(names);
          const value = rng.pick(ODD);
          pairs.push(`${encodeURIComponent(name)}=${value}`);
          if (rng.chance(0.3)) pairs.push(`${encodeURIComponent(name)}=${rng.pick(ODD)}`); // repeated
        }
        const url = `${r.path}?${pairs.join('&')}`;
        const methods = [r.method, ...(i === 0 ? ['HEAD', 'OPTIONS', 'PUT'] : [])];
        for (const method of methods) {
          const withBody = method === 'POST' || method === 'PUT';
          const contentType = rng.pick([
            'application/json',
            'application/json',
            'text/plain',
            'application/x-www-form-urlencoded',
            'multipart/form-data; boundary=x',
            'application/xml',
            '',
          ]);
          const payload = withBody ? (rng.chance(0.8) ? JSON.stringify(randomJson(rng)) : rng.bytes(rng.int(200))) : undefined;
          const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
          if (rng.chance(0.1)) headers.authorization = rng.pick(['Bearer', 'Bearer nmb_x', `Bearer ${bearer} extra`, 'Basic abc']);
          const res = await call(method, method === 'POST' && rng.chance(0.5) ? r.path : url, { headers, payload });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const f = problem(`${method} ${url.slice(0, 120)} (${contentType})`, res, method);
          if (f) failures.push(f);
        }
      }
    }
    console.log(
      `[fuzz all] statuses: ${[...statuses.entries()]
        .sort()
        .map(([s, n]) => `${s}×${n}`)
        .join(', ')}`,
    );
    expect(failures.slice(0, 15), `${failures.length} bad answers`).toEqual([]);
  }, 300_000);

  it('a path that is not valid percent-encoding is 400 invalid_request (a malformed request, as bad JSON is) in the catalogue shape', async () => {
    for (const url of ['/%ff', '/docs/%ff', '/v1/news/%e0%a4%a']) {
      const res = await call('GET', url);
      expect([res.status, res.body?.error, res.body?.message], url).toEqual([400, 'invalid_request', 'the request path is not valid percent-encoding']);
      expect(typeof res.body.message, url).toBe('string');
    }
  });

  it('Fastify’s own refusals are the catalogue’s: 413 and 415', async () => {
    const big = await call('POST', '/v1/match', {
      headers: { 'content-type': 'application/json' },
      payload: `{"text":"${'x'.repeat(service.config.bodyLimit + 10)}"}`,
    });
    expect(big.status).toBe(413);
    expect(big.body.error).toBe('payload_too_large');
    // JSON sent as text/plain: 415, as the README says (Fastify's own text parser once made it 422).
    const text = await call('POST', '/v1/match', { headers: { 'content-type': 'text/plain' }, payload: JSON.stringify({ vector: new Array(DIM).fill(0.1) }) });
    expect(text.status).toBe(415);
    expect(text.body.error).toBe('unsupported_media_type');
  });
});

describe('prototype keys and repeated parameters', () => {
  it('sources named __proto__, toString, constructor and hasOwnProperty are counted like any other', async () => {
    const res = await call('GET', `/v1/market/news-volume?q=${encodeURIComponent('the OR a OR of OR and OR in')}`);
    expect(res.status, res.raw).toBe(200);
    const named = new Set(res.body.sources.map((s: { name: string }) => s.name));
    for (const n of PROTO_NAMES) expect(named.has(n), n).toBe(true);
    // by_source keeps them as own keys: each day's counts add up to its total.
    const raw = JSON.parse(res.raw, (_k, v) => v);
    let perSource = 0;
    for (const d of res.body.days) {
      const text = JSON.stringify(d.by_source);
      expect(text).not.toContain('function');
      const sum = Object.values<number>(JSON.parse(text)).reduce((a, b) => a + b, 0);
      expect(sum, `${d.date}: ${text}`).toBe(d.count);
      perSource += Object.keys(JSON.parse(text)).filter((k) => PROTO_NAMES.includes(k)).length;
    }
    expect(raw.total).toBeGreaterThan(0);
    expect(perSource).toBeGreaterThan(0);
    // As filters too.
    const only = await call('GET', `/v1/market/news-volume?q=the&sources=${encodeURIComponent('__proto__,toString')}`);
    expect(only.status, only.raw).toBe(200);
  });

  it('engine=constructor, __proto__ or toString is a 400 naming the engines, not a 403', async () => {
    // An account's key: its subscriptions are checked against the engine's product.
    const account = service.billing.createAccount('engine names');
    const key = service.keys.create({ scheme: 'bearer', name: 'engines', account: account.id });
    for (const engine of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      for (const path of ['/v1/search', '/v1/publisher/listing']) {
        const res = await call('GET', `${path}?engine=${engine}&q=x`, { headers: { authorization: `Bearer ${key.secret}` } });
        expect(res.status, `${path} ${engine}: ${res.raw}`).toBe(400);
        expect(res.body.error).toBe('bad_request');
        expect(res.body.message).toContain('engine');
      }
    }
  });

  it('a repeated parameter is a 400 naming it, on live and indexed endpoints alike', async () => {
    const cases = [
      ['/v1/search?engine=web_search&q=x&q=y', 'q'],
      ['/v1/contacts?domain=a.example&domain=b.example', 'domain'],
      ['/v1/publisher/article?url=https://a.example/x&url=https://b.example/y', 'url'],
      ['/v1/job-board/jobs?q=x&location=a&location=b', 'location'],
      ['/v1/search?engine=marketplace&q=x&brand=a&brand=b', 'brand'],
      ['/v1/launches?q=a&q=b', 'q'],
      ['/v1/news?q=a&q=b', 'q'],
      ['/v1/search?engine=web_search&engine=marketplace&q=x', 'engine'],
    ] as const;
    for (const [url, name] of cases) {
      const res = await call('GET', url);
      expect(res.status, `${url}: ${res.raw}`).toBe(400);
      expect(res.body.error).toBe('bad_request');
      expect(res.body.message, url).toContain(name);
      expect(res.body.message, url).toContain('more than once');
    }
  });
});

describe('HEAD and logs', () => {
  it('HEAD on a metered GET is 405 with Allow: GET and charges nothing; HEAD on an unmetered GET answers', async () => {
    const account = service.billing.createAccount('head test');
    const key = service.keys.create({ scheme: 'bearer', name: 'head', account: account.id });
    const before = service.billing.balance(account.id);
    for (const url of ['/v1/news?q=the', '/v1/contacts?domain=example.com', '/v1/market/news-volume?q=the']) {
      const res = await call('HEAD', url, { headers: { authorization: `Bearer ${key.secret}` } });
      expect(res.status, url).toBe(405);
      expect(res.headers.allow).toBe('GET');
    }
    expect(service.billing.balance(account.id)).toBe(before);
    const get = await call('GET', '/v1/news?q=the', { headers: { authorization: `Bearer ${key.secret}` } });
    expect(get.status, get.raw).toBe(200);
    expect(service.billing.balance(account.id)).toBe(before - 1);
    expect((await call('HEAD', '/openapi.json')).status).toBe(200);
  });

  it('no key reaches a log line, even one sent in the query string; an upstream failure is a warning without a stack', async () => {
    const keyInQuery = await call('GET', `/v1/news?q=the&api_key=${bearer}`, { headers: { authorization: '' } });
    expect(keyInQuery.status).toBeGreaterThanOrEqual(400);
    await call('GET', `/v1/sources?key=${encodeURIComponent(gatewaySecret)}`, { headers: { 'x-gateway-key': gatewaySecret, 'x-gateway-host': GATEWAY_HOST } });
    await call('GET', `/v1/nothing/${bearer}`);
    // A live scrape whose upstream cannot be reached (no network here): 502 or 504.
    const live = await call('GET', '/v1/contacts?domain=nothing-here.invalid');
    expect([502, 504]).toContain(live.status);
    const all = logLines.join('\n');
    expect(all.length).toBeGreaterThan(0);
    for (const secret of [bearer, gatewaySecret]) expect(all.includes(secret), 'a key in the logs').toBe(false);
    expect(all).toContain('[redacted]');
    const upstream = logLines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'upstream failed');
    expect(upstream.length).toBeGreaterThan(0);
    for (const l of upstream) {
      expect(l.level).toBe(40); // warn
      expect(JSON.stringify(l)).not.toContain('    at ');
    }
  }, 30_000);
});
