/**
 * Monitors against an oracle: a generated stream of revisions arrives in batches out of
 * event_time order (late articles), and each monitor's events must hold every revision that
 * became searchable after its creation and reaches its floor under its filters, exactly once,
 * and nothing else (outside the 1e-4 score edge the scan promises). Then credits, plan limits,
 * ownership, bad input, and an event a crash left unpaid.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { MonitorStore, type MonitorEvent, type NewEvent } from '../src/monitors/index.js';
import { openService } from '../src/service.js';
import { Store } from '../src/store/index.js';
import { dot, generateCorpus, randUnit, revisionLine, writeLines, type ArticleRec, type Corpus, type RevisionRec } from './helpers/corpus.js';
import { EDGE, makeQuery, oracle, pickMinScore, rowKey, vec, type Filters } from './helpers/oracle.js';
import { Rng } from './helpers/rng.js';
import { commitEvents } from './helpers/monitors.js';
import { expectError, makeTempDir, startHarness, type Harness } from './helpers/service.js';

let h: Harness;
const rng = new Rng(5150);
let corpus: Corpus;
/** Articles imported before any monitor exists, then three groups imported in shuffled batches. */
let before: ArticleRec[];
let later: ArticleRec[];
let account: string;
let auth: Record<string, string>;

const lines = (articles: ArticleRec[]) =>
  articles
    .flatMap((a) => a.revisions)
    .sort((x, y) => x.idx - y.idx)
    .map(revisionLine);

let batchNo = 0;
async function importArticles(articles: ArticleRec[]): Promise<void> {
  const file = join(h.dir, `batch-${batchNo++}.jsonl`);
  writeLines(file, lines(articles));
  await h.service.importFile(file);
  // Matching runs behind an import; pump() resolves once it has caught up.
  await h.service.monitors.pump();
}

beforeAll(async () => {
  h = await startHarness({ corpus: null });
  corpus = generateCorpus({ seed: 6061, articles: 260 });
  const shuffled = rng.shuffle([...corpus.articles]);
  before = shuffled.slice(0, 60);
  later = shuffled.slice(60);
  await importArticles(before);
  const acct = h.service.billing.createAccount('monitoring desk');
  account = acct.id;
  h.service.billing.subscribe(account, 'monitors', 'pro');
  h.service.billing.buy(account, 100_000);
  auth = { authorization: `Bearer ${h.service.keys.create({ scheme: 'bearer', account }).secret}` };
});

afterAll(async () => {
  await h?.close();
});

const create = (body: unknown, headers = auth) => h.inject({ method: 'POST', url: '/v1/monitors', payload: body, headers, noAuth: true });

function eventsOf(id: string): MonitorEvent[] {
  return h.service.monitorStore.eventsAfter(id, -1, 1_000_000);
}

/** The best cosine of a revision to any of several query vectors (like), in float64. */
function bestOf(rev: RevisionRec, queries: Float64Array[]): number {
  let best = -Infinity;
  for (const c of rev.chunks) for (const q of queries) best = Math.max(best, dot(q, c.raw) * c.invNorm);
  return best;
}

