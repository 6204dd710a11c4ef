/**
 * Operations: GET /healthz, GET /readyz (503 not_ready while LMDB holds what the engine or the
 * keyword index lacks), GET /metrics (Prometheus text; who may read it), and the METRICS_LISTEN
 * listener that serves only those three.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { unmetConditions } from '../src/ops/index.js';
import { creditsOf } from '../src/platform/index.js';
import { Store, type RevisionInput } from '../src/store/index.js';
import { SMALL, expectError, startHarness, type Harness } from './helpers/service.js';

const CORPUS = { ...SMALL, articles: 20 };

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ corpus: CORPUS });
});

afterAll(async () => {
  await h?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A unit vector, different for each `seed`. */
function unitVector(seed: number): Float32Array {
  const v = new Float32Array(1024);
  for (let i = 0; i < v.length; i++) v[i] = Math.sin(seed * 7.31 + i * 0.173);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** `n` new articles of `chunks` chunks each, written through a second LMDB handle: another process's import. */
async function writeBeside(h: Harness, n: number, chunks: number, tag: string): Promise<void> {
  const other = new Store(join(h.env.DATA_DIR, 'lmdb'));
  try {
    const inputs: RevisionInput[] = Array.from({ length: n }, (_, i) => ({
      url: `https://ops.example/${tag}/${i}`,
      source: 'Ops Wire',
      sourceHomepage: 'https://ops.example/',
      title: `Ops story ${tag} ${i}`,
      body: 'A snippet.',
      text: 'A text.',
      publishedAt: 1_736_000_000 + i,
      chunks: Array.from({ length: chunks }, (_, c) => ({ text: `chunk ${c}`, vector: unitVector(i * 10 + c) })),
    }));
    const outcomes = other.writeRevisions(inputs);
    expect(outcomes.every((o) => o.status === 'new')).toBe(true);
  } finally {
    await other.close();
  }
}

async function readyWithin(h: Harness, ms: number): Promise<number> {
  const deadline = Date.now() + ms;
  let status = 0;
  while (Date.now() < deadline) {
    status = (await h.inject({ url: '/readyz', noAuth: true })).status;
    if (status === 200) return status;
    await sleep(20);
  }
  return status;
}

/** The sample lines of one metric name (`name` or `name{…}`), without HELP/TYPE. */
const samples = (text: string, name: string) => text.split('\n').filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));

async function scrape(h: Harness): Promise<string> {
  const res = await h.inject({ url: '/metrics', headers: h.bearerHeaders, noAuth: true });
  expect(res.status, res.raw).toBe(200);
  return res.raw;
}

describe('GET /healthz', () => {
  it('is 200 {"status":"ok"} with no key, and reads neither the store nor the engine', async () => {
    const refresh = vi.spyOn(h.service.store, 'refresh');
    const stats = vi.spyOn(h.service.engine, 'stats');
    try {
      const res = await h.inject({ url: '/healthz', noAuth: true });
      expect(res.status, res.raw).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
      expect(res.headers['x-request-id']).toBeTruthy();
      expect(refresh).not.toHaveBeenCalled();
      expect(stats).not.toHaveBeenCalled();
    } finally {
      refresh.mockRestore();
      stats.mockRestore();
    }
  });
});

describe('GET /readyz', () => {
  it('is 200 {"status":"ready"} with no key once everything is caught up', async () => {
    const res = await h.inject({ url: '/readyz', noAuth: true });
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toEqual({ status: 'ready' });
  });

  it('is 503 not_ready naming both lags after another process imports, then catches up by itself', async () => {
    await writeBeside(h, 3, 2, 'both');
    const res = await h.inject({ url: '/readyz', noAuth: true });
    expectError(res, 503, 'not_ready');
    expect(res.body.message).toContain('the search engine is 6 chunks behind LMDB');
    expect(res.body.message).toContain('the keyword index is 3 records behind LMDB');
    // No path, no key in what a load balancer logs.
    expect(res.raw).not.toContain(h.dir);
    // No request but the probe's: the probe started the catch-up.
    expect(await readyWithin(h, 10_000)).toBe(200);
    expect(h.service.engine.stats().nextLabel).toBe(h.service.store.nextLabel());
  });

  it('names only the keyword index when the new revisions carry no chunks (text mode off)', async () => {
    await writeBeside(h, 2, 0, 'text-only');
    const res = await h.inject({ url: '/readyz', noAuth: true });
    expectError(res, 503, 'not_ready');
    expect(res.body.message).toBe('not ready: the keyword index is 2 records behind LMDB');
    expect(await readyWithin(h, 10_000)).toBe(200);
  });

  it('names a configured model that did not load', () => {
    const service = { ...h.service, config: { ...h.service.config, modelDir: '/models/bge-m3' }, embedder: null };
    expect(unmetConditions(service)).toEqual(['text mode is configured but the bge-m3 model is not loaded']);
    expect(unmetConditions(h.service)).toEqual([]);
  });
});

