/**
 * 500 seeded malformed requests to POST /v1/match: random JSON values, wrong types per field,
 * huge numbers, nested junk, random bytes as the raw body, wrong content types. No request
 * input may produce a 5xx (a 500 is a bug); every non-200 answer is a JSON
 * error body with string `error`, `message` and `detail`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIM } from './helpers/corpus.js';
import { Rng } from './helpers/rng.js';
import { SMALL, startHarness, type Harness, type Res } from './helpers/service.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ corpus: SMALL, env: { MATCH_MAX_MATCHES: '200' } });
});

afterAll(async () => {
  await h?.close();
});

const FIELDS = ['model', 'vector', 'text', 'order', 'min_score', 'since', 'until', 'limit', 'cursor', 'include_edits', 'sources', 'exclude_sources'];
const STRINGS = [
  '',
  ' ',
  'bge-m3',
  'time',
  'relevance',
  'Wire One',
  'Daily Ledger',
  '2025-01-15T00:00:00Z',
  '2025-13-45T99:99:99Z',
  '0000-00-00T00:00:00Z',
  '+275760-09-13T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '2025-01-15T00:00:00+25:00',
  'null',
  'NaN',
  'Infinity',
  '1e309',
  '\u0000',
  '\ud800',
  '💥'.repeat(50),
  '<script>',
  "'; DROP TABLE articles; --",
  '../../etc/passwd',
  '%00',
  'a'.repeat(5000),
  '__proto__',
  'constructor',
];
const NUMBERS = [0, -0, 1, -1, 0.5, 1.5, -1.5, 100, 101, 1e308, -1e308, 5e-324, 2 ** 53, -(2 ** 53), 1e21, 0.1 + 0.2, 123456789.123];

function randomJson(rng: Rng, depth = 0): unknown {
  const k = rng.int(depth > 2 ? 4 : 7);
  switch (k) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.pick(NUMBERS);
    case 3:
      return rng.pick(STRINGS);
    case 4:
      return Array.from({ length: rng.int(5) }, () => randomJson(rng, depth + 1));
    case 5: {
      const o: Record<string, unknown> = {};
      for (let i = 0; i < rng.int(5); i++) o[rng.chance(0.6) ? rng.pick(FIELDS) : rng.pick(STRINGS).slice(0, 20)] = randomJson(rng, depth + 1);
      return o;
    }
    default:
      return rng.uniform(-1e6, 1e6);
  }
}

function randomVector(rng: Rng): unknown {
  switch (rng.int(10)) {
    case 0:
      return Array.from({ length: rng.pick([0, 1, 512, 1023, 1025, 2048]) }, () => rng.gauss());
    case 1:
      return new Array(DIM).fill(0);
    case 2:
      return new Array(DIM).fill(1e308); // its norm overflows to Infinity
    case 3:
      return new Array(DIM).fill(5e-324); // its norm underflows to 0
    case 4: {
      const v: unknown[] = Array.from({ length: DIM }, () => rng.gauss());
      v[rng.int(DIM)] = rng.pick([null, 'x', [], {}, true]);
      return v;
    }
    case 5:
      return Array.from({ length: DIM }, () => [rng.gauss()]);
    case 6:
      return { 0: 1, length: DIM };
    case 7:
      return Array.from({ length: DIM }, () => rng.gauss() * 1e30);
    case 8:
      return Array.from({ length: DIM }, () => rng.gauss()); // valid
    default:
      return randomJson(rng);
  }
}

/** A plausible body with one or more fields given a wrong or extreme value. */
function mutatedBody(rng: Rng): Record<string, unknown> {
  const b: Record<string, unknown> = {};
  if (rng.chance(0.5)) b.vector = randomVector(rng);
  for (const f of FIELDS) {
    if (f === 'vector' || !rng.chance(0.3)) continue;
    switch (f) {
      case 'limit':
        b.limit = rng.pick<unknown>([0, 1, 50, 100, 101, -5, 1.5, '10', 1e308, null, [10], { n: 1 }, true]);
        break;
      case 'min_score':
        b.min_score = rng.pick<unknown>([-1, 1, -1.0001, 1.0001, 0.5, '0.5', 1e308, -1e308, null, [], false]);
        break;
      case 'sources':
      case 'exclude_sources':
        b[f] = rng.pick<unknown>([[], ['Wire One'], ['wire one'], 'Wire One', [1, 2], [null], Array(60).fill('Wire One'), [[['Wire One']]], { a: 1 }]);
        break;
      case 'include_edits':
        b.include_edits = rng.pick<unknown>([true, false, 'true', 0, 1, null, []]);
        break;
      case 'order':
        b.order = rng.pick<unknown>(['time', 'relevance', 'TIME', '', 0, null, ['time']]);
        break;
      case 'cursor':
        b.cursor = rng.pick<unknown>([
          '',
          'abc',
          rng.bytes(rng.int(200)).toString('base64'),
          rng.bytes(40).toString('base64url'),
          5,
          null,
          {},
          'x'.repeat(rng.int(3000)),
        ]);
        break;
      default:
        b[f] = rng.chance(0.5) ? rng.pick(STRINGS) : randomJson(rng, 1);
    }
  }
  if (rng.chance(0.15)) b[rng.pick(STRINGS).slice(0, 30) || 'extra'] = randomJson(rng, 1);
  return b;
}

