/**
 * POST /v1/match with order=relevance: the top `limit` rows by score (rule 3), no cursor,
 * filters applied before ranking (rules 4 and 12), and its two errors (rules 6 and 7).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Corpus } from './helpers/corpus.js';
import { checkItems, SCORE_TOL } from './helpers/checks.js';
import { itemKey, makeQuery, oracleByScore, vec, type Filters, type QueryKind } from './helpers/oracle.js';
import { Rng } from './helpers/rng.js';
import { FULL, expectError, startHarness, type Harness } from './helpers/service.js';

let h: Harness;
let corpus: Corpus;

beforeAll(async () => {
  h = await startHarness({ corpus: FULL, env: { EXACT_SCAN_MAX_CHUNKS: '0' } });
  corpus = h.corpus!;
});

afterAll(async () => {
  await h?.close();
});

/**
 * The page equals the oracle's top `limit`: scores pairwise within 1e-3, everything clearly
 * above the cut is present, nothing clearly below it is, and the items are best-first.
 */
async function expectTop(q: Float64Array, f: Filters, limit: number, extra: Record<string, unknown> = {}): Promise<any[]> {
  const body = { vector: vec(q), order: 'relevance', limit, min_score: f.min_score ?? -1, ...filtersToBody(f), ...extra };
  const res = await h.match(body);
  expect(res.status, res.raw).toBe(200);
  expect(res.body.order).toBe('relevance');
  expect(res.body.model).toBe('bge-m3');
  expect(res.body.next_cursor ?? null).toBeNull();
  const items: any[] = res.body.items;
  expect(res.body.count).toBe(items.length);
  const ranked = oracleByScore(corpus, q, { ...f, min_score: f.min_score ?? -1 });
  const top = ranked.slice(0, limit);
  expect(items.length).toBe(top.length);
  items.forEach((it, i) => {
    expect(Math.abs(it.score - (top[i].score as number)), `rank ${i + 1}: got ${it.score}, oracle ${top[i].score}`).toBeLessThanOrEqual(SCORE_TOL);
    if (i > 0) expect(it.score).toBeLessThanOrEqual(items[i - 1].score + 1e-9);
  });
  if (top.length > 0) {
    const cut = top[top.length - 1].score as number;
    const got = new Set(items.map(itemKey));
    for (const r of ranked) {
      if ((r.score as number) > cut + SCORE_TOL) expect(got.has(r.key), `missing ${r.key} (score ${r.score})`).toBe(true);
    }
    const allowed = new Set(ranked.filter((r) => (r.score as number) >= cut - SCORE_TOL).map((r) => r.key));
    for (const k of got) expect(allowed.has(k), `${k} is not in the oracle's top ${limit}`).toBe(true);
  }
  checkItems(corpus, q, items);
  return items;
}

function filtersToBody(f: Filters): Record<string, unknown> {
  const b: Record<string, unknown> = {};
  for (const k of ['since', 'until', 'sources', 'exclude_sources', 'include_edits'] as const) if (f[k] !== undefined) b[k] = f[k];
  return b;
}