describe('GET /metrics: who may read it', () => {
  it('needs a key (401), and a gateway, customer or scoped key is 403', async () => {
    expectError(await h.inject({ url: '/metrics', noAuth: true }), 401, 'unauthorized');
    expectError(await h.inject({ url: '/metrics' }), 403, 'forbidden');
    const account = h.service.billing.createAccount('customer').id;
    const customer = h.service.keys.create({ scheme: 'bearer', account });
    expectError(await h.inject({ url: '/metrics', headers: { authorization: `Bearer ${customer.secret}` }, noAuth: true }), 403, 'forbidden');
    const scoped = h.service.keys.create({ scheme: 'bearer', scopes: ['match'] });
    expectError(await h.inject({ url: '/metrics', headers: { authorization: `Bearer ${scoped.secret}` }, noAuth: true }), 403, 'forbidden');
  });

  it('an operator Bearer key reads Prometheus text', async () => {
    const res = await h.inject({ url: '/metrics', headers: h.bearerHeaders, noAuth: true });
    expect(res.status, res.raw).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.raw).toContain('# TYPE newsmatch_http_requests_total counter');
  });

  it('is open with METRICS_PUBLIC=on (and only /metrics changes)', async () => {
    const p = await startHarness({ corpus: null, env: { METRICS_PUBLIC: 'on' } });
    try {
      const res = await p.inject({ url: '/metrics', noAuth: true });
      expect(res.status, res.raw).toBe(200);
      expect(res.raw).toContain('newsmatch_engine_rows');
      expectError(await p.inject({ url: '/v1/sources', noAuth: true }), 401, 'unauthorized');
    } finally {
      await p.close();
    }
  });
});