interface Case {
  desc: string;
  payload: string | Buffer | undefined;
  contentType: string | undefined;
}

function makeCase(rng: Rng, i: number): Case {
  const json = 'application/json';
  switch (rng.int(10)) {
    case 0:
    case 1:
      return { desc: `random JSON value #${i}`, payload: JSON.stringify(randomJson(rng)), contentType: json };
    case 2:
    case 3:
    case 4:
      return { desc: `mutated body #${i}`, payload: JSON.stringify(mutatedBody(rng)), contentType: json };
    case 5:
      return { desc: `random bytes #${i}`, payload: rng.bytes(rng.int(300)), contentType: rng.chance(0.7) ? json : undefined };
    case 6: {
      // Valid JSON cut short or spliced with junk.
      const s = JSON.stringify(mutatedBody(rng));
      const cut = rng.int(s.length + 1);
      return {
        desc: `broken JSON #${i}`,
        payload: s.slice(0, cut) + (rng.chance(0.5) ? rng.pick(['}', ']', ',', '"', '\\', '\u0000', 'NaN']) : ''),
        contentType: json,
      };
    }
    case 7:
      return {
        desc: `wrong content type #${i}`,
        payload: JSON.stringify(mutatedBody(rng)),
        contentType: rng.pick([
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/xml',
          'application/json; charset=latin1',
          'application/JSON',
          '*/*',
          'garbage',
        ]),
      };
    case 8: {
      // Deep nesting.
      // Built as text: JSON.stringify itself would overflow the stack on the deepest ones.
      let v = String(rng.pick(NUMBERS));
      const depth = rng.pick([10, 100, 1000, 5000, 20000]);
      for (let d = 0; d < depth; d++) v = rng.chance(0.5) ? `[${v}]` : `{"vector":${v}}`;
      return { desc: `nested depth ${depth} #${i}`, payload: rng.chance(0.5) ? v : `{"sources":${v}}`, contentType: json };
    }
    default: {
      // Extreme sizes: a very long text, many sources, a huge body.
      const pick = rng.int(4);
      const body =
        pick === 0
          ? { text: 'x'.repeat(rng.pick([3999, 4000, 4001, 100_000])) }
          : pick === 1
            ? { sources: Array.from({ length: rng.pick([50, 51, 10_000]) }, (_, k) => `S${k}`) }
            : pick === 2
              ? { vector: Array.from({ length: rng.pick([DIM, 200_000]) }, () => rng.gauss()) }
              : { limit: 10, pad: 'y'.repeat(rng.pick([1000, 2_000_000])) };
      return { desc: `extreme size #${i}`, payload: JSON.stringify(body), contentType: json };
    }
  }
}