describe('monitors', () => {
  it('deliver every matching revision that arrives after creation exactly once, late ones included, and nothing else', async () => {
    const topic = makeQuery(corpus, rng, 'topic');
    const story = makeQuery(corpus, rng, 'story');
    const offTopic = randUnit(rng);
    const names = corpus.sources.map((s) => s.name);
    const liked = before[0];
    const likedRev = liked.revisions[liked.revisions.length - 1];
    const likeVectors = likedRev.chunks.map((c) => Float64Array.from(c.raw, (x) => x * c.invNorm));
    const specs: { name: string; query: Float64Array | null; filters: Filters; body: Record<string, unknown> }[] = [
      { name: 'topic', query: topic, filters: {}, body: {} },
      { name: 'story with edits', query: story, filters: { include_edits: true }, body: { include_edits: true } },
      { name: 'two sources', query: topic, filters: { sources: names.slice(0, 2) }, body: { sources: names.slice(0, 2) } },
      { name: 'one excluded', query: topic, filters: { exclude_sources: [names[0]] }, body: { exclude_sources: [names[0]] } },
      { name: 'off-topic', query: offTopic, filters: {}, body: {} },
    ];
    const created: { id: string; min: number; spec: (typeof specs)[number] }[] = [];
    for (const spec of specs) {
      const min = spec.name === 'off-topic' ? 0.05 : pickMinScore(corpus, spec.query!, spec.filters, 40);
      const res = await create({ vector: vec(spec.query!), min_score: min, stream: true, ...spec.body });
      expect(res.status, res.raw).toBe(200);
      expect(res.body.secret).toBeNull();
      expect(res.body.monitor.start_seq).toBe(h.service.store.nextLabel());
      created.push({ id: res.body.monitor.id, min, spec });
    }
    const likeMin = 0.3;
    const likedOrd = h.service.store.articles.get(liked.url)!.ords[0];
    const likeRes = await create({ like: h.service.store.revisions.get(likedOrd)!.id, min_score: likeMin, stream: true });
    expect(likeRes.status, likeRes.raw).toBe(200);

    // Later articles arrive in six batches whose event_times interleave: most batches hold
    // articles older than the newest one already delivered.
    const batches: ArticleRec[][] = [[], [], [], [], [], []];
    later.forEach((a, i) => batches[i % 6].push(a));
    for (const b of batches) await importArticles(b);
    const laterRevs = new Set(later.flatMap((a) => a.revisions.map((r) => r.idx)));

    let late = 0;
    for (const { id, min, spec } of created) {
      const events = eventsOf(id);
      const got = events.flatMap((e) => e.items.map((i) => rowKey(i.source_url, i.event_time)));
      expect(new Set(got).size, `${spec.name}: a revision delivered twice`).toBe(got.length);
      const rows = oracle(corpus, spec.query, { ...spec.filters, min_score: min }).filter((r) => laterRevs.has(r.rev.idx));
      const want = new Set(rows.map((r) => r.key));
      const scores = new Map(
        oracle(corpus, spec.query, { ...spec.filters, min_score: -1 })
          .filter((r) => laterRevs.has(r.rev.idx))
          .map((r) => [r.key, r.score!]),
      );
      for (const k of got) if (!want.has(k)) expect(Math.abs((scores.get(k) ?? -2) - min), `${spec.name}: ${k} is not a match`).toBeLessThan(EDGE);
      for (const k of want) if (!got.includes(k)) expect(Math.abs(scores.get(k)! - min), `${spec.name}: ${k} was missed`).toBeLessThan(EDGE);
      if (spec.name !== 'off-topic') expect(want.size, spec.name).toBeGreaterThan(5);
      // Events in ingest order, each charged a credit a match, items newest first.
      for (let i = 0; i < events.length; i++) {
        const e = events[i];
        expect(e.paid).toBe(true);
        expect(e.credits).toBe(e.items.length);
        if (i > 0) expect(e.seq).toBeGreaterThan(events[i - 1].seq);
        const times = e.items.map((x) => Date.parse(x.event_time));
        expect([...times].sort((a, b) => b - a)).toEqual(times);
        if (i > 0 && Math.min(...times) < Math.max(...events[i - 1].items.map((x) => Date.parse(x.event_time)))) late++;
      }
    }
    expect(late, 'no event held an article older than one delivered before it').toBeGreaterThan(0);

    // like: the best cosine to any of the article's chunks; its own later revisions left out.
    const likeEvents = eventsOf(likeRes.body.monitor.id);
    const likeGot = likeEvents.flatMap((e) => e.items.map((i) => rowKey(i.source_url, i.event_time)));
    const likeWant = corpus.revisions.filter((r) => laterRevs.has(r.idx) && r.isFirst && r.url !== liked.url && bestOf(r, likeVectors) >= likeMin);
    expect(new Set(likeGot).size).toBe(likeGot.length);
    expect(likeGot.sort()).toEqual(likeWant.map((r) => rowKey(r.url, r.eventTime)).sort());

    // Every match cost a credit of the monitors product.
    const all = [...created.map((c) => c.id), likeRes.body.monitor.id].flatMap(eventsOf);
    const charged = all.reduce((n, e) => n + e.items.length, 0);
    expect(h.service.billing.balance(account)).toBe(100_000 + 250 - charged);
    const summary = h.service.billing.summary(account).subscriptions.find((s) => s.product === 'monitors')!;
    expect(summary.used).toBe(charged);
  });

  it('lists, shows and deletes only the account’s own monitors (another account’s id is 404)', async () => {
    const list = await h.inject({ url: '/v1/monitors', headers: auth, noAuth: true });
    expect(list.status, list.raw).toBe(200);
    expect(list.body.count).toBe(6);
    const id = list.body.items[0].id;
    const other = h.service.billing.createAccount('other desk');
    const otherAuth = { authorization: `Bearer ${h.service.keys.create({ scheme: 'bearer', account: other.id }).secret}` };
    expect((await h.inject({ url: '/v1/monitors', headers: otherAuth, noAuth: true })).body.count).toBe(0);
    expectError(await h.inject({ url: `/v1/monitors/${id}`, headers: otherAuth, noAuth: true }), 404, 'monitor_not_found');
    expectError(await h.inject({ method: 'DELETE', url: `/v1/monitors/${id}`, headers: otherAuth, noAuth: true }), 404, 'monitor_not_found');
    const shown = await h.inject({ url: `/v1/monitors/${id}`, headers: auth, noAuth: true });
    expect(shown.status).toBe(200);
    expect(shown.body.id).toBe(id);
    const gone = await h.inject({ method: 'DELETE', url: `/v1/monitors/${id}`, headers: auth, noAuth: true });
    expect(gone.body).toEqual({ id, deleted: true });
    expect(eventsOf(id)).toEqual([]);
    expectError(await h.inject({ url: `/v1/monitors/${id}`, headers: auth, noAuth: true }), 404, 'monitor_not_found');
    // A gateway key has no account: monitors are Bearer-only.
    expectError(await h.inject({ url: '/v1/monitors', headers: h.gatewayHeaders, noAuth: true }), 403, 'forbidden');
  });

  it('refuses bad input with the catalogue’s codes', async () => {
    const v = vec(randUnit(rng));
    expectError(await create({ vector: v }), 422, 'invalid_request');
    expectError(await create({ vector: v, text: 'x', stream: true }), 422, 'invalid_request');
    expectError(await create({ stream: true }), 422, 'invalid_request');
    expectError(await create({ vector: v, stream: false }), 422, 'invalid_request');
    expectError(await create({ vector: v, stream: true, webhook_url: 'https://hooks.example/x' }), 422, 'invalid_request');
    expectError(await create({ vector: v.slice(1), stream: true }), 422, 'invalid_request');
    expectError(await create({ vector: v.map(() => 0), stream: true }), 422, 'invalid_request');
    expectError(await create({ vector: v, stream: true, sources: ['No Such Paper'] }), 422, 'invalid_request');
    expectError(await create({ vector: v, stream: true, sources: ['a'], exclude_sources: ['b'] }), 422, 'invalid_request');
    expectError(await create({ like: 'no-such-id', stream: true }), 422, 'unknown_article');
    expectError(await create({ text: 'port strikes', stream: true }), 503, 'text_mode_unavailable');
    const raw = (extra: string) =>
      h.inject({
        method: 'POST',
        url: '/v1/monitors',
        payload: `{"vector":${JSON.stringify(v)},"stream":true,${extra}}`,
        headers: { ...auth, 'content-type': 'application/json' },
        noAuth: true,
      });
    expectError(await raw('"__proto__":{"x":1}'), 422, 'invalid_request');
    expectError(await raw('"constructor":{"prototype":{"x":1}}'), 422, 'invalid_request');
    expectError(await create({ vector: v, stream: true, min_score: 2 }), 422, 'invalid_request');
    const res = await h.inject({
      method: 'POST',
      url: '/v1/monitors',
      payload: '{"vector":',
      headers: { ...auth, 'content-type': 'application/json' },
      noAuth: true,
    });
    expectError(res, 400, 'invalid_request');
  });

  it('never answers a fuzzed request with a 5xx: bodies, ids, Last-Event-ID, repeated and prototype parameters', async () => {
    const r = new Rng(404);
    const values: unknown[] = [null, true, 0, -1, 1.5, 1e308, '', 'x', '__proto__', 'constructor', [], {}, [1, 'a'], { a: { b: [] } }, 'a'.repeat(5000)];
    const fields = [
      'text',
      'vector',
      'like',
      'model',
      'min_score',
      'sources',
      'exclude_sources',
      'include_edits',
      'webhook_url',
      'stream',
      '__proto__',
      'constructor',
    ];
    const statuses = new Map<number, number>();
    const seen = (res: { status: number; body: any; raw: string }) => {
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      expect(res.status, res.raw.slice(0, 300)).toBeLessThan(500);
      if (res.status >= 400) expect(typeof res.body?.error, res.raw.slice(0, 300)).toBe('string');
    };
    for (let i = 0; i < 150; i++) {
      const body: Record<string, unknown> = Object.create(null);
      for (const f of fields) if (r.chance(0.3)) body[f] = r.pick(values);
      if (r.chance(0.3)) body.vector = Array.from({ length: r.pick([1024, 1023]) }, () => r.pick([0, 1, -1e308, 1e-320, 0.5]));
      const payload = r.chance(0.1) ? JSON.stringify(body).slice(0, r.int(40)) : JSON.stringify(body);
      seen(await h.inject({ method: 'POST', url: '/v1/monitors', payload, headers: { ...auth, 'content-type': 'application/json' }, noAuth: true }));
    }
    const ids = ['', 'mon_', 'mon_zz', '%00', '..%2F..', '__proto__', 'constructor', 'a'.repeat(200), encodeURIComponent('💥')];
    for (const id of ids) {
      seen(await h.inject({ url: `/v1/monitors/${id}`, headers: auth, noAuth: true }));
      seen(await h.inject({ method: 'DELETE', url: `/v1/monitors/${id}`, headers: auth, noAuth: true }));
      seen(await h.inject({ url: `/v1/monitors/${id}/deliveries?limit=${r.pick(['0', '5', '-1', 'x', '1e3'])}`, headers: auth, noAuth: true }));
      seen(await h.inject({ method: 'POST', url: `/v1/monitors/${id}/resume`, headers: auth, noAuth: true }));
    }
    const mine = (await h.inject({ url: '/v1/monitors', headers: auth, noAuth: true })).body.items[0].id;
    for (const q of ['limit=5&limit=6', '__proto__=1', 'constructor=x', 'before=yesterday', 'before=2026-01-01T00:00:00Z&x=1', 'limit=101']) {
      seen(await h.inject({ url: `/v1/monitors/${mine}/deliveries?${q}`, headers: auth, noAuth: true }));
    }
    for (const last of ['-1', '1.5', '99999999999999999999', 'x']) {
      seen(await h.inject({ url: `/v1/monitors/${mine}/events`, headers: { ...auth, 'last-event-id': last }, noAuth: true }));
    }
    seen(await h.inject({ url: '/v1/monitors?__proto__=1', headers: auth, noAuth: true }));
    console.log(`[fuzz monitors] statuses: ${[...statuses].map(([k, v]) => `${k}×${v}`).join(', ')}`);
  });

  it('holds to the plan: a count of monitors, and matches a period; a wallet that cannot pay pauses the monitor', async () => {
    const small = h.service.billing.createAccount('small desk');
    const smallAuth = { authorization: `Bearer ${h.service.keys.create({ scheme: 'bearer', account: small.id }).secret}` };
    // Not subscribed (an account made before monitors existed, or unsubscribed).
    h.service.billing.subscribe(small.id, 'monitors', 'none');
    expectError(await create({ vector: vec(randUnit(rng)), stream: true }, smallAuth), 403, 'not_subscribed');
    h.service.billing.subscribe(small.id, 'monitors', 'free');
    const topic = corpus.topicCentroids[0];
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await create({ vector: vec(topic), min_score: -1, stream: true }, smallAuth);
      expect(res.status, res.raw).toBe(200);
      ids.push(res.body.monitor.id);
    }
    expectError(await create({ vector: vec(topic), stream: true }, smallAuth), 403, 'monitor_limit');
    // 250 free credits; three monitors matching everything (min_score -1) spend them at once.
    const extra = corpus.articles.slice(0, 100).map((a, i) => ({ ...a, url: `${a.url}-again-${i}` }));
    const file = join(h.dir, 'again.jsonl');
    writeLines(
      file,
      extra.map((a) => {
        const r = a.revisions[0];
        return JSON.parse(revisionLine({ ...r, url: a.url }));
      }),
    );
    await h.service.importFile(file);
    await h.service.monitors.pump();
    const views = await Promise.all(ids.map((id) => h.inject({ url: `/v1/monitors/${id}`, headers: smallAuth, noAuth: true })));
    const delivered = ids.flatMap(eventsOf).reduce((n, e) => n + e.items.length, 0);
    expect(delivered).toBeLessThanOrEqual(250);
    expect(h.service.billing.balance(small.id)).toBe(250 - delivered);
    const paused = views.filter((v) => v.body.status === 'paused');
    expect(paused.length).toBeGreaterThan(0);
    expect(paused[0].body.paused_reason).toMatch(/quota_exceeded/);
    expect(paused[0].body.paused_seq).toBeGreaterThanOrEqual(paused[0].body.start_seq);
    // Resumed, it matches from what is searchable now.
    const resumed = await h.inject({ method: 'POST', url: `/v1/monitors/${paused[0].body.id}/resume`, headers: smallAuth, noAuth: true });
    expect(resumed.status, resumed.raw).toBe(200);
    expect(resumed.body.status).toBe('active');
    expect(resumed.body.start_seq).toBe(h.service.store.nextLabel());
  });

  it('charges a window a crash left unpaid on the next start, once, even if its debit had landed', async () => {
    const res = await create({ vector: vec(randUnit(rng)), min_score: 0.9, stream: true });
    const id = res.body.monitor.id;
    const store = h.service.monitorStore;
    // Two windows whose events refer to a stored revision, written as the pump writes them, then
    // a crash before they are charged (the last test here: the windows run past the sequence).
    const ord = h.service.store.nextOrd() - 1;
    const label = h.service.store.revisions.get(ord)!.labelStart;
    const through = store.through()!;
    const ev: NewEvent = { monitor: id, ords: [ord, ord], labels: [label, label], scores: [0.95, 0.95] };
    const [a, b] = [through + 1, through + 2];
    await commitEvents(store, a, through, Date.now(), [ev]);
    await commitEvents(store, b, a, Date.now(), [ev]);
    expect(store.eventsAfter(id, -1, 10)).toEqual([]);
    // b's debit landed before the crash; a's did not.
    await h.service.billing.charge(account, 'monitors', { requestId: `mwin_${b}`, keyId: 'k' }, 2);
    const balance = h.service.billing.balance(account);
    await h.reopen();
    const after = h.service.monitorStore.eventsAfter(id, -1, 10);
    expect(after.map((e) => [e.seq, e.paid, e.credits])).toEqual([
      [a, true, 2],
      [b, true, 2],
    ]);
    expect(h.service.billing.balance(account)).toBe(balance - 2);
    expect(h.service.monitorStore.unpaidBills()).toEqual([]);
  });
});

