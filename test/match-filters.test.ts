/**
 * The filters of POST /v1/match: since/until (inclusive, applied before ranking), sources /
 * exclude_sources (exact names, composing with the query; rules 10 to 12) and include_edits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isoSecond, parseSec, type Corpus } from './helpers/corpus.js';
import { checkItems, expectFullPages } from './helpers/checks.js';
import { itemKey, makeQuery, oracle, pickMinScore, recallOf, vec, type Filters } from './helpers/oracle.js';
import { Rng } from './helpers/rng.js';
import { FULL, expectError, expectNewestFirst, startHarness, type Harness } from './helpers/service.js';

let h: Harness;
let corpus: Corpus;

beforeAll(async () => {
  h = await startHarness({ corpus: FULL, env: { EXACT_SCAN_MAX_CHUNKS: '2000' } });
  corpus = h.corpus!;
});

afterAll(async () => {
  await h?.close();
});

const plus = (iso: string, s: number) => isoSecond(parseSec(iso) + s);

async function keysOf(body: Record<string, unknown>, limit = 100): Promise<string[]> {
  const { items } = await h.pageAll(body, limit);
  expectNewestFirst(items);
  return items.map(itemKey).sort();
}

function oracleKeys(q: Float64Array | null, f: Filters): string[] {
  return oracle(corpus, q, f)
    .map((r) => r.key)
    .sort();
}

describe('since / until', () => {
  it('are inclusive at both ends: a window of one second holds exactly the rows at that second', async () => {
    const group = corpus.tieGroups[Math.floor(corpus.tieGroups.length / 2)];
    const t = group.eventTime;
    const keys = await keysOf({ since: t, until: t });
    expect(keys.length).toBe(group.size);
    expect(keys).toEqual(oracleKeys(null, { since: t, until: t }));
  });

  it('a date-only bound is that whole UTC day, as on /v1/news, in every order', async () => {
    const q = makeQuery(corpus, new Rng(31), 'topic');
    const day = corpus.tieGroups[3].eventTime.slice(0, 10);
    const next = plus(`${day}T00:00:00Z`, 3 * 86400).slice(0, 10);
    const dateOnly = { since: day, until: next };
    const wholeDays = { since: `${day}T00:00:00Z`, until: `${next}T23:59:59Z` };
    expect(await keysOf(dateOnly)).toEqual(oracleKeys(null, wholeDays));
    expect(await keysOf({ vector: vec(q), min_score: -1, ...dateOnly })).toEqual(await keysOf({ vector: vec(q), min_score: -1, ...wholeDays }));
    const rel = async (b: Filters) => (await h.match({ vector: vec(q), order: 'relevance', min_score: -1, limit: 100, ...b })).body.items.map(itemKey);
    expect(await rel(dateOnly)).toEqual(await rel(wholeDays));
    const news = async (b: Filters) => {
      const res = await h.inject({
        url: `/v1/news?q=the&limit=100&${new URLSearchParams(b as Record<string, string>)}`,
        noAuth: true,
        headers: h.bearerHeaders,
      });
      expect(res.status, res.raw).toBe(200);
      return res.body.results.map(itemKey);
    };
    const viaNews = await news(dateOnly);
    expect(viaNews.length).toBeGreaterThan(0);
    expect(viaNews).toEqual(await news(wholeDays));
  });

  it('one second off excludes the boundary rows, at either end', async () => {
    const t = corpus.tieGroups[3].eventTime;
    const atT = oracleKeys(null, { since: t, until: t });
    expect(atT.length).toBeGreaterThanOrEqual(2);
    const cases: Filters[] = [
      { since: t, until: plus(t, 86400) },
      { since: plus(t, 1), until: plus(t, 86400) },
      { since: plus(t, -86400), until: t },
      { since: plus(t, -86400), until: plus(t, -1) },
    ];
    for (const f of cases) {
      const got = await keysOf({ ...f });
      expect(got, JSON.stringify(f)).toEqual(oracleKeys(null, f));
    }
    const included = (k: string[]) => atT.every((x) => k.includes(x));
    const excluded = (k: string[]) => atT.every((x) => !k.includes(x));
    expect(included(oracleKeys(null, cases[0]))).toBe(true);
    expect(excluded(oracleKeys(null, cases[1]))).toBe(true);
    expect(included(oracleKeys(null, cases[2]))).toBe(true);
    expect(excluded(oracleKeys(null, cases[3]))).toBe(true);
  });

  it('accept any RFC 3339 date-time and normalise it to UTC', async () => {
    const t = corpus.tieGroups[5].eventTime;
    const sec = parseSec(t);
    const local = new Date((sec + 2 * 3600) * 1000).toISOString().replace(/\.\d{3}Z$/, '+02:00');
    const behind = new Date((sec - 5 * 3600 - 30 * 60) * 1000).toISOString().replace(/\.\d{3}Z$/, '-05:30');
    const expected = oracleKeys(null, { since: t, until: t });
    expect(await keysOf({ since: local, until: local })).toEqual(expected);
    expect(await keysOf({ since: behind, until: t.replace('Z', '.000Z') })).toEqual(expected);
  });

  it('fractional seconds: since T.5 excludes the rows at T, until T.5 includes them', async () => {
    const t = corpus.tieGroups[7].eventTime;
    const atT = oracleKeys(null, { since: t, until: t });
    expect(atT.length).toBeGreaterThanOrEqual(2);
    const half = t.replace('Z', '.500Z');
    // event_time >= T.5 holds for T+1 and later, not for T.
    const since = await keysOf({ since: half, until: plus(t, 3600) });
    expect(
      since.filter((k) => atT.includes(k)),
      `since ${half}`,
    ).toEqual([]);
    expect(since).toEqual(oracleKeys(null, { since: plus(t, 1), until: plus(t, 3600) }));
    // event_time <= T.5 holds for T.
    const until = await keysOf({ since: plus(t, -3600), until: half });
    expect(until).toEqual(oracleKeys(null, { since: plus(t, -3600), until: t }));
  });

  it('a date-time without a time zone is 422 invalid_request (RFC 3339 requires the offset); the message says what is allowed', async () => {
    const res = await h.match({ since: '2025-01-15T00:00:00' });
    expectError(res, 422, 'invalid_request');
    expect(res.body.message).toBe('since: an RFC 3339 date-time (2026-05-01T00:00:00Z) or a date (2026-05-01, a whole UTC day), got "2025-01-15T00:00:00"');
    expectError(await h.match({ until: '15/01/2025' }), 422, 'invalid_request', { names: 'until' });
  });

  it('an item event_time passed back unchanged as since includes that item (the poll loop)', async () => {
    const first = await h.match({ limit: 10 });
    expect(first.status, first.raw).toBe(200);
    const newest = first.body.items[4];
    const res = await h.match({ since: newest.event_time, limit: 100 });
    expect(res.status, res.raw).toBe(200);
    expect(res.body.items.map((i: any) => i.id)).toContain(newest.id);
    expect(res.body.items.map(itemKey).sort()).toEqual(oracleKeys(null, { since: newest.event_time }));
  });

  it('since after until is 422 invalid_request', async () => {
    expectError(await h.match({ since: '2025-02-02T00:00:00Z', until: '2025-02-01T00:00:00Z' }), 422, 'invalid_request');
    const q = makeQuery(corpus, new Rng(1), 'topic');
    expectError(await h.match({ vector: vec(q), order: 'relevance', since: '2025-02-02T00:00:01Z', until: '2025-02-02T00:00:00Z' }), 422, 'invalid_request');
  });

  it('a date-time that is not RFC 3339 is 422 invalid_request naming the field', async () => {
    expectError(await h.match({ since: 'yesterday' }), 422, 'invalid_request', { names: 'since' });
    expectError(await h.match({ until: '2025-13-01T00:00:00Z' }), 422, 'invalid_request', { names: 'until' });
    expectError(await h.match({ since: 1735689600 }), 422, 'invalid_request', { names: 'since' });
  });

  it('a window outside the corpus answers an empty page with next_cursor null', async () => {
    const res = await h.match({ since: '2030-01-01T00:00:00Z' });
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toEqual({ model: 'bge-m3', order: 'time', count: 0, items: [], next_cursor: null, seq: h.service.store.nextLabel() });
  });

  it('apply before ranking in time order: a vector query in a window pages every match inside it', async () => {
    const q = makeQuery(corpus, new Rng(31), 'topic');
    const f: Filters = { since: '2025-01-15T00:00:00Z', until: '2025-01-29T12:00:00Z' };
    const min = pickMinScore(corpus, q, f, 100);
    const { items } = await h.pageAll({ vector: vec(q), min_score: min, ...f }, 50);
    const rec = recallOf(corpus, q, { ...f, min_score: min }, items.map(itemKey));
    expect(rec.extraneous).toEqual([]);
    expect(rec.recall).toBe(1);
    checkItems(corpus, q, items);
  });

  it('with a vector, the one-second window of a tie group gives the whole group scored', async () => {
    const t = corpus.bigTie;
    const q = makeQuery(corpus, new Rng(32), 'story');
    const { items } = await h.pageAll({ vector: vec(q), min_score: -1, since: t, until: t }, 2);
    expect(items.map(itemKey).sort()).toEqual(oracleKeys(q, { since: t, until: t, min_score: -1 }));
    checkItems(corpus, q, items);
    expectNewestFirst(items);
  });
});

describe('sources / exclude_sources', () => {
  it('sources keeps exactly the named sources (no query, paged to the end)', async () => {
    for (const src of corpus.sources) {
      const got = await keysOf({ sources: [src.name] });
      expect(got, src.name).toEqual(oracleKeys(null, { sources: [src.name] }));
    }
    const two = ['Wire One', 'Café Économie'];
    expect(await keysOf({ sources: two, include_edits: true })).toEqual(oracleKeys(null, { sources: two, include_edits: true }));
  });

  it('exclude_sources drops exactly the named sources', async () => {
    const ex = ['Daily Ledger', 'The Harbor Post'];
    const { items, pages } = await h.pageAll({ exclude_sources: ex }, 100);
    expect(items.map(itemKey).sort()).toEqual(oracleKeys(null, { exclude_sources: ex }));
    expectFullPages(pages);
  });

  it('an unknown or misspelled source name is 422 invalid_request naming it, never an empty page (rule 10)', async () => {
    expectError(await h.match({ sources: ['Wire Onne'] }), 422, 'invalid_request', { names: 'Wire Onne' });
    expectError(await h.match({ sources: ['Wire One', 'Nonexistent Times'] }), 422, 'invalid_request', { names: 'Nonexistent Times' });
    expectError(await h.match({ exclude_sources: ['Daily Ledgr'] }), 422, 'invalid_request', { names: 'Daily Ledgr' });
    // Names are exact and case-sensitive.
    expectError(await h.match({ sources: ['wire one'] }), 422, 'invalid_request', { names: 'wire one' });
    expectError(await h.match({ sources: ['Wire One '] }), 422, 'invalid_request');
    expectError(await h.match({ sources: ['Cafe Economie'] }), 422, 'invalid_request', { names: 'Cafe Economie' });
    const q = makeQuery(corpus, new Rng(2), 'topic');
    expectError(await h.match({ vector: vec(q), order: 'relevance', sources: ['Wire Onne'] }), 422, 'invalid_request', { names: 'Wire Onne' });
  });

  it('sources and exclude_sources together is 422 invalid_request', async () => {
    expectError(await h.match({ sources: ['Wire One'], exclude_sources: ['Daily Ledger'] }), 422, 'invalid_request');
  });

  it('the list limits hold: 1 to 50 names, strings only', async () => {
    expectError(await h.match({ sources: [] }), 422, 'invalid_request', { names: 'sources' });
    expectError(await h.match({ exclude_sources: [] }), 422, 'invalid_request', { names: 'exclude_sources' });
    const many = Array.from({ length: 51 }, () => 'Wire One');
    expectError(await h.match({ sources: many }), 422, 'invalid_request', { names: 'sources' });
    expectError(await h.match({ sources: 'Wire One' }), 422, 'invalid_request', { names: 'sources' });
    expectError(await h.match({ sources: [42] }), 422, 'invalid_request', { names: 'sources' });
  });

  it('compose with a vector query in time order (rule 12): exact set, recall 1 outside the 1e-4 edge', async () => {
    const rng = new Rng(41);
    const cases: Filters[] = [{ sources: ['Wire One'] }, { sources: ['Metro Courier', 'Northern Gazette'] }, { exclude_sources: ['Daily Ledger', 'Wire One'] }];
    let exp = 0;
    let found = 0;
    for (const f of cases) {
      const q = makeQuery(corpus, rng, 'story');
      const min = pickMinScore(corpus, q, f, 120);
      const { items, pages } = await h.pageAll({ vector: vec(q), min_score: min, ...f }, 25);
      const rec = recallOf(corpus, q, { ...f, min_score: min }, items.map(itemKey));
      expect(rec.extraneous, JSON.stringify(f)).toEqual([]);
      exp += rec.expected;
      found += rec.found;
      checkItems(corpus, q, items);
      // exclude_sources never under-fills (rule 11).
      if (f.exclude_sources) expectFullPages(pages);
    }
    console.log(`[recall] order=time with source filters: ${found}/${exp} = ${((found / exp) * 100).toFixed(2)}%`);
    expect(found / exp).toBe(1);
  });

  it('a selective include over a broad query may under-fill pages but loses no row (rule 11)', async () => {
    const q = makeQuery(corpus, new Rng(42), 'topic');
    const min = pickMinScore(corpus, q, {}, 400);
    const f: Filters = { sources: ['Café Économie'], min_score: min };
    const { items, pages } = await h.pageAll({ vector: vec(q), ...f }, 10);
    const rec = recallOf(corpus, q, f, items.map(itemKey));
    expect(rec.extraneous).toEqual([]);
    for (const it of items) expect(it.source_name).toBe('Café Économie');
    const under = pages.filter((p) => p.next_cursor !== null && p.count < p.limit).length;
    console.log(`[rule 11] selective include: ${rec.found}/${rec.expected} rows, ${under} under-filled of ${pages.length} pages`);
    expect(rec.recall).toBe(1);
  });
});

describe('include_edits', () => {
  it('false: one row per article, the first version with its original timestamp and title', async () => {
    const edited = corpus.articles.filter((a) => a.revisions.length > 1);
    expect(edited.length).toBeGreaterThan(200);
    const { items } = await h.pageAll({}, 100);
    const byUrl = new Map(items.map((i) => [i.source_url, i]));
    expect(byUrl.size).toBe(items.length);
    for (const a of edited) {
      const row = byUrl.get(a.url);
      expect(row).toBeDefined();
      expect(row.event_time).toBe(a.revisions[0].publishedAt);
      expect(row.title).toBe(a.revisions[0].title);
      expect(row.body).toBe(a.revisions[0].snippet);
    }
  });

  it('true: every revision is its own row with its own id, title and event_time', async () => {
    const { items } = await h.pageAll({ include_edits: true }, 100);
    const byKey = new Map(items.map((i) => [itemKey(i), i]));
    for (const a of corpus.articles.filter((x) => x.revisions.length > 1)) {
      const ids = new Set<string>();
      for (const r of a.revisions) {
        const row = byKey.get(`${r.url}|${r.eventTime}`);
        expect(row, `${r.url} revision ${r.revIndex}`).toBeDefined();
        expect(row.title).toBe(r.title);
        ids.add(row.id);
      }
      expect(ids.size).toBe(a.revisions.length);
    }
  });

  it('the window applies to each row: an edit inside it is a row only with include_edits', async () => {
    const edit = corpus.revisions.find((r) => !r.isFirst && r.eventSec - r.article.revisions[r.revIndex - 1].eventSec > 3600)!;
    const f = { since: edit.eventTime, until: edit.eventTime };
    const off = await keysOf({ ...f, include_edits: false });
    const on = await keysOf({ ...f, include_edits: true });
    expect(off).not.toContain(`${edit.url}|${edit.eventTime}`);
    expect(on).toContain(`${edit.url}|${edit.eventTime}`);
    expect(off).toEqual(oracleKeys(null, { ...f }));
    expect(on).toEqual(oracleKeys(null, { ...f, include_edits: true }));
  });

  it('with a vector, include_edits=true adds edit rows scored by their own chunks', async () => {
    const q = makeQuery(corpus, new Rng(51), 'topic');
    const f: Filters = { include_edits: true };
    const min = pickMinScore(corpus, q, f, 200);
    const { items } = await h.pageAll({ vector: vec(q), min_score: min, include_edits: true }, 100);
    const rec = recallOf(corpus, q, { ...f, min_score: min }, items.map(itemKey));
    expect(rec.extraneous).toEqual([]);
    expect(rec.recall).toBe(1);
    const editRows = items.filter((i) => corpus.articles.find((a) => a.url === i.source_url)!.revisions[0].eventTime !== i.event_time);
    expect(editRows.length).toBeGreaterThan(0);
    checkItems(corpus, q, items);
  });

  it('is strictly boolean', async () => {
    expectError(await h.match({ include_edits: 'true' }), 422, 'invalid_request', { names: 'include_edits' });
    expectError(await h.match({ include_edits: 1 }), 422, 'invalid_request', { names: 'include_edits' });
  });
});