function checkAnswer(c: Case, res: Res): string | null {
  // A valid text query meets text mode being off: the one 5xx a request may get here.
  const textOff = res.status === 503 && res.body?.error === 'text_mode_unavailable';
  if (res.status >= 500 && !textOff) return `${c.desc}: ${res.status} ${res.raw.slice(0, 200)}`;
  if (!String(res.headers['content-type'] ?? '').startsWith('application/json')) return `${c.desc}: content-type ${res.headers['content-type']}`;
  if (res.body === undefined) return `${c.desc}: body is not JSON: ${res.raw.slice(0, 200)}`;
  if (!res.headers['x-request-id']) return `${c.desc}: no X-Request-ID`;
  if (res.status === 200) {
    if (!Array.isArray(res.body.items) || typeof res.body.count !== 'number') return `${c.desc}: 200 without items/count`;
    return null;
  }
  if (typeof res.body.error !== 'string' || typeof res.body.message !== 'string' || typeof res.body.detail !== 'string') {
    return `${c.desc}: ${res.status} body lacks error/message/detail: ${res.raw.slice(0, 200)}`;
  }
  if (res.status < 400) return `${c.desc}: unexpected status ${res.status}`;
  return null;
}

describe('fuzz POST /v1/match', () => {
  it('500 random malformed bodies never give a 5xx (but text_mode_unavailable), always a JSON error body', async () => {
    const rng = new Rng(0xf022);
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    for (let i = 0; i < 500; i++) {
      const c = makeCase(rng, i);
      const headers: Record<string, string | undefined> = { 'content-type': c.contentType };
      const res = await h.inject({ method: 'POST', url: '/v1/match', headers, payload: c.payload });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const f = checkAnswer(c, res);
      if (f) failures.push(f);
    }
    console.log(
      `[fuzz] statuses: ${[...statuses.entries()]
        .sort()
        .map(([s, n]) => `${s}×${n}`)
        .join(', ')}`,
    );
    expect(failures.slice(0, 20), `${failures.length} bad answers`).toEqual([]);
  });

  it('random paths and methods never give a 5xx', async () => {
    const rng = new Rng(77);
    const failures: string[] = [];
    const methods = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;
    for (let i = 0; i < 60; i++) {
      const path = rng.pick([
        '/v1/match',
        '/v1/sources',
        '/openapi.json',
        '/docs',
        '/docs/scalar.js?x=1&x=2',
        '/v1/',
        '/v1/match/x',
        '/%ff',
        '/v1/sources?x=1&x=2',
        '/v1//match',
        `/${rng.bytes(8).toString('hex')}`,
      ]);
      const method = rng.pick(methods);
      const res = await h.inject({
        method,
        url: path,
        payload: method === 'GET' || method === 'OPTIONS' ? undefined : JSON.stringify(randomJson(rng)),
        headers: { 'content-type': 'application/json' },
      });
      if (res.status >= 500) failures.push(`${method} ${path}: ${res.status} ${res.raw.slice(0, 200)}`);
      else if (res.status >= 400 && typeof res.body?.error !== 'string') failures.push(`${method} ${path}: ${res.status} ${res.raw.slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
  });

  it('valid random queries at random thresholds answer 200 or a catalogue 422', async () => {
    const rng = new Rng(91);
    const failures: string[] = [];
    for (let i = 0; i < 60; i++) {
      const body: Record<string, unknown> = {
        vector: Array.from({ length: DIM }, () => rng.gauss()),
        min_score: Math.round(rng.uniform(-1, 1) * 1000) / 1000,
        order: rng.chance(0.5) ? 'time' : 'relevance',
        limit: rng.range(1, 100),
        include_edits: rng.chance(0.5),
      };
      const res = await h.match(body);
      if (res.status !== 200 && !(res.status === 422 && res.body?.error === 'too_many_matches' && Number.isInteger(res.body.matched_at_least))) {
        failures.push(`${res.status} ${res.raw.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