describe('GET /metrics: what it says', () => {
  it('counts requests by route pattern and status, never by raw URL', async () => {
    for (let i = 0; i < 3; i++) expect((await h.inject({ url: '/v1/sources' })).status).toBe(200);
    // A refused query string, and a path no route has: their text must not become a label.
    expect((await h.inject({ url: '/v1/sources?secret_token=abc123' })).status).toBeGreaterThanOrEqual(400);
    expect((await h.inject({ url: '/private/probe-xyz?q=1' })).status).toBe(404);
    const text = await scrape(h);
    expect(samples(text, 'newsmatch_http_requests_total')).toContain('newsmatch_http_requests_total{method="GET",route="/v1/sources",status="200"} 3');
    expect(text).toMatch(/newsmatch_http_requests_total\{method="GET",route="\/v1\/sources",status="4\d\d"\} 1\n/);
    expect(text).toContain('newsmatch_http_requests_total{method="GET",route="unmatched",status="404"} 1');
    expect(text).toContain('newsmatch_http_request_duration_seconds_count{method="GET",route="/v1/sources"} 4');
    expect(text).toContain('newsmatch_http_request_duration_seconds_bucket{method="GET",route="/v1/sources",le="+Inf"} 4');
    for (const leaked of ['secret_token', 'abc123', 'probe-xyz', 'q=1']) expect(text).not.toContain(leaked);
  });

  it('reads the engine, the event loop and the lags at scrape time', async () => {
    const text = await scrape(h);
    expect(samples(text, 'newsmatch_engine_rows')).toEqual([`newsmatch_engine_rows ${h.service.engine.stats().nextLabel}`]);
    expect(h.service.engine.stats().nextLabel).toBeGreaterThan(0);
    expect(samples(text, 'newsmatch_engine_index_pending_rows')).toHaveLength(1);
    expect(samples(text, 'newsmatch_engine_behind_chunks')).toEqual(['newsmatch_engine_behind_chunks 0']);
    expect(samples(text, 'newsmatch_keyword_behind_records')).toEqual(['newsmatch_keyword_behind_records 0']);
    expect(samples(text, 'nodejs_eventloop_lag_seconds')).toHaveLength(1);
    expect(samples(text, 'nodejs_eventloop_lag_p99_seconds')).toHaveLength(1);
    // Text mode is off: no embedding queue to report.
    expect(samples(text, 'newsmatch_embed_queue_depth')).toEqual([]);

    await writeBeside(h, 1, 3, 'gauge');
    expect(samples(await scrape(h), 'newsmatch_engine_behind_chunks')).toEqual(['newsmatch_engine_behind_chunks 3']);
    expect(await readyWithin(h, 10_000)).toBe(200);
  });

  it('counts top-k plans, billing commits and credits charged by product', async () => {
    const vector = Array.from(unitVector(1));
    expect((await h.match({ vector, order: 'relevance', limit: 3 })).status).toBe(200);
    const account = h.service.billing.createAccount('payer').id;
    const payer = h.service.keys.create({ scheme: 'bearer', account });
    for (let i = 0; i < 2; i++)
      expect((await h.inject({ url: '/v1/sources', headers: { authorization: `Bearer ${payer.secret}` }, noAuth: true })).status).toBe(200);
    const text = await scrape(h);
    const plans = samples(text, 'newsmatch_engine_topk_plans_total').map((l) => Number(l.split(' ')[1]));
    expect(plans.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
    expect(text).toContain(`newsmatch_credits_charged_total{product="sources"} ${2 * creditsOf('sources')}`);
    const commits = Number(samples(text, 'newsmatch_billing_commit_seconds_count')[0]?.split(' ')[1]);
    expect(commits).toBeGreaterThanOrEqual(1);
  });

  it('counts outlet polls by outlet and result', async () => {
    h.service.outlets.add({ name: 'Dead Feed', homepage: 'https://dead.example/', feeds: ['http://127.0.0.1:1/rss'] });
    const poller = h.service.createPoller();
    try {
      const [report] = await poller.round({ force: true });
      expect(report.errors.length).toBeGreaterThan(0);
    } finally {
      await poller.stop();
    }
    const text = await scrape(h);
    expect(text).toContain('newsmatch_ingest_outlet_polls_total{outlet="Dead Feed",result="failed"} 1');
    expect(text).toContain('newsmatch_ingest_outlet_polls_total{outlet="Dead Feed",result="ok"} 0');
  });
});

describe('METRICS_LISTEN', () => {
  let m: Harness;
  let base: string;

  beforeAll(async () => {
    m = await startHarness({ corpus: null, env: { METRICS_LISTEN: '127.0.0.1:0' } });
    base = (await m.app.ops.listen())!;
  });

  afterAll(async () => {
    await m?.close();
  });

  it('serves /metrics, /healthz and /readyz with no key', async () => {
    expect((await m.inject({ url: '/v1/sources' })).status).toBe(200);
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    // The main port's requests, not the listener's own.
    expect(await metrics.text()).toContain('newsmatch_http_requests_total{method="GET",route="/v1/sources",status="200"} 1');
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: 'ready' });
  });

  it('answers 404 not_found in the catalogue shape for everything else', async () => {
    for (const path of ['/v1/sources', '/openapi.json', '/v1/match']) {
      const res = await fetch(`${base}${path}`, { headers: m.gatewayHeaders });
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = await res.json();
      expect(body).toEqual({ error: 'not_found', message: expect.stringContaining(path), detail: expect.any(String) });
    }
  });

  it('the main port still needs the operator key for /metrics', async () => {
    expectError(await m.inject({ url: '/metrics', noAuth: true }), 401, 'unauthorized');
  });

  it('closes with the app', async () => {
    const other = await startHarness({ corpus: null, env: { METRICS_LISTEN: '127.0.0.1:0' } });
    const at = (await other.app.ops.listen())!;
    expect((await fetch(`${at}/healthz`)).status).toBe(200);
    await other.close();
    await expect(fetch(`${at}/healthz`)).rejects.toThrow();
  });
});

describe('OpenAPI and settings', () => {
  it('/openapi.json describes the three routes', async () => {
    const doc = (await h.inject({ url: '/openapi.json', noAuth: true })).body;
    expect(doc.paths['/healthz'].get.responses['200']).toBeDefined();
    expect(doc.paths['/readyz'].get.responses['503']).toBeDefined();
    expect(doc.paths['/metrics'].get.responses['200'].content['text/plain']).toBeDefined();
    expect(doc.paths['/metrics'].get.security).toEqual([{ bearer: [] }]);
    expect(doc.paths['/healthz'].get.security).toEqual([]);
  });

  it('METRICS_LISTEN is host:port; METRICS_PUBLIC is on or off', () => {
    expect(loadConfig({}).metricsListen).toBeUndefined();
    expect(loadConfig({}).metricsPublic).toBe('off');
    expect(loadConfig({ METRICS_LISTEN: '10.0.0.5:9464' }).metricsListen).toEqual({ host: '10.0.0.5', port: 9464 });
    expect(loadConfig({}, { METRICS_LISTEN: '[::1]:9464' }).metricsListen).toEqual({ host: '::1', port: 9464 });
    for (const bad of ['9464', ':9464', 'localhost:99999', 'http://x:1', '::1:9464']) {
      expect(() => loadConfig({ METRICS_LISTEN: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ METRICS_LISTEN: bad }), bad).toThrow('METRICS_LISTEN');
    }
    expect(() => loadConfig({ METRICS_PUBLIC: 'yes' })).toThrow('METRICS_PUBLIC');
  });
});
