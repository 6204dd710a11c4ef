/**
 * POST /v1/match with `like` (README, "Query"): the query is the liked article's latest
 * revision's chunk vectors, a revision scores its best cosine over those × its own chunks, and
 * the liked article is left out. Measured against the oracle taken over every query vector.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLines, type ArticleRec, type Corpus, type RevisionRec } from './helpers/corpus.js';
import { SCORE_TOL, revisionOf } from './helpers/checks.js';
import { chunkScores, EDGE, eligible, itemKey, rowKey, scoreAll, vec, type Filters } from './helpers/oracle.js';
import { MEDIUM, expectError, expectItemShape, expectNewestFirst, startHarness, type Harness } from './helpers/service.js';

let h: Harness;
let corpus: Corpus;
/** Every revision's service id, by `${url}|${event_time}`. */
const ids = new Map<string, string>();

beforeAll(async () => {
  // A trained index and no exact-scan shortcut: relevance takes the index path.
  h = await startHarness({ corpus: MEDIUM, env: { EXACT_SCAN_MAX_CHUNKS: '0', INDEX_MIN_CHUNKS: '256' } });
  corpus = h.corpus!;
  for (const it of (await h.pageAll({ include_edits: true }, 100)).items) ids.set(itemKey(it), it.id);
});

afterAll(async () => {
  await h?.close();
});

const idOf = (r: RevisionRec) => ids.get(rowKey(r.url, r.eventTime))!;
const latest = (a: ArticleRec) => a.revisions[a.revisions.length - 1];

/** The liked article's query vectors: its latest revision's chunks, as the oracle takes a query. */
const queries = new Map<ArticleRec, Float64Array[]>();
function queriesOf(a: ArticleRec): Float64Array[] {
  let qs = queries.get(a);
  if (!qs) {
    qs = latest(a).chunks.map((c) => Float64Array.from(c.raw));
    queries.set(a, qs);
  }
  return qs;
}

interface LikeRow {
  rev: RevisionRec;
  key: string;
  score: number;
}

/** The oracle for `like`: every eligible revision but the liked article's, scored by its best over every query vector. */
function likeOracle(a: ArticleRec, f: Filters): LikeRow[] {
  const scores = queriesOf(a).map((q) => scoreAll(corpus, q).score);
  const min = f.min_score ?? 0.5;
  const rows: LikeRow[] = [];
  for (const rev of eligible(corpus, f)) {
    if (rev.url === a.url) continue;
    const score = Math.max(...scores.map((s) => s[rev.idx]));
    if (score >= min) rows.push({ rev, key: rowKey(rev.url, rev.eventTime), score });
  }
  return rows.sort((x, y) => y.score - x.score);
}

/** A min_score keeping about `target` rows, in the widest gap near it (few rows on the edge). */
function pickMin(a: ArticleRec, f: Filters, target: number): number {
  const s = likeOracle(a, { ...f, min_score: -1 }).map((r) => r.score);
  if (s.length <= target) return Math.max(-1, s[s.length - 1] - 0.01);
  let bestGap = -1;
  let at = target;
  for (let k = Math.floor(target * 0.8); k <= Math.min(s.length - 1, Math.ceil(target * 1.2)); k++) {
    if (s[k - 1] - s[k] > bestGap) {
      bestGap = s[k - 1] - s[k];
      at = k;
    }
  }
  return (s[at - 1] + s[at]) / 2;
}

/** Each item's score is its revision's best over every query vector; best_chunk a chunk at that score. */
function checkLikeItems(a: ArticleRec, items: any[]): void {
  for (const it of items) {
    expectItemShape(it, true);
    expect(it.source_url, 'the liked article is left out').not.toBe(a.url);
    const rev = revisionOf(corpus, it)!;
    expect(rev, `${it.source_url} @ ${it.event_time} is a revision of the corpus`).toBeDefined();
    const perChunk = rev.chunks.map((c, i) => ({ text: c.text, score: Math.max(...queriesOf(a).map((q) => chunkScores(rev, q)[i].score)) }));
    const best = Math.max(...perChunk.map((c) => c.score));
    expect(Math.abs(it.score - best), `score of ${it.source_url}: got ${it.score}, oracle ${best}`).toBeLessThanOrEqual(SCORE_TOL);
    expect(perChunk.filter((c) => c.score >= best - SCORE_TOL).map((c) => c.text)).toContain(it.best_chunk);
  }
}

/** Articles to like: several chunks in the latest revision; the first with an edit, so `like` by an older revision's id is tried. */
function likedArticles(): ArticleRec[] {
  const edited = corpus.articles.find((a) => a.revisions.length >= 2 && latest(a).chunks.length >= 3)!;
  const plain = corpus.articles.filter((a) => a.revisions.length === 1 && a.revisions[0].chunks.length >= 3);
  return [edited, plain[3], plain[Math.floor(plain.length / 2)]];
}

