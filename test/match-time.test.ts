/**
 * POST /v1/match in time order: the no-query chronological walk (exact) and vector queries
 * (every row at or above min_score, newest-first, paged by cursor), against the oracle.
 * Spec 4.1 rules 1, 2 and 5 (no silent truncation).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Corpus } from './helpers/corpus.js';
import { checkItems, expectFullPages } from './helpers/checks.js';
import { itemKey, makeQuery, oracle, pickMinScore, recallOf, vec, type QueryKind } from './helpers/oracle.js';
import { Rng } from './helpers/rng.js';
import { FULL, expectNewestFirst, startHarness, type Harness } from './helpers/service.js';

let h: Harness;
let corpus: Corpus;

beforeAll(async () => {
  h = await startHarness({ corpus: FULL, env: { EXACT_SCAN_MAX_CHUNKS: '0' } });
  corpus = h.corpus!;
});

afterAll(async () => {
  await h?.close();
});

describe('no query: the corpus newest-first', () => {
  it('a request with no body answers the newest 50 first revisions, unscored, order time (rule 1)', async () => {
    const res = await h.match();
    expect(res.status, res.raw).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['count', 'items', 'model', 'next_cursor', 'order', 'seq']);
    expect(res.body.seq).toBe(h.service.store.nextLabel());
    expect(res.body.model).toBe('bge-m3');
    expect(res.body.order).toBe('time');
    expect(res.body.count).toBe(50);
    expect(res.body.items).toHaveLength(50);
    expect(typeof res.body.next_cursor).toBe('string');
    checkItems(corpus, null, res.body.items);
    const expected = oracle(corpus, null).slice(0, 50);
    expect(res.body.items.map((i: any) => i.event_time)).toEqual(expected.map((r) => r.rev.eventTime));
  });

  it('{} and an empty body with Content-Type: application/json are the empty request', async () => {
    const none = await h.match();
    const empty = await h.inject({ method: 'POST', url: '/v1/match', headers: { 'content-type': 'application/json' }, payload: '' });
    const obj = await h.match({});
    expect(empty.status, empty.raw).toBe(200);
    expect(obj.status, obj.raw).toBe(200);
    const ids = (r: any) => r.body.items.map((i: any) => i.id);
    expect(ids(empty)).toEqual(ids(none));
    expect(ids(obj)).toEqual(ids(none));
  });

  it('pages every first revision to the end: exact, newest-first, no duplicate, no gap, full pages', async () => {
    const { items, pages } = await h.pageAll({}, 100);
    const expected = oracle(corpus, null);
    expect(items.length).toBe(corpus.articles.length);
    expect(items.map(itemKey).sort()).toEqual(expected.map((r) => r.key).sort());
    expect(items.map((i) => i.event_time)).toEqual(expected.map((r) => r.rev.eventTime));
    expectNewestFirst(items);
    expectFullPages(pages);
    checkItems(corpus, null, items);
    // With include_edits=false every row is the first version at its original time.
    for (const it of items) expect(it.event_time).toBe(corpus.articles.find((a) => a.url === it.source_url)!.revisions[0].publishedAt);
  });

  it('include_edits=true pages every revision, edits as their own rows at their revised_at', async () => {
    const { items, pages } = await h.pageAll({ include_edits: true }, [100, 37]);
    const expected = oracle(corpus, null, { include_edits: true });
    expect(items.length).toBe(corpus.revisions.length);
    expect(items.map(itemKey).sort()).toEqual(expected.map((r) => r.key).sort());
    expectNewestFirst(items);
    expectFullPages(pages);
    checkItems(corpus, null, items);
    const edits = corpus.revisions.filter((r) => !r.isFirst);
    expect(edits.length).toBeGreaterThan(100);
    const got = new Set(items.map(itemKey));
    for (const e of edits) expect(got.has(`${e.url}|${e.revisedAt}`)).toBe(true);
  });

  it('min_score is ignored without a query', async () => {
    const a = await h.match({ limit: 30 });
    const b = await h.match({ limit: 30, min_score: 0.99 });
    const c = await h.match({ limit: 30, min_score: -1 });
    expect(b.status, b.raw).toBe(200);
    expect(c.status, c.raw).toBe(200);
    expect(b.body.items).toEqual(a.body.items);
    expect(c.body.items).toEqual(a.body.items);
  });

  it('model is ignored without a query', async () => {
    const a = await h.match({ limit: 5 });
    const b = await h.match({ limit: 5, model: 'some-other-model' });
    expect(b.status, b.raw).toBe(200);
    expect(b.body.items).toEqual(a.body.items);
  });

  it('a tie group in event_time split across pages keeps id-descending order and loses no row', async () => {
    const t = corpus.bigTie;
    const expected = oracle(corpus, null, { since: t, until: t });
    expect(expected.length).toBeGreaterThanOrEqual(7);
    const { items, pages } = await h.pageAll({ since: t, until: t }, 2);
    expect(pages.length).toBeGreaterThanOrEqual(4);
    expect(items.map(itemKey).sort()).toEqual(expected.map((r) => r.key).sort());
    expectNewestFirst(items);
    // The same group paged with limit 3 and 100 gives the same id order.
    const b = await h.pageAll({ since: t, until: t }, 3);
    const c = await h.pageAll({ since: t, until: t }, 100);
    expect(b.items.map((i) => i.id)).toEqual(items.map((i) => i.id));
    expect(c.items.map((i) => i.id)).toEqual(items.map((i) => i.id));
  });

  it('every tie group of the corpus comes back in id-descending order over the whole walk', async () => {
    expect(corpus.tieGroups.length).toBeGreaterThan(20);
    const { items } = await h.pageAll({}, 17);
    expectNewestFirst(items);
    const byTime = new Map<string, number>();
    for (const it of items) byTime.set(it.event_time, (byTime.get(it.event_time) ?? 0) + 1);
    for (const g of corpus.tieGroups) expect(byTime.get(g.eventTime)).toBe(g.size);
  });
});

describe('vector + order=time', () => {
  const plan: { kind: QueryKind; target: number; include_edits?: boolean }[] = [
    { kind: 'topic', target: 60 },
    { kind: 'topic', target: 250 },
    { kind: 'story', target: 120 },
    { kind: 'story', target: 400 },
    { kind: 'chunk', target: 50 },
    { kind: 'chunk', target: 200 },
    { kind: 'topic', target: 300, include_edits: true },
    { kind: 'chunk', target: 150, include_edits: true },
  ];

  it('pages every row at or above min_score: newest-first, no duplicate, no gap, recall 1 outside the 1e-4 edge, exact scores (rule 2)', async () => {
    const rng = new Rng(101);
    let expectedTotal = 0;
    let foundTotal = 0;
    let maxErr = 0;
    const perQuery: string[] = [];
    for (const p of plan) {
      const q = makeQuery(corpus, rng, p.kind);
      const f = { include_edits: p.include_edits ?? false };
      const min = pickMinScore(corpus, q, f, p.target);
      const body = { vector: vec(q), min_score: min, ...(p.include_edits ? { include_edits: true } : {}) };
      const { items, pages } = await h.pageAll(body, 50);
      const rec = recallOf(corpus, q, { ...f, min_score: min }, items.map(itemKey));
      expect(rec.extraneous, 'rows outside the oracle set (below min_score or not matching)').toEqual([]);
      expect(rec.expected).toBeGreaterThanOrEqual(30);
      expect(rec.recall, `${p.kind} query, min_score ${min.toFixed(4)}: every row outside the 1e-4 edge`).toBe(1);
      expectedTotal += rec.expected;
      foundTotal += rec.found;
      perQuery.push(`${p.kind}${p.include_edits ? '+edits' : ''} ${rec.found}/${rec.expected}`);
      for (const it of items) expect(it.score).toBeGreaterThanOrEqual(min - 1e-6);
      maxErr = Math.max(maxErr, checkItems(corpus, q, items));
      expectNewestFirst(items);
      expectFullPages(pages);
      if (!p.include_edits) for (const it of items) expect(it.event_time).toBe(corpus.articles.find((a) => a.url === it.source_url)!.revisions[0].eventTime);
    }
    const recall = foundTotal / expectedTotal;
    console.log(
      `[recall] order=time vector queries: ${foundTotal}/${expectedTotal} = ${(recall * 100).toFixed(2)}% ` +
        `(${perQuery.join(', ')}); max |score - oracle| = ${maxErr.toExponential(2)}`,
    );
    expect(recall).toBe(1);
  });

  it('order defaults to time and model to bge-m3 with a vector (rule 1)', async () => {
    const q = makeQuery(corpus, new Rng(7), 'topic');
    const min = pickMinScore(corpus, q, {}, 80);
    const a = await h.match({ vector: vec(q), min_score: min, limit: 20 });
    const b = await h.match({ vector: vec(q), min_score: min, limit: 20, order: 'time', model: 'bge-m3' });
    expect(a.status, a.raw).toBe(200);
    expect(a.body.order).toBe('time');
    expect(a.body.model).toBe('bge-m3');
    expect(typeof a.body.next_cursor).toBe('string');
    expect(b.body.items).toEqual(a.body.items);
  });

  it('the default min_score is 0.5', async () => {
    const rng = new Rng(8);
    // A story query keeps a moderate number of rows at 0.5.
    let q = makeQuery(corpus, rng, 'story');
    for (let i = 0; i < 20 && oracle(corpus, q, { min_score: 0.5 }).length < 20; i++) q = makeQuery(corpus, rng, 'story');
    const { items } = await h.pageAll({ vector: vec(q) }, 100);
    const rec = recallOf(corpus, q, { min_score: 0.5 }, items.map(itemKey));
    expect(rec.expected).toBeGreaterThanOrEqual(20);
    expect(rec.extraneous).toEqual([]);
    expect(rec.recall).toBe(1);
    for (const it of items) expect(it.score).toBeGreaterThanOrEqual(0.5 - 1e-6);
  });

  it('paging with a limit that changes between pages gives the same rows in the same order', async () => {
    const q = makeQuery(corpus, new Rng(9), 'story');
    const min = pickMinScore(corpus, q, {}, 180);
    const body = { vector: vec(q), min_score: min };
    const steady = await h.pageAll(body, 100);
    const varied = await h.pageAll(body, [7, 50, 1, 100, 23, 2]);
    expect(varied.items.map((i) => i.id)).toEqual(steady.items.map((i) => i.id));
    expect(varied.items.map((i) => i.score)).toEqual(steady.items.map((i) => i.score));
  });

  it('the query vector is normalised by the service: a scaled vector gives the same rows and scores', async () => {
    const q = makeQuery(corpus, new Rng(10), 'topic');
    const min = pickMinScore(corpus, q, {}, 100);
    const a = await h.pageAll({ vector: vec(q), min_score: min }, 100);
    // A power of two, so the normalised vector is bit-identical and the results must be too.
    const scaled = vec(q).map((x) => x * 8);
    const b = await h.pageAll({ vector: scaled, min_score: min }, 100);
    expect(b.items.map((i) => i.id)).toEqual(a.items.map((i) => i.id));
    b.items.forEach((it, i) => expect(Math.abs(it.score - a.items[i].score)).toBeLessThanOrEqual(1e-5));
  });

  it('normalisation does not depend on magnitude: a huge or tiny vector has the same direction', async () => {
    // Squaring 2^540-scaled components overflows a double; squaring 2^-560-scaled ones
    // underflows to 0. Neither vector is zero or non-finite, and each has q's direction.
    const q = makeQuery(corpus, new Rng(13), 'story');
    const min = pickMinScore(corpus, q, {}, 60);
    for (const scale of [2 ** 540, 2 ** -560]) {
      const v = vec(q).map((x) => x * scale);
      expect(v.every((x) => Number.isFinite(x) && x !== 0)).toBe(true);
      const res = await h.match({ vector: v, min_score: min, limit: 100 });
      expect(res.status, `scale 2^${Math.log2(scale)}: ${res.raw}`).toBe(200);
      const rec = recallOf(corpus, q, { min_score: min }, res.body.items.map(itemKey));
      expect(rec.extraneous).toEqual([]);
      expect(rec.recall).toBe(1);
      checkItems(corpus, q, res.body.items);
    }
  });

  it('a min_score above every score answers an empty page with next_cursor null', async () => {
    const q = makeQuery(corpus, new Rng(11), 'topic');
    const res = await h.match({ vector: vec(q), min_score: 0.999 });
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toEqual({ model: 'bge-m3', order: 'time', count: 0, items: [], next_cursor: null, seq: h.service.store.nextLabel() });
  });

  it('an exact chunk vector finds its revision with score 1 and that chunk as best_chunk', async () => {
    const rev = corpus.revisions.find((r) => r.isFirst && r.chunks.length >= 4)!;
    const c = rev.chunks[2];
    const v = Array.from(c.raw);
    const res = await h.match({ vector: v, min_score: 0.99, limit: 100 });
    expect(res.status, res.raw).toBe(200);
    const hit = res.body.items.find((i: any) => i.source_url === rev.url);
    expect(hit, 'the revision owning the chunk').toBeDefined();
    expect(hit.score).toBeGreaterThan(0.999);
    expect(hit.best_chunk).toBe(c.text);
    expect(hit.event_time).toBe(rev.eventTime);
  });

  it('limit 100 is accepted and limit 1 pages one row at a time', async () => {
    const q = makeQuery(corpus, new Rng(12), 'chunk');
    const min = pickMinScore(corpus, q, {}, 40);
    const big = await h.match({ vector: vec(q), min_score: min, limit: 100 });
    expect(big.status, big.raw).toBe(200);
    const ones = await h.pageAll({ vector: vec(q), min_score: min }, 1);
    expect(ones.pages.every((p) => p.count <= 1)).toBe(true);
    expect(ones.items.map((i) => i.id)).toEqual(big.body.items.map((i: any) => i.id));
  });
});