describe('a start that fails while monitors open', () => {
  it('closes what it had opened, so the next start in the same process succeeds', async () => {
    const dir = makeTempDir();
    const config = loadConfig({ DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'silent' });
    try {
      await (await openService(config)).close();
      // A window record that cannot be read, with an unpaid bill: recovery reads it at start.
      const edit = async (f: (m: MonitorStore) => Promise<unknown>) => {
        const store = new Store(join(dir, 'data', 'lmdb'));
        await f(new MonitorStore(store));
        await store.close();
      };
      await edit(async (m) => {
        await m.windows.put(7, Buffer.from([1, 2, 3]));
        await m.bills.put([7, 'acct_x'], 'unpaid');
      });
      await expect(openService(config)).rejects.toThrow();
      await edit((m) => m.bills.remove([7, 'acct_x']));
      // The failed start released the engine's directory lock and LMDB: this one opens.
      const svc = await openService(config);
      expect(svc.monitorStore.unpaidBills()).toEqual([]);
      await svc.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('matching behind a burst of imports (MONITOR_YIELD_MS)', () => {
  const importSome = async (harness: Harness, seed: number) => {
    const file = join(harness.dir, `yield-${seed}.jsonl`);
    writeLines(file, lines(generateCorpus({ seed, articles: 12 }).articles));
    await harness.service.importFile(file);
  };

  it('waits while an import is in flight, then matches all of it', async () => {
    const y = await startHarness({ corpus: null, env: { MONITOR_YIELD_MS: '600000' } });
    try {
      const start = y.service.monitorStore.through();
      const release = y.service.monitors.hold();
      await importSome(y, 71);
      let caughtUp = false;
      const pumped = y.service.monitors.pump().then(() => {
        caughtUp = true;
      });
      // The import returned and kicked the pump, but another one is in flight: nothing is matched.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(caughtUp).toBe(false);
      expect(y.service.monitorStore.through()).toBe(start);
      release();
      await pumped;
      expect(y.service.monitorStore.through()).toBeGreaterThan(start ?? 0);
      expect(y.service.monitorStore.through()).toBe(y.service.catalog.boundary(y.service.catalog.labels, y.service.store));
    } finally {
      await y.close();
    }
  });

  it('waits at most MONITOR_YIELD_MS: imports that never stop are still matched', async () => {
    const y = await startHarness({ corpus: null, env: { MONITOR_YIELD_MS: '20' } });
    try {
      const start = y.service.monitorStore.through() ?? 0;
      y.service.monitors.hold();
      await importSome(y, 72);
      // Never released: the pump resolves once it has matched what is in reach anyway.
      await y.service.monitors.pump();
      expect(y.service.monitorStore.through()).toBeGreaterThan(start);
    } finally {
      await y.close();
    }
  });
});