/** order=time paged to the end equals the oracle's set outside the 1e-4 edge, newest-first. */
async function expectTimeSet(a: ArticleRec, id: string, f: Filters, limit: number | number[]): Promise<any[]> {
  const { items } = await h.pageAll({ like: id, ...f }, limit);
  const min = f.min_score ?? 0.5;
  const allowed = new Set(likeOracle(a, { ...f, min_score: min - EDGE }).map((r) => r.key));
  const expected = likeOracle(a, { ...f, min_score: min + EDGE }).map((r) => r.key);
  const got = new Set(items.map(itemKey));
  expect(
    items.map(itemKey).filter((k) => !allowed.has(k)),
    'rows outside the oracle set',
  ).toEqual([]);
  expect(
    expected.filter((k) => !got.has(k)),
    'oracle rows missing (recall 1.0 outside the edge)',
  ).toEqual([]);
  expectNewestFirst(items);
  checkLikeItems(a, items);
  return items;
}

/** order=relevance equals the oracle's top `limit` (ties within SCORE_TOL), best first. */
async function expectTop(a: ArticleRec, id: string, f: Filters, limit: number): Promise<any[]> {
  const res = await h.match({ like: id, order: 'relevance', limit, ...f });
  expect(res.status, res.raw).toBe(200);
  expect(res.body.next_cursor ?? null).toBeNull();
  const items: any[] = res.body.items;
  const ranked = likeOracle(a, f);
  const top = ranked.slice(0, limit);
  expect(items.length).toBe(top.length);
  items.forEach((it, i) => {
    expect(Math.abs(it.score - top[i].score), `rank ${i + 1}`).toBeLessThanOrEqual(SCORE_TOL);
    if (i > 0) expect(it.score).toBeLessThanOrEqual(items[i - 1].score + 1e-9);
  });
  if (top.length > 0) {
    const cut = top[top.length - 1].score;
    const got = new Set(items.map(itemKey));
    for (const r of ranked) if (r.score > cut + SCORE_TOL) expect(got.has(r.key), `missing ${r.key} (${r.score})`).toBe(true);
    const allowed = new Set(ranked.filter((r) => r.score >= cut - SCORE_TOL).map((r) => r.key));
    for (const k of got) expect(allowed.has(k), `${k} is not in the oracle's top ${limit}`).toBe(true);
  }
  checkLikeItems(a, items);
  return items;
}

describe('like, order=time', () => {
  it('pages exactly the oracle set (max over the article chunks), through cursors, for several articles', async () => {
    for (const [i, a] of likedArticles().entries()) {
      const min = pickMin(a, {}, [60, 150, 250][i]);
      const items = await expectTimeSet(a, idOf(a.revisions[0]), { min_score: min }, [37, 100, 1, 50]);
      expect(items.length).toBeGreaterThanOrEqual(40);
    }
  });

  it('include_edits ranks every revision but the liked article’s', async () => {
    const a = likedArticles()[0];
    const min = pickMin(a, { include_edits: true }, 200);
    await expectTimeSet(a, idOf(latest(a)), { min_score: min, include_edits: true }, 60);
  });

  it('any revision id of the article is the same query', async () => {
    const a = likedArticles()[0];
    const min = pickMin(a, {}, 80);
    const byFirst = await h.pageAll({ like: idOf(a.revisions[0]), min_score: min }, 100);
    const byLatest = await h.pageAll({ like: idOf(latest(a)), min_score: min }, 100);
    expect(byLatest.items).toEqual(byFirst.items);
  });

  it('a cursor is bound to the liked article', async () => {
    const [a, b] = likedArticles();
    const page = await h.match({ like: idOf(a.revisions[0]), min_score: -1, limit: 2 });
    expect(page.status, page.raw).toBe(200);
    expect(typeof page.body.next_cursor).toBe('string');
    expectError(await h.match({ like: idOf(b.revisions[0]), min_score: -1, limit: 2, cursor: page.body.next_cursor }), 400, 'bad_cursor');
  });
});

describe('like, order=relevance', () => {
  it('answers the oracle top `limit`, on the index', async () => {
    const plans = { ...h.service.search.plans };
    // Limit 1 on an unedited article: every query vector's own best is the article itself, so each must ask for more than 1.
    const limits = [10, 1, 100];
    for (const [i, a] of likedArticles().entries()) await expectTop(a, idOf(a.revisions[0]), { min_score: -1 }, limits[i]);
    await expectTop(likedArticles()[0], idOf(latest(likedArticles()[0])), { min_score: -1, include_edits: true }, 60);
    expect(h.service.search.plans.index + h.service.search.plans['index-then-scan']).toBeGreaterThan(plans.index + plans['index-then-scan']);
  });

  it('min_score is a floor', async () => {
    const a = likedArticles()[1];
    const min = pickMin(a, {}, 7);
    const items = await expectTop(a, idOf(a.revisions[0]), { min_score: min }, 50);
    expect(items.length).toBeGreaterThan(4);
    expect(items.length).toBeLessThan(50);
  });
});