describe('vector + order=relevance', () => {
  it('returns the oracle top `limit` by score for many queries and limits (rule 3)', async () => {
    const rng = new Rng(202);
    const kinds: QueryKind[] = ['topic', 'story', 'chunk', 'topic', 'story', 'chunk', 'chunk', 'topic'];
    const limits = [50, 10, 100, 1, 50, 25, 100, 50];
    for (let i = 0; i < kinds.length; i++) {
      await expectTop(makeQuery(corpus, rng, kinds[i]), {}, limits[i]);
    }
  });

  it('applies the default limit (50) and the default min_score (0.5)', async () => {
    const q = makeQuery(corpus, new Rng(203), 'topic');
    const res = await h.match({ vector: vec(q), order: 'relevance' });
    expect(res.status, res.raw).toBe(200);
    const ranked = oracleByScore(corpus, q, { min_score: 0.5 });
    expect(res.body.count).toBe(Math.min(50, ranked.length));
    for (const it of res.body.items) expect(it.score).toBeGreaterThanOrEqual(0.5 - 1e-6);
  });

  it('min_score is a floor in relevance order too', async () => {
    const q = makeQuery(corpus, new Rng(204), 'chunk');
    const ranked = oracleByScore(corpus, q, { min_score: -1 });
    // A floor between the 5th and 6th best.
    const min = ((ranked[4].score as number) + (ranked[5].score as number)) / 2;
    const items = await expectTop(q, { min_score: min }, 50);
    expect(items.length).toBe(5);
  });

  it('include_edits=true ranks every revision, each scored by its own chunks', async () => {
    await expectTop(makeQuery(corpus, new Rng(205), 'story'), { include_edits: true }, 60);
  });

  it("a revision's score uses only its own chunks: an edit-only chunk scores the edit, not the first version", async () => {
    // A chunk that exists only in an edit (its rewritten headline).
    const edit = corpus.revisions.find((r) => !r.isFirst)!;
    const first = edit.article.revisions[0];
    const c = edit.chunks[0];
    expect(first.chunks.some((x) => x.raw === c.raw)).toBe(false);
    const q = Float64Array.from(c.raw);

    const withEdits = await h.match({ vector: vec(q), order: 'relevance', include_edits: true, min_score: -1, limit: 5 });
    expect(withEdits.status, withEdits.raw).toBe(200);
    expect(withEdits.body.items[0].source_url).toBe(edit.url);
    expect(withEdits.body.items[0].event_time).toBe(edit.eventTime);
    expect(withEdits.body.items[0].score).toBeGreaterThan(0.999);
    expect(withEdits.body.items[0].best_chunk).toBe(c.text);

    const firstOnly = await expectTop(q, { min_score: -1 }, 100);
    const row = firstOnly.find((i) => i.source_url === first.url);
    expect(row, 'the first version still ranks near the top by its own chunks').toBeDefined();
    expect(row.event_time).toBe(first.eventTime);
    expect(row.score).toBeLessThan(0.99);
    expect(row.best_chunk).not.toBe(c.text);
  });

  it('since/until apply before ranking: a narrow window answers the best within it, not an empty page (rule 4)', async () => {
    const rng = new Rng(206);
    const q = makeQuery(corpus, rng, 'topic');
    // Two days in the middle of the corpus: few of the global top fall inside.
    const since = '2025-01-20T00:00:00Z';
    const until = '2025-01-21T23:59:59Z';
    const globalTop = oracleByScore(corpus, q, { min_score: -1 }).slice(0, 20);
    const inWindow = globalTop.filter((r) => r.rev.eventTime >= since && r.rev.eventTime <= until).length;
    expect(inWindow).toBeLessThan(20);
    const items = await expectTop(q, { since, until, min_score: -1 }, 20);
    expect(items.length).toBe(20);
    for (const it of items) {
      expect(it.event_time >= since && it.event_time <= until).toBe(true);
    }
  });

  it('sources and exclude_sources compose with the query (rule 12)', async () => {
    const rng = new Rng(207);
    await expectTop(makeQuery(corpus, rng, 'topic'), { sources: ['Café Économie'] }, 30);
    await expectTop(makeQuery(corpus, rng, 'story'), { sources: ['Wire One', 'Metro Courier'] }, 50);
    await expectTop(makeQuery(corpus, rng, 'chunk'), { exclude_sources: ['Daily Ledger', 'Wire One'] }, 50);
    const items = await expectTop(
      makeQuery(corpus, rng, 'topic'),
      { exclude_sources: ['Daily Ledger'], include_edits: true, since: '2025-01-10T00:00:00Z' },
      40,
    );
    for (const it of items) expect(it.source_name).not.toBe('Daily Ledger');
  });

  it('a selective source filter is not under-filled in relevance order (rule 11)', async () => {
    const q = makeQuery(corpus, new Rng(208), 'topic');
    const n = corpus.articles.filter((a) => a.source === 'Café Économie').length;
    const items = await expectTop(q, { sources: ['Café Économie'], min_score: -1 }, 100);
    expect(items.length).toBe(Math.min(100, n));
  });

  it('relevance with no query is 422 order_requires_query (rule 6)', async () => {
    expectError(await h.match({ order: 'relevance' }), 422, 'order_requires_query');
    expectError(await h.match({ order: 'relevance', limit: 10, include_edits: true }), 422, 'order_requires_query');
  });

  it('a cursor with relevance is 422 cursor_requires_time_order (rule 7)', async () => {
    const q = makeQuery(corpus, new Rng(209), 'topic');
    const page = await h.match({ vector: vec(q), min_score: -0.5, limit: 5 });
    expect(page.status, page.raw).toBe(200);
    const cursor = page.body.next_cursor;
    expect(typeof cursor).toBe('string');
    expectError(await h.match({ vector: vec(q), min_score: -0.5, limit: 5, order: 'relevance', cursor }), 422, 'cursor_requires_time_order');
    // A well-formed cursor from another request is still a cursor_requires_time_order, not bad_cursor.
    const chrono = await h.match({ limit: 5 });
    const res = await h.match({ order: 'relevance', vector: vec(q), cursor: chrono.body.next_cursor });
    expectError(res, 422, 'cursor_requires_time_order');
  });
});