describe('like with filters', () => {
  it('since/until (a date-only until too), sources and exclude_sources apply in both orders', async () => {
    const [a, b] = likedArticles();
    const filters: Filters[] = [
      { since: '2025-01-10T00:00:00Z', until: '2025-01-20' },
      { sources: ['Wire One', 'Metro Courier'] },
      { exclude_sources: ['Daily Ledger'], include_edits: true },
    ];
    for (const f of filters) {
      for (const x of [a, b]) {
        await expectTop(x, idOf(x.revisions[0]), { ...f, min_score: -1 }, 40);
        const min = pickMin(x, f, 60);
        const items = await expectTimeSet(x, idOf(x.revisions[0]), { ...f, min_score: min }, 50);
        for (const it of items) {
          if (f.sources) expect(f.sources).toContain(it.source_name);
          if (f.exclude_sources) expect(f.exclude_sources).not.toContain(it.source_name);
          if (f.since) expect(it.event_time >= f.since && it.event_time <= '2025-01-20T23:59:59Z').toBe(true);
        }
      }
    }
  });
});

describe('the liked article is left out', () => {
  it('a vector query with one of its chunks finds it at 1.0; like with the same article does not', async () => {
    const a = likedArticles()[0];
    const own = latest(a).chunks[0].raw;
    const byVector = await h.match({ vector: vec(Float64Array.from(own)), order: 'relevance', include_edits: true, limit: 5, min_score: -1 });
    expect(byVector.body.items[0].source_url).toBe(a.url);
    expect(byVector.body.items[0].score).toBeGreaterThan(0.999);
    const byLike = await h.match({ like: idOf(a.revisions[0]), order: 'relevance', include_edits: true, limit: 100, min_score: -1 });
    expect(byLike.status, byLike.raw).toBe(200);
    expect(byLike.body.count).toBe(100);
    expect(byLike.body.items.filter((i: any) => i.source_url === a.url)).toEqual([]);
  });
});

describe('like: errors', () => {
  it('an id no article has is 422 unknown_article', async () => {
    const res = await h.match({ like: '00000000-0000-4000-8000-000000000000' });
    expectError(res, 422, 'unknown_article');
    expect(res.body.message).toBe('like: no article has the id "00000000-0000-4000-8000-000000000000" (use an item\'s id from /v1/match or /v1/news)');
    expectError(await h.match({ like: 'not-an-id', order: 'relevance' }), 422, 'unknown_article', { names: '"not-an-id"' });
  });

  it('like with text or vector is 422 invalid_request', async () => {
    const id = idOf(likedArticles()[0].revisions[0]);
    const v = vec(Float64Array.from(corpus.revisions[0].chunks[0].raw));
    const withVector = await h.match({ like: id, vector: v });
    expectError(withVector, 422, 'invalid_request');
    expect(withVector.body.message).toBe('vector and like: send one of text, vector or like, not several');
    const withText = await h.match({ like: id, text: 'port strike' });
    expectError(withText, 422, 'invalid_request');
    expect(withText.body.message).toBe('text and like: send one of text, vector or like, not several');
  });

  it('an empty or non-string like is 422 invalid_request naming it', async () => {
    expectError(await h.match({ like: '' }), 422, 'invalid_request', { names: 'like' });
    expectError(await h.match({ like: 42 }), 422, 'invalid_request', { names: 'like' });
  });

  it('order=relevance takes like as its query; a cursor with it is still cursor_requires_time_order', async () => {
    const id = idOf(likedArticles()[0].revisions[0]);
    const page = await h.match({ like: id, min_score: -1, limit: 2 });
    expectError(await h.match({ like: id, order: 'relevance', cursor: page.body.next_cursor }), 422, 'cursor_requires_time_order');
  });

  it('an article stored without vectors (text mode off) is 422 article_not_embedded', async () => {
    const file = join(h.dir, 'unembedded.jsonl');
    const url = 'https://wireone.example/2031/01/01/no-vectors';
    writeLines(file, [
      { url, source: 'Wire One', title: 'No vectors', snippet: 'Stored while text mode was off.', text: 'Body.', published_at: '2031-01-01T00:00:00Z' },
    ]);
    expect((await h.service.importFile(file)).newRevisions).toBe(1);
    const newest = await h.match({ limit: 1 });
    expect(newest.body.items[0].source_url).toBe(url);
    const res = await h.match({ like: newest.body.items[0].id });
    expectError(res, 422, 'article_not_embedded');
    expect(res.body.message).toBe(
      `like: article "${newest.body.items[0].id}" is stored without vectors (imported while text mode was off); run \`newsmatch embed\``,
    );
  });
});
