/**
 * GET /v1/news, black-box over HTTP (app.inject) on a hand-made corpus written straight into
 * LMDB: every parameter and every error code, the query language (AND, "phrase", OR, -exclusion,
 * prefix*), folding (German, full-width, Japanese and Chinese bigrams), cursor paging to the end
 * under both sorts (ties within a second and within a score), cursors bound to their filters,
 * since/until at exact seconds, sources, edits (include_edits, an edit searchable at once),
 * highlights, metering, a fuzz of 300 queries, and a rebuild of the index from LMDB.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RevisionInput } from '../src/store/index.js';
import { Rng } from './helpers/rng.js';
import { EVENT_TIME, expectError, startHarness, type Harness, type Res } from './helpers/service.js';

let h: Harness;

const T0 = Date.parse('2026-04-01T00:00:00Z') / 1000;
const iso = (t: number) => new Date(t * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const WIRE = 'Wire One';
const LEDGER = 'Daily Ledger';
const HARBOUR = 'Harbour Post';
const BERLIN = 'Berliner Blatt';
const TOKYO = 'Tokyo Shimbun';
const BEIJING = 'Beijing Daily';
const ARCHIVE = 'Archive Desk';

function rev(path: string, source: string, title: string, body: string, text: string, publishedAt: number, revisedAt?: number): RevisionInput {
  return { url: `https://${path}`, source, title, body, text, publishedAt, ...(revisedAt === undefined ? {} : { revisedAt }), chunks: [] };
}

// ---- the corpus -------------------------------------------------------------------------

/** 66 port-strike articles over 3 sources; each triple shares one second; 4 score groups. */
const STRIKES = 66;
const strikeSource = (i: number) => [WIRE, LEDGER, HARBOUR][i % 3];
const strikeTime = (i: number) => T0 + Math.floor(i / 3) * 600;
const strikeUrls = Array.from({ length: STRIKES }, (_, i) => `port.example/${i}`);
function strikeDoc(i: number): RevisionInput {
  const v = i % 4;
  // Same token counts and term frequencies within a variant: BM25 ties by construction.
  const title = v === 0 ? `Port strike ${i}` : `Harbour news ${i}`;
  const text = `${'strike '.repeat(1 + v)}continues at the port, report ${i}.`;
  return rev(`port.example/${i}`, strikeSource(i), title, `Update ${i} from the docks.`, text, strikeTime(i));
}

/** `meteor` articles at both edges of [TB, TE], at exact seconds. */
const TB = T0 + 50_000;
const TE = TB + 100;
const meteorDocs: [string, number][] = [
  ['meteor.example/b-1', TB - 1],
  ['meteor.example/b0', TB],
  ['meteor.example/b0bis', TB],
  ['meteor.example/b+1', TB + 1],
  ['meteor.example/e-1', TE - 1],
  ['meteor.example/e0', TE],
  ['meteor.example/e+1', TE + 1],
];

/** An article edited once: the ferry, first at TF, revised at TF + 3600. */
const TF = T0 + 70_000;

/** Apollo archive pieces, written newest first the way a feed lists them (three before 1970). */
const apollo: [string, string][] = [
  ['archive.example/apollo-anniversary', '1970-07-20T20:17:40Z'],
  ['archive.example/apollo11-return', '1969-07-24T16:50:35Z'],
  ['archive.example/apollo11-landing', '1969-07-20T20:17:40Z'],
  ['archive.example/apollo8-orbit', '1968-12-24T15:00:00Z'],
];
const sec = (s: string) => Date.parse(s) / 1000;

function baseCorpus(): RevisionInput[] {
  const docs: RevisionInput[] = Array.from({ length: STRIKES }, (_, i) => strikeDoc(i));
  docs.push(
    // AND vs phrase: the words together in order, apart, and in the other order.
    rev('misc.example/phrase', WIRE, 'Central bank', 'Markets reacted.', 'A rate cut was announced by the central bank.', T0 + 100_000),
    rev('misc.example/apart', WIRE, 'Inflation data', 'Numbers out.', 'The rate of inflation fell; the government made a cut.', T0 + 100_001),
    rev('misc.example/reversed', LEDGER, 'Lenders move', 'Banks act.', 'They cut the rate again.', T0 + 100_002),
    // OR, exclusion, prefix.
    rev('misc.example/wind', LEDGER, 'Wind farm', 'A wind farm opens.', 'Wind power grows offshore.', T0 + 100_010),
    rev('misc.example/solar', LEDGER, 'Solar farm', 'A solar farm opens.', 'Solar power and wind share the grid.', T0 + 100_011),
    rev('misc.example/opinion', HARBOUR, 'Solar opinion', 'An op ed on solar.', 'Opinion: solar subsidies should end.', T0 + 100_012),
    rev('misc.example/hydro', HARBOUR, 'Hydro dam', 'A hydro dam opens.', 'Hydro power from the river.', T0 + 100_013),
    // German folding: ß/ss, umlauts, case, in both directions.
    rev('de.example/1', BERLIN, 'Die Straße in München', 'Über die Straßenbahn.', 'Die Bürger feiern. Café Müller öffnet.', T0 + 200_000),
    rev('de.example/2', BERLIN, 'Strasse gesperrt', 'Die Strasse bleibt gesperrt.', 'Umleitung über die Hauptstrasse nach Munchen.', T0 + 200_001),
    // Full-width forms.
    rev('fw.example/1', WIRE, 'ＮＡＳＡ ｌａｕｎｃｈ', 'The rocket flew.', 'Liftoff was on time.', T0 + 250_000),
    rev('fw.example/2', WIRE, 'NASA budget', 'Congress votes.', 'The agency asks for more.', T0 + 250_001),
    // Japanese and Chinese: no spaces between words.
    rev('jp.example/1', TOKYO, '東京都知事選挙の結果', '東京都の選挙が終わった。', '新しい知事が選ばれました。投票率は高かった。', T0 + 300_000),
    rev('jp.example/2', TOKYO, '大阪の天気', '大阪は晴れ。', '明日は雨が降るでしょう。', T0 + 300_001),
    rev('zh.example/1', BEIJING, '北京市政府发布新政策', '新政策将于明年实施。', '市民对此表示欢迎。', T0 + 300_010),
    rev('zh.example/2', BEIJING, '上海天气预报', '上海明天有雨。', '气温下降。', T0 + 300_011),
    // Highlights: HTML in the stored text; a word only in the headline; a character outside the BMP.
    rev('html.example/1', HARBOUR, 'Markup & more', 'Tags like <b>Zebra</b> & a < sign.', '', T0 + 400_000),
    rev('title.example/1', WIRE, 'Quokka sighting', 'An animal was seen.', 'Rangers confirmed it.', T0 + 400_001),
    rev('astral.example/1', TOKYO, '店の話', '写真あり。', `${'あ'.repeat(20)}𠮷${'い'.repeat(59)}金沢の店が開いた。`, T0 + 400_002),
    rev('emoji.example/1', WIRE, 'Party', 'Fans cheered.', `${'🎉'.repeat(40)}-pelican spotted at the party.`, T0 + 400_003),
    // The ferry's first publication (its edit is written below).
    rev('edit.example/ferry', HARBOUR, 'Ferry delayed', 'The ferry is delayed.', 'Storm warnings for the ferry crossing.', TF),
  );
  for (const [path, t] of meteorDocs)
    docs.push(rev(path, path.endsWith('bis') ? LEDGER : WIRE, `Meteor ${path}`, 'A meteor was seen.', 'Astronomers logged it.', t));
  for (const [path, t] of apollo) docs.push(rev(path, ARCHIVE, `Apollo ${path.split('/')[1]}`, 'From the Apollo archive.', 'Mission notes.', sec(t)));
  return docs;
}

beforeAll(async () => {
  h = await startHarness({ corpus: null });
  const docs = baseCorpus();
  const out = h.service.store.writeRevisions(docs);
  expect(out.map((o) => o.status)).toEqual(docs.map(() => 'new'));
  const edit = h.service.store.writeRevisions([
    rev('edit.example/ferry', HARBOUR, 'Ferry cancelled', 'The ferry is cancelled.', 'Storm closes the ferry crossing for the day.', TF, TF + 3600),
  ]);
  expect(edit.map((o) => o.status)).toEqual(['new']);
}, 60_000);

afterAll(async () => {
  await h?.close();
});

// ---- helpers -----------------------------------------------------------------------------

type Params = Record<string, string | number | boolean | undefined>;

const qs = (p: Params) =>
  Object.entries(p)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join('&');

const news = (p: Params | string, headers?: Record<string, string | undefined>): Promise<Res> =>
  h.inject({ url: `/v1/news?${typeof p === 'string' ? p : qs(p)}`, headers });

/** A 200 answer's body, with its shape checked. */
async function ok(p: Params): Promise<any> {
  const res = await news(p);
  expect(res.status, `${qs(p)}: ${res.raw.slice(0, 300)}`).toBe(200);
  expect(Object.keys(res.body).sort()).toEqual(['count', 'next_cursor', 'partial', 'results']);
  expect(res.body.count).toBe(res.body.results.length);
  // The index is never behind by more than a search waits for here.
  expect(res.body.partial).toBe(false);
  return res.body;
}

const short = (r: any) => String(r.source_url).replace(/^https:\/\//, '');

/** The matching articles (their URLs, sorted), all on one page. */
async function urls(p: Params): Promise<string[]> {
  const body = await ok({ limit: 100, ...p });
  expect(body.next_cursor).toBeNull();
  return body.results.map(short).sort();
}

/** Follows next_cursor to the end with the limits in turn; checks every page. */
async function pageAll(p: Params, limits: number[]): Promise<{ rows: any[]; pages: number }> {
  const rows: any[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 200; page++) {
    const limit = limits[page % limits.length];
    const body = await ok({ ...p, limit, cursor: cursor ?? undefined });
    expect(body.results.length).toBeLessThanOrEqual(limit);
    rows.push(...body.results);
    cursor = body.next_cursor;
    if (cursor === null) return { rows, pages: page + 1 };
    expect(typeof cursor).toBe('string');
    expect(body.results.length, 'a page with a next_cursor is full').toBe(limit);
  }
  throw new Error('paging did not end');
}

const isWellFormed = (s: string) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

// ---- results and parameters -------------------------------------------------------------

describe('GET /v1/news: the answer', () => {
  it('has the documented shape: results, count, next_cursor, partial; each result its article fields and highlight', async () => {
    const body = await ok({ q: 'wind' });
    expect(body.count).toBe(2);
    expect(body.next_cursor).toBeNull();
    expect(body.results[0]).toEqual({
      id: expect.stringMatching(UUID),
      title: 'Solar farm',
      body: 'A solar farm opens.',
      source_name: LEDGER,
      source_url: 'https://misc.example/solar',
      event_time: iso(T0 + 100_011),
      highlight: 'Solar power and <mark>wind</mark> share the grid.',
    });
    expect(body.results[1]).toEqual({
      id: expect.stringMatching(UUID),
      title: 'Wind farm',
      body: 'A wind farm opens.',
      source_name: LEDGER,
      source_url: 'https://misc.example/wind',
      event_time: iso(T0 + 100_010),
      highlight: 'A <mark>wind</mark> farm opens.',
    });
    expect(body.results[0].id).not.toBe(body.results[1].id);
    expect(body.results[0].event_time).toMatch(EVENT_TIME);
  });

  it('answers an empty page (200) when nothing matches', async () => {
    expect(await ok({ q: 'xylophone' })).toEqual({ results: [], count: 0, next_cursor: null, partial: false });
  });
});

describe('GET /v1/news: sort', () => {
  it('defaults to time: newest first by event_time', async () => {
    const byDefault = await ok({ q: 'strike', limit: 100 });
    const byTime = await ok({ q: 'strike', limit: 100, sort: 'time' });
    expect(byDefault.results.map((r: any) => r.id)).toEqual(byTime.results.map((r: any) => r.id));
    const times = byDefault.results.map((r: any) => r.event_time);
    expect(times).toHaveLength(STRIKES);
    expect(times[0]).toBe(iso(strikeTime(STRIKES - 1)));
    expect(times[STRIKES - 1]).toBe(iso(T0));
    expect([...times].sort().reverse()).toEqual(times);
    expect(byDefault.results.every((r: any) => !('score' in r))).toBe(true);
  });

  it('relevance ranks by BM25 with a numeric score, highest first', async () => {
    // Newest first, the text-only hit (Solar farm) leads; by relevance the headline hit does.
    expect((await ok({ q: 'wind' })).results.map((r: any) => r.title)).toEqual(['Solar farm', 'Wind farm']);
    const body = await ok({ q: 'wind', sort: 'relevance' });
    expect(body.results.map((r: any) => r.title)).toEqual(['Wind farm', 'Solar farm']);
    const [a, b] = body.results.map((r: any) => r.score);
    expect(typeof a).toBe('number');
    expect(Number.isFinite(a) && Number.isFinite(b)).toBe(true);
    expect(a).toBeGreaterThan(b);
    expect(body.results[0].highlight).toBe('A <mark>wind</mark> farm opens.');
  });

  it('relevance: more occurrences of the word score higher, equal documents score equal', async () => {
    const body = await ok({ q: 'strike', sort: 'relevance', limit: 100 });
    expect(body.count).toBe(STRIKES);
    const scores: number[] = body.results.map((r: any) => r.score);
    expect([...scores].sort((x, y) => y - x)).toEqual(scores);
    // Four kinds of document (i % 4): four distinct scores, each shared by every one of its kind.
    const byVariant = new Map<number, Set<number>>();
    for (const r of body.results) {
      const i = Number(short(r).split('/')[1]);
      byVariant.set(i % 4, (byVariant.get(i % 4) ?? new Set()).add(r.score));
    }
    expect([...byVariant.values()].map((s) => s.size)).toEqual([1, 1, 1, 1]);
    expect(new Set(scores).size).toBe(4);
    const score = (v: number) => [...byVariant.get(v)!][0];
    expect(score(3)).toBeGreaterThan(score(2));
    expect(score(2)).toBeGreaterThan(score(1));
  });

  it('orders articles from before 1970 newest first too', async () => {
    const body = await ok({ q: 'apollo' });
    expect(body.results.map((r: any) => [short(r), r.event_time])).toEqual(apollo.map(([path, t]) => [path, t]));
    // The bounds still select by the exact time.
    expect(await urls({ q: 'apollo', since: '1969-07-20T20:17:40Z', until: '1969-07-24T16:50:35Z' })).toEqual([
      'archive.example/apollo11-landing',
      'archive.example/apollo11-return',
    ]);
  });
});

describe('GET /v1/news: limit and next_cursor', () => {
  it('defaults to 25 and takes 1 to 100', async () => {
    const first = await ok({ q: 'strike' });
    expect(first.count).toBe(25);
    expect(typeof first.next_cursor).toBe('string');
    expect((await ok({ q: 'strike', limit: 1 })).count).toBe(1);
    expect((await ok({ q: 'strike', limit: 100 })).count).toBe(STRIKES);
  });

  it('next_cursor is null on the last page, also when the last page is exactly full', async () => {
    const exact = await ok({ q: 'strike', limit: STRIKES });
    expect(exact.count).toBe(STRIKES);
    expect(exact.next_cursor).toBeNull();
    const oneShort = await ok({ q: 'strike', limit: STRIKES - 1 });
    expect(oneShort.count).toBe(STRIKES - 1);
    expect(typeof oneShort.next_cursor).toBe('string');
    const last = await ok({ q: 'strike', limit: 10, cursor: oneShort.next_cursor });
    expect(last.count).toBe(1);
    expect(last.next_cursor).toBeNull();
    expect(last.results[0].id).toBe(exact.results[STRIKES - 1].id);
  });
});

describe('GET /v1/news: query language', () => {
  it('ANDs words (anywhere in the article); a "phrase" needs the words adjacent and in order', async () => {
    expect(await urls({ q: 'rate cut' })).toEqual(['misc.example/apart', 'misc.example/phrase', 'misc.example/reversed']);
    expect(await urls({ q: '"rate cut"' })).toEqual(['misc.example/phrase']);
    expect(await urls({ q: '"cut the rate"' })).toEqual(['misc.example/reversed']);
    // Words in different fields still AND (headline + text).
    expect(await urls({ q: 'central announced' })).toEqual(['misc.example/phrase']);
    expect(await urls({ q: 'rate cut xylophone' })).toEqual([]);
  });

  it('OR takes either, binding its neighbours: a OR b c is (a or b) and c', async () => {
    expect(await urls({ q: 'wind OR hydro' })).toEqual(['misc.example/hydro', 'misc.example/solar', 'misc.example/wind']);
    expect(await urls({ q: 'wind hydro' })).toEqual([]);
    expect(await urls({ q: 'wind OR hydro farm' })).toEqual(['misc.example/solar', 'misc.example/wind']);
    expect(await urls({ q: 'wind OR hydro dam' })).toEqual(['misc.example/hydro']);
    expect(await urls({ q: 'farm OR dam river' })).toEqual(['misc.example/hydro']);
    expect(await urls({ q: '"rate cut" OR "cut the rate"' })).toEqual(['misc.example/phrase', 'misc.example/reversed']);
  });

  it('a leading -word or -"phrase" excludes', async () => {
    expect(await urls({ q: 'solar' })).toEqual(['misc.example/opinion', 'misc.example/solar']);
    expect(await urls({ q: 'solar -wind' })).toEqual(['misc.example/opinion']);
    expect(await urls({ q: 'solar -"op ed"' })).toEqual(['misc.example/solar']);
    expect(await urls({ q: 'solar -"ed op"' })).toEqual(['misc.example/opinion', 'misc.example/solar']);
    expect(await urls({ q: 'farm -solar -hydro' })).toEqual(['misc.example/wind']);
    expect(await urls({ q: 'rate -"rate cut"' })).toEqual(['misc.example/apart', 'misc.example/reversed']);
  });

  it('word* is a prefix (two characters at least)', async () => {
    expect(await urls({ q: 'subsid*' })).toEqual(['misc.example/opinion']);
    expect(await urls({ q: 'hyd*' })).toEqual(['misc.example/hydro']);
    expect(await urls({ q: 'subsidies*' })).toEqual(['misc.example/opinion']);
    expect(await urls({ q: 'subsidiary*' })).toEqual([]);
    expect(await urls({ q: 'so* -opin*' })).toEqual(['misc.example/solar']);
    expect(await urls({ q: 'subsid' })).toEqual([]); // no prefix without the star
    expectError(await news({ q: 's*' }), 400, 'bad_request');
  });
});

describe('GET /v1/news: folding', () => {
  it('German: ß and ss, umlauts and plain vowels, upper and lower case find each other', async () => {
    const both = ['de.example/1', 'de.example/2'];
    expect(await urls({ q: 'Straße' })).toEqual(both);
    expect(await urls({ q: 'strasse' })).toEqual(both);
    expect(await urls({ q: 'STRASSE' })).toEqual(both);
    expect(await urls({ q: 'STRAẞE' })).toEqual(both);
    expect(await urls({ q: 'München' })).toEqual(both);
    expect(await urls({ q: 'munchen' })).toEqual(both);
    expect(await urls({ q: 'MÜNCHEN' })).toEqual(both);
    expect(await urls({ q: 'uber' })).toEqual(both);
    expect(await urls({ q: 'Über' })).toEqual(both);
    expect(await urls({ q: 'Straße gesperrt' })).toEqual(['de.example/2']);
    expect(await urls({ q: 'strassenbahn' })).toEqual(['de.example/1']);
    expect(await urls({ q: 'hauptstraße' })).toEqual(['de.example/2']);
    expect(await urls({ q: 'cafe muller' })).toEqual(['de.example/1']);
    expect(await urls({ q: 'CAFÉ' })).toEqual(['de.example/1']);
    expect(await urls({ q: '"die strasse bleibt"' })).toEqual(['de.example/2']);
    expect(await urls({ q: 'straß*' })).toEqual(both); // straße, strassenbahn / strasse
  });

  it('full-width forms fold to their plain letters', async () => {
    expect(await urls({ q: 'nasa' })).toEqual(['fw.example/1', 'fw.example/2']);
    expect(await urls({ q: 'ｎａｓａ' })).toEqual(['fw.example/1', 'fw.example/2']);
    expect(await urls({ q: 'launch' })).toEqual(['fw.example/1']);
  });

  it('Japanese: a two-character word inside a sentence, longer substrings, one character', async () => {
    expect(await urls({ q: '知事' })).toEqual(['jp.example/1']);
    expect(await urls({ q: '選挙' })).toEqual(['jp.example/1']);
    expect(await urls({ q: '投票率' })).toEqual(['jp.example/1']);
    expect(await urls({ q: '京都' })).toEqual(['jp.example/1']); // inside 東京都
    expect(await urls({ q: '京大' })).toEqual([]);
    expect(await urls({ q: '大阪' })).toEqual(['jp.example/2']);
    expect(await urls({ q: '雨が降る' })).toEqual(['jp.example/2']);
    // One character: at the head of a run, inside it, and only as its last character.
    expect(await urls({ q: '晴' })).toEqual(['jp.example/2']);
    expect(await urls({ q: '都' })).toEqual(['jp.example/1']);
    expect(await urls({ q: '果' })).toEqual(['jp.example/1']);
    expect(await urls({ q: 'の' })).toEqual(['astral.example/1', 'jp.example/1', 'jp.example/2']);
    expect(await urls({ q: '選挙 -大阪' })).toEqual(['jp.example/1']);
    expect(await urls({ q: '知事 OR 大阪' })).toEqual(['jp.example/1', 'jp.example/2']);
  });

  it('Chinese: words and substrings across word boundaries; one character in Chinese and Japanese', async () => {
    expect(await urls({ q: '政府' })).toEqual(['zh.example/1']);
    expect(await urls({ q: '市政' })).toEqual(['zh.example/1']);
    expect(await urls({ q: '新政策' })).toEqual(['zh.example/1']);
    expect(await urls({ q: '天气' })).toEqual(['zh.example/2']); // not 天気
    expect(await urls({ q: '迎' })).toEqual(['zh.example/1']);
    expect(await urls({ q: '雨' })).toEqual(['jp.example/2', 'zh.example/2']);
    expect(await urls({ q: '明' })).toEqual(['jp.example/2', 'zh.example/1', 'zh.example/2']);
  });
});

describe('GET /v1/news: filters', () => {
  it('since and until are inclusive at the exact second', async () => {
    const inside = ['meteor.example/b+1', 'meteor.example/b0', 'meteor.example/b0bis', 'meteor.example/e-1', 'meteor.example/e0'];
    expect(await urls({ q: 'meteor' })).toHaveLength(7);
    expect(await urls({ q: 'meteor', since: iso(TB), until: iso(TE) })).toEqual(inside);
    expect(await urls({ q: 'meteor', since: iso(TB + 1), until: iso(TE - 1) })).toEqual(['meteor.example/b+1', 'meteor.example/e-1']);
    expect(await urls({ q: 'meteor', since: iso(TB), until: iso(TB) })).toEqual(['meteor.example/b0', 'meteor.example/b0bis']);
    expect(await urls({ q: 'meteor', since: iso(TE + 1) })).toEqual(['meteor.example/e+1']);
    expect(await urls({ q: 'meteor', until: iso(TB - 1) })).toEqual(['meteor.example/b-1']);
    expect(await urls({ q: 'meteor', since: iso(TE + 2) })).toEqual([]);
    // Other RFC 3339 spellings of the same instants.
    const plus2 = (t: number) => new Date((t + 7200) * 1000).toISOString().replace(/\.\d{3}Z$/, '+02:00');
    expect(await urls({ q: 'meteor', since: plus2(TB), until: plus2(TE) })).toEqual(inside);
    // A fractional bound admits no row outside it: since rounds up, until down.
    expect(await urls({ q: 'meteor', since: iso(TB).replace('Z', '.5Z'), until: iso(TE).replace('Z', '.5Z') })).toEqual([
      'meteor.example/b+1',
      'meteor.example/e-1',
      'meteor.example/e0',
    ]);
  });

  it('sources keeps the named sources, exclude_sources drops them', async () => {
    const wire = strikeUrls.filter((_, i) => strikeSource(i) === WIRE).sort();
    const notWire = strikeUrls.filter((_, i) => strikeSource(i) !== WIRE).sort();
    const harbour = strikeUrls.filter((_, i) => strikeSource(i) === HARBOUR).sort();
    expect(await urls({ q: 'strike', sources: WIRE })).toEqual(wire);
    expect(await urls({ q: 'strike', exclude_sources: WIRE })).toEqual(notWire);
    expect(await urls({ q: 'strike', sources: `${WIRE},${HARBOUR}` })).toEqual([...wire, ...harbour].sort());
    expect(await urls({ q: 'strike', exclude_sources: `${WIRE},${LEDGER}` })).toEqual(harbour);
    expect(await urls({ q: 'strike', sources: TOKYO })).toEqual([]);
    const rows = (await ok({ q: 'strike', sources: LEDGER, limit: 100 })).results;
    expect(new Set(rows.map((r: any) => r.source_name))).toEqual(new Set([LEDGER]));
  });

  it('include_edits: first publications by default, every revision with true', async () => {
    const byDefault = (await ok({ q: 'ferry' })).results;
    expect(byDefault.map((r: any) => [r.title, r.event_time, short(r)])).toEqual([['Ferry delayed', iso(TF), 'edit.example/ferry']]);
    expect((await ok({ q: 'ferry', include_edits: 'false' })).results.map((r: any) => r.id)).toEqual([byDefault[0].id]);
    const all = (await ok({ q: 'ferry', include_edits: 'true' })).results;
    expect(all.map((r: any) => [r.title, r.body, r.event_time, short(r)])).toEqual([
      ['Ferry cancelled', 'The ferry is cancelled.', iso(TF + 3600), 'edit.example/ferry'],
      ['Ferry delayed', 'The ferry is delayed.', iso(TF), 'edit.example/ferry'],
    ]);
    expect(all[1].id).toBe(byDefault[0].id);
    expect(all[0].id).not.toBe(all[1].id);
    // Each revision matches on its own words, and the time filters see each revision's time.
    expect((await ok({ q: 'cancelled' })).count).toBe(0);
    expect((await ok({ q: 'cancelled', include_edits: 'true' })).results.map((r: any) => r.title)).toEqual(['Ferry cancelled']);
    expect((await ok({ q: 'warnings', include_edits: 'true' })).results.map((r: any) => r.title)).toEqual(['Ferry delayed']);
    expect((await ok({ q: 'ferry', include_edits: 'true', since: iso(TF + 1) })).results.map((r: any) => r.title)).toEqual(['Ferry cancelled']);
    expect((await ok({ q: 'ferry', since: iso(TF + 1) })).count).toBe(0);
  });
});

// ---- paging --------------------------------------------------------------------------------

describe('GET /v1/news: cursor paging to the end', () => {
  it('sort=time: every page size gives the whole set once, newest first, in the one-page order', async () => {
    const whole = (await ok({ q: 'strike', limit: 100 })).results.map((r: any) => r.id);
    expect(whole).toHaveLength(STRIKES);
    for (const limits of [[7], [1], [3], [25], [65], [5, 13, 2]]) {
      const { rows, pages } = await pageAll({ q: 'strike' }, limits);
      const ids = rows.map((r) => r.id);
      expect(new Set(ids).size, `limits ${limits}`).toBe(ids.length);
      expect(rows.map(short).sort()).toEqual([...strikeUrls].sort());
      expect(ids).toEqual(whole);
      const times = rows.map((r) => r.event_time);
      expect([...times].sort().reverse()).toEqual(times);
      if (limits.length === 1) expect(pages).toBe(Math.ceil(STRIKES / limits[0]));
    }
  });

  it('sort=time with filters: paging a source, a time window and edits', async () => {
    const wire = strikeUrls.filter((_, i) => strikeSource(i) === WIRE).sort();
    const { rows } = await pageAll({ q: 'strike', sources: WIRE }, [4]);
    expect(rows.map(short).sort()).toEqual(wire);
    const since = strikeTime(10);
    const until = strikeTime(40);
    const windowed = await pageAll({ q: 'strike', since: iso(since), until: iso(until) }, [7]);
    const expected = strikeUrls.filter((_, i) => strikeTime(i) >= since && strikeTime(i) <= until).sort();
    expect(expected.length).toBe(33);
    expect(windowed.rows.map(short).sort()).toEqual(expected);
    const edits = await pageAll({ q: 'ferry OR strike', include_edits: 'true' }, [7]);
    expect(edits.rows).toHaveLength(STRIKES + 2);
    expect(new Set(edits.rows.map((r) => r.id)).size).toBe(STRIKES + 2);
  });

  it('sort=relevance: scores never rise across pages, no duplicate, the whole set (score ties across page edges)', async () => {
    const whole = (await ok({ q: 'strike', sort: 'relevance', limit: 100 })).results;
    for (const limits of [[7], [5], [16], [1, 6, 30]]) {
      const { rows } = await pageAll({ q: 'strike', sort: 'relevance' }, limits);
      const ids = rows.map((r) => r.id);
      expect(new Set(ids).size, `limits ${limits}`).toBe(ids.length);
      expect(rows.map(short).sort()).toEqual([...strikeUrls].sort());
      const scores = rows.map((r) => r.score);
      expect(scores.every((s) => typeof s === 'number')).toBe(true);
      for (let i = 1; i < scores.length; i++) expect(scores[i], `row ${i}, limits ${limits}`).toBeLessThanOrEqual(scores[i - 1]);
      expect(ids).toEqual(whole.map((r: any) => r.id));
      expect(scores).toEqual(whole.map((r: any) => r.score));
    }
  });

  it('sort=relevance over a mixed query pages completely too', async () => {
    const q = 'strike OR farm OR meteor';
    const whole = (await ok({ q, sort: 'relevance', limit: 100 })).results;
    expect(whole).toHaveLength(STRIKES + 2 + 7);
    const { rows } = await pageAll({ q, sort: 'relevance' }, [9]);
    expect(rows.map((r) => r.id)).toEqual(whole.map((r: any) => r.id));
  });
});

describe('GET /v1/news: cursors are bound to their filters', () => {
  const base = { q: 'strike', sources: WIRE, limit: 5 };

  it('limit may change between pages; any other parameter changed is bad_cursor', async () => {
    const whole = (await ok({ ...base, limit: 100 })).results.map((r: any) => r.id);
    const first = await ok(base);
    const cursor = first.next_cursor as string;
    const next = await ok({ ...base, limit: 11, cursor });
    expect(next.results.map((r: any) => r.id)).toEqual(whole.slice(5, 16));
    const changed: Params[] = [
      { q: 'strike port' },
      { q: 'strikes' },
      { sources: undefined },
      { sources: `${WIRE},${LEDGER}` },
      { sources: LEDGER },
      { sources: undefined, exclude_sources: LEDGER },
      { since: '2026-01-01T00:00:00Z' },
      { until: '2027-01-01T00:00:00Z' },
      { sort: 'relevance' },
      { include_edits: 'true' },
    ];
    for (const change of changed) {
      const res = await news({ ...base, ...change, cursor });
      expect([JSON.stringify(change), res.status, res.body?.error]).toEqual([JSON.stringify(change), 400, 'bad_cursor']);
      expectError(res, 400, 'bad_cursor');
    }
  });

  it('a relevance cursor is bound the same way', async () => {
    const p = { q: 'strike', sort: 'relevance', limit: 10 };
    const cursor = (await ok(p)).next_cursor as string;
    expect((await ok({ ...p, limit: 3, cursor })).count).toBe(3);
    for (const change of [
      { sort: undefined },
      { sort: 'time' },
      { q: 'strike OR farm' },
      { include_edits: 'true' },
      { exclude_sources: TOKYO },
      { since: iso(T0) },
    ]) {
      expectError(await news({ ...p, ...change, cursor }), 400, 'bad_cursor');
    }
  });

  it('a tampered, truncated or forged cursor is bad_cursor', async () => {
    const cursor = (await ok(base)).next_cursor as string;
    const [payload, sig] = cursor.split('.');
    const flip = (s: string, i: number) => `${s.slice(0, i)}${s[i] === 'A' ? 'B' : 'A'}${s.slice(i + 1)}`;
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const forgedPayload = Buffer.from(JSON.stringify({ ...decoded, t: decoded.t - 1 })).toString('base64url');
    const bad = [
      `${flip(payload, 3)}.${sig}`,
      `${payload}.${flip(sig, sig.length - 1)}`,
      `${payload}.${flip(sig, 0)}`,
      `${forgedPayload}.${sig}`,
      cursor.slice(0, -2),
      `${payload}.`,
      payload,
      `${cursor}.${sig}`,
      'not-a-cursor',
      '',
      'x'.repeat(2000),
    ];
    for (const c of bad) expectError(await news({ ...base, cursor: c }), 400, 'bad_cursor');
    // The untouched cursor still works.
    expect((await ok({ ...base, cursor })).count).toBe(5);
  });
});

// ---- edits -------------------------------------------------------------------------------

describe('GET /v1/news: an edit is searchable at once', () => {
  it('a revision stored after the index caught up is found by its new words; the removed words find the first revision only', async () => {
    const t = T0 + 600_000;
    const [w1] = h.service.store.writeRevisions([
      rev('edit.example/bridge', WIRE, 'Bridge closed', 'The bridge is closed.', 'Engineers inspect the bridge.', t),
    ]);
    expect(w1.status).toBe('new');
    const before = await ok({ q: 'bridge' });
    expect(before.results.map((r: any) => [r.title, r.event_time])).toEqual([['Bridge closed', iso(t)]]);
    expect(h.service.news.behind()).toBe(0);
    expect((await ok({ q: 'reopened', include_edits: 'true' })).count).toBe(0);

    const [w2] = h.service.store.writeRevisions([
      rev('edit.example/bridge', WIRE, 'Bridge reopened', 'The bridge reopened today.', 'Traffic flows again over the bridge.', t, t + 7200),
    ]);
    expect(w2.status).toBe('new');
    expect(h.service.news.behind()).toBe(1);
    const found = (await ok({ q: 'reopened', include_edits: 'true' })).results;
    expect(found.map((r: any) => [r.title, r.event_time, short(r)])).toEqual([['Bridge reopened', iso(t + 7200), 'edit.example/bridge']]);
    expect(found[0].highlight).toBe('The bridge <mark>reopened</mark> today.');
    expect(h.service.news.behind()).toBe(0);
    // "inspect" left the text with the edit: only the first revision holds it.
    expect((await ok({ q: 'inspect', include_edits: 'true' })).results.map((r: any) => r.title)).toEqual(['Bridge closed']);
    expect((await ok({ q: 'inspect' })).results.map((r: any) => r.title)).toEqual(['Bridge closed']);
    // Default rows stay the first publication; with edits both revisions are rows.
    expect((await ok({ q: 'reopened' })).count).toBe(0);
    expect((await ok({ q: 'bridge' })).results.map((r: any) => r.title)).toEqual(['Bridge closed']);
    expect((await ok({ q: 'bridge', include_edits: 'true' })).results.map((r: any) => r.title)).toEqual(['Bridge reopened', 'Bridge closed']);
  });
});

// ---- highlights -------------------------------------------------------------------------

describe('GET /v1/news: highlight', () => {
  const hl = async (q: string) => {
    const body = await ok({ q });
    expect(body.count, q).toBe(1);
    return body.results[0].highlight as string;
  };

  it('marks the matched word as written in the text, whatever the case of the query', async () => {
    expect((await ok({ q: 'WIND' })).results.map((r: any) => r.highlight)).toEqual([
      'Solar power and <mark>wind</mark> share the grid.',
      'A <mark>wind</mark> farm opens.',
    ]);
    expect(await hl('QUOKKA')).toBe('<mark>Quokka</mark> sighting');
    expect(await hl('strassenbahn')).toBe('Über die <mark>Straßenbahn</mark>.');
  });

  it('marks every matched word of the passage, prefixes whole, phrases word by word', async () => {
    expect((await ok({ q: 'hyd*' })).results[0].highlight).toBe('A <mark>hydro</mark> dam opens.');
    expect((await ok({ q: 'hydro river' })).results[0].highlight).toBe('A <mark>hydro</mark> dam opens.');
    expect((await ok({ q: '"rate cut"' })).results[0].highlight).toBe('A <mark>rate</mark> <mark>cut</mark> was announced by the central bank.');
    expect((await ok({ q: 'Hauptstraße' })).results[0].highlight).toBe('Umleitung über die <mark>Hauptstrasse</mark> nach Munchen.');
    expect((await ok({ q: 'MUNCHEN', sources: BERLIN })).results.map((r: any) => r.highlight)).toEqual([
      'Umleitung über die Hauptstrasse nach <mark>Munchen</mark>.',
      'Die Straße in <mark>München</mark>',
    ]);
    expect((await ok({ q: 'nasa', limit: 1 })).results[0].highlight).toBe('<mark>NASA</mark> budget');
    expect((await ok({ q: 'launch' })).results[0].highlight).toBe('ＮＡＳＡ <mark>ｌａｕｎｃｈ</mark>');
  });

  it('falls back to the headline when only it matches; an excluded word is not marked', async () => {
    expect(await hl('quokka')).toBe('<mark>Quokka</mark> sighting');
    expect(await hl('solar -wind')).toBe('An op ed on <mark>solar</mark>.');
  });

  it('marks Japanese and Chinese words inside unspaced text', async () => {
    expect(await hl('知事')).toBe('新しい<mark>知事</mark>が選ばれました。投票率は高かった。');
    expect(await hl('投票率')).toBe('新しい知事が選ばれました。<mark>投票率</mark>は高かった。');
    expect(await hl('京都')).toBe('東<mark>京都</mark>の選挙が終わった。');
    expect(await hl('政策')).toBe('新<mark>政策</mark>将于明年实施。');
    expect(await hl('迎')).toBe('市民对此表示欢<mark>迎</mark>。');
  });

  it('a one-character CJK query marks that character, not the bigram it heads', async () => {
    expect(await hl('晴')).toBe('大阪は<mark>晴</mark>れ。');
    expect((await ok({ q: '雨', sources: TOKYO })).results[0].highlight).toBe('明日は<mark>雨</mark>が降るでしょう。');
  });

  it('escapes HTML in the stored text around the marks', async () => {
    expect(await hl('zebra')).toBe('Tags like &lt;b&gt;<mark>Zebra</mark>&lt;/b&gt; &amp; a &lt; sign.');
    expect(await hl('markup')).toBe('<mark>Markup</mark> &amp; more');
  });

  it('never cuts a character outside the BMP in half at the passage edge', async () => {
    // 𠮷 (U+20BB7, a CJK Extension B character) and 🎉 are two UTF-16 units each.
    const jp = await hl('金沢');
    expect(jp).toContain('<mark>金沢</mark>の店が開いた。');
    const party = await hl('pelican');
    expect(party).toContain('<mark>pelican</mark> spotted at the party.');
    expect([jp, party].map((s) => [JSON.stringify(s.slice(0, 3)), isWellFormed(s)])).toEqual([
      [expect.any(String), true],
      [expect.any(String), true],
    ]);
  });
});

// ---- errors ------------------------------------------------------------------------------

describe('GET /v1/news: errors', () => {
  it('bad_request: q missing or too long, limit, sort, include_edits, since/until, both source lists, an unknown parameter', async () => {
    const cases: [string, string | RegExp | undefined][] = [
      ['', /q/],
      ['limit=5', /q/],
      [qs({ q: 'x'.repeat(1001) }), /q/],
      ['q=a&q=b', undefined],
      [qs({ q: 'strike', limit: 0 }), /limit/],
      [qs({ q: 'strike', limit: 101 }), /limit/],
      [qs({ q: 'strike', limit: 'abc' }), /limit/],
      [qs({ q: 'strike', limit: -1 }), /limit/],
      [qs({ q: 'strike', limit: '2.5' }), /limit/],
      [qs({ q: 'strike', limit: '' }), /limit/],
      [qs({ q: 'strike', sort: 'foo' }), /sort/],
      [qs({ q: 'strike', sort: 'Relevance' }), /sort/],
      [qs({ q: 'strike', include_edits: 'yes' }), /include_edits/],
      [qs({ q: 'strike', include_edits: '1' }), /include_edits/],
      [qs({ q: 'strike', since: 'yesterday' }), /since/],
      [qs({ q: 'strike', since: '2026-13-01T00:00:00Z' }), /since/],
      [qs({ q: 'strike', until: '2026-04-01T25:00:00Z' }), /until/],
      [qs({ q: 'strike', since: iso(TB + 1), until: iso(TB) }), /since/],
      [qs({ q: 'strike', sources: WIRE, exclude_sources: LEDGER }), /sources/],
      [qs({ q: 'strike', sources: `${WIRE},` }), /sources/],
      [qs({ q: 'strike', colour: 'red' }), /colour/],
      [qs({ q: 's*' }), /prefix|\*/],
      [qs({ q: 'strike é*' }), /prefix|\*/],
    ];
    for (const [query, names] of cases) {
      const res = await news(query);
      expect([query.slice(0, 50), res.status, res.body?.error]).toEqual([query.slice(0, 50), 400, 'bad_request']);
      expectError(res, 400, 'bad_request', names === undefined ? {} : { names });
      expect(res.body.detail).toBe(res.body.message);
    }
    // At the boundaries the same parameters are fine.
    expect((await ok({ q: 'x'.repeat(1000) })).count).toBe(0);
    expect((await ok({ q: 'strike', since: iso(TB), until: iso(TB) })).count).toBe(0);
  });

  it('a validation message says what is allowed', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ q: 'strike', include_edits: 'yes' }, 'include_edits: true or false, got "yes"'],
      [{ q: 'strike', sort: 'newest' }, 'sort: one of time, relevance, got "newest"'],
      [{ q: 'strike', limit: '0' }, 'limit: an integer from 1 to 100, got 0'],
      [{ q: 'strike', since: '05/01/2026' }, 'since: an RFC 3339 date-time (2026-05-01T00:00:00Z) or a date (2026-05-01, a whole UTC day), got "05/01/2026"'],
    ];
    for (const [query, message] of cases) {
      const res = await news(qs(query));
      expectError(res, 400, 'bad_request');
      expect(res.body.message).toBe(message);
    }
  });

  it('empty_query: nothing searchable, or only excluded terms', async () => {
    for (const q of ['', ' ', '!?', '... --- ***', '"', '""', '-strike', '-"port strike"', '-strike -port', 'NOT strike', '*', '。、']) {
      const res = await news({ q });
      expect([q, res.status, res.body?.error]).toEqual([q, 400, 'empty_query']);
      expectError(res, 400, 'empty_query');
    }
  });

  it('unknown_source: a name that is not stored, in either list, named in the message', async () => {
    expectError(await news({ q: 'strike', sources: 'Nowhere Gazette' }), 400, 'unknown_source', { names: '"Nowhere Gazette"' });
    expectError(await news({ q: 'strike', sources: `${WIRE},Nowhere Gazette` }), 400, 'unknown_source', { names: '"Nowhere Gazette"' });
    expectError(await news({ q: 'strike', exclude_sources: 'Nowhere Gazette' }), 400, 'unknown_source', { names: '"Nowhere Gazette"' });
    // Names are exact: case matters.
    expectError(await news({ q: 'strike', sources: 'wire one' }), 400, 'unknown_source', { names: '"wire one"' });
  });

  it('bad_cursor: the body of the error', async () => {
    const res = await news({ q: 'strike', cursor: 'abc.def' });
    expectError(res, 400, 'bad_cursor');
    expect(res.body.detail).toBe(res.body.message);
  });

  it('unauthorized without a key or with a wrong one', async () => {
    expectError(await h.inject({ url: '/v1/news?q=strike', noAuth: true }), 401, 'unauthorized');
    expectError(await h.inject({ url: '/v1/news?q=strike', noAuth: true, headers: { authorization: 'Bearer nmb_wrong' } }), 401, 'unauthorized');
    // The harness's own bearer key works.
    const res = await h.inject({ url: '/v1/news?q=strike', noAuth: true, headers: h.bearerHeaders });
    expect(res.status, res.raw).toBe(200);
  });
});

// ---- metering ----------------------------------------------------------------------------

describe('GET /v1/news: metering', () => {
  it('a customer pays 1 credit a call and nothing for a 400', async () => {
    const account = h.service.billing.createAccount('news metering');
    const key = h.service.keys.create({ scheme: 'bearer', name: 'news', account: account.id });
    const auth = { authorization: `Bearer ${key.secret}` };
    const call = (p: Params) => h.inject({ url: `/v1/news?${qs(p)}`, noAuth: true, headers: auth });
    const start = h.service.billing.balance(account.id);
    expect(start).toBeGreaterThan(5);

    const okRes = await call({ q: 'strike' });
    expect(okRes.status, okRes.raw).toBe(200);
    expect(okRes.headers['x-credits-charged']).toBe('1');
    expect(h.service.billing.balance(account.id)).toBe(start - 1);
    expect(okRes.headers['x-credits-remaining']).toBe(String(start - 1));

    const empty = await call({ q: 'xylophone' }); // a 200 with no rows is a call all the same
    expect(empty.status).toBe(200);
    expect(empty.headers['x-credits-charged']).toBe('1');
    expect(h.service.billing.balance(account.id)).toBe(start - 2);

    // Refused by the schema, or by the handler (refunded): nothing is billed either way.
    for (const p of [
      { q: 'strike', limit: 0 },
      { q: 'strike', colour: 'red' },
      { q: '-strike' },
      { q: 'strike', sources: 'Nowhere' },
      { q: 'strike', cursor: 'x.y' },
      { q: 's*' },
    ]) {
      const res = await call(p);
      expect([qs(p), res.status]).toEqual([qs(p), 400]);
      expect(res.headers['x-credits-charged']).toBe('0');
      expect(h.service.billing.balance(account.id)).toBe(start - 2);
    }
    const paged = await call({ q: 'strike', limit: 3 });
    const next = await call({ q: 'strike', limit: 3, cursor: paged.body.next_cursor });
    expect(next.status).toBe(200);
    expect(h.service.billing.balance(account.id)).toBe(start - 4);
  });
});

// ---- fuzz --------------------------------------------------------------------------------

describe('GET /v1/news: fuzz', () => {
  it('300 random queries never answer a 5xx: a 200 of the right shape or a 400 from the catalogue', async () => {
    const rng = new Rng(20260401);
    const atoms = [
      'strike',
      'port',
      'Straße',
      'MÜNCHEN',
      '東京',
      '知事',
      '雨',
      '政府',
      '"',
      '"',
      '-',
      '-"',
      '*',
      '**',
      ' OR ',
      'OR',
      ' AND ',
      'NOT ',
      '(',
      ')',
      ':',
      '^',
      '+',
      'NEAR',
      'NEAR(',
      '{',
      '}',
      ',',
      "'",
      '\\',
      '%',
      '&',
      '#',
      '?',
      '=',
      '/',
      '.',
      '\u200b',
      '\u0301',
      '\u00a0',
      '\t',
      '\n',
      '😀',
      '𠮷',
      'ＡＢＣ',
      'ß',
      'a*',
      'ab*',
      'é*',
      '0',
      '1e9',
      'rowid',
      'news_fts',
      'MATCH',
      ';',
      '--',
    ];
    const ranges: [number, number][] = [
      [0x01, 0x1f],
      [0x20, 0x7e],
      [0xa0, 0x24f],
      [0x300, 0x36f],
      [0x370, 0x4ff],
      [0x590, 0x6ff],
      [0x900, 0x97f],
      [0xe00, 0xe7f],
      [0x1100, 0x11ff],
      [0x3000, 0x30ff],
      [0x4e00, 0x9fff],
      [0xac00, 0xd7a3],
      [0xe000, 0xf8ff],
      [0xfe00, 0xfe0f],
      [0xff00, 0xffef],
      [0x1f300, 0x1faff],
      [0x20000, 0x2a6df],
      [0xe0000, 0xe007f],
    ];
    const randomChar = () => {
      const [lo, hi] = rng.pick(ranges);
      return String.fromCodePoint(rng.range(lo, hi));
    };
    const randomQuery = (i: number) => {
      const long = i % 25 === 0;
      const n = long ? rng.range(200, 700) : rng.range(1, 12);
      let s = '';
      for (let k = 0; k < n; k++) {
        s += rng.chance(0.5) ? rng.pick(atoms) : randomChar();
        if (rng.chance(0.4)) s += ' ';
      }
      return s;
    };
    const codes = new Set(['bad_request', 'empty_query', 'bad_cursor', 'unknown_source']);
    const seen = new Map<number, number>();
    for (let i = 0; i < 300; i++) {
      const p: Params = { q: randomQuery(i) };
      if (rng.chance(0.25)) p.sort = rng.pick(['relevance', 'time', 'best']);
      if (rng.chance(0.2)) p.limit = rng.pick(['1', '7', '100', '0', '-3', 'ten']);
      if (rng.chance(0.15)) p.include_edits = rng.pick(['true', 'false', 'maybe']);
      if (rng.chance(0.1)) p.sources = rng.pick([WIRE, `${TOKYO},${BERLIN}`, 'Nowhere']);
      if (rng.chance(0.1)) p.since = rng.pick([iso(T0), '2026-04-01', 'soon', iso(T0 + 1e6)]);
      if (rng.chance(0.05)) p.cursor = randomQuery(1);
      const res = await news(p);
      seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
      const ctx = `${qs(p).slice(0, 300)} → ${res.status} ${res.raw.slice(0, 200)}`;
      expect(res.status, ctx).toBeLessThan(500);
      if (res.status === 200) {
        expect(res.body.count, ctx).toBe(res.body.results.length);
        expect(res.body.results.length, ctx).toBeLessThanOrEqual(Number(p.limit ?? 25));
      } else {
        expect(res.status, ctx).toBe(400);
        expect(codes.has(res.body?.error), ctx).toBe(true);
        expect(typeof res.body.message, ctx).toBe('string');
      }
    }
    // Both outcomes were exercised.
    expect(seen.get(200) ?? 0).toBeGreaterThan(50);
    expect(seen.get(400) ?? 0).toBeGreaterThan(30);
    expect([...seen.keys()].sort()).toEqual([200, 400]);
  });
});

// ---- rebuild -----------------------------------------------------------------------------

describe('GET /v1/news: the index rebuilt from LMDB', () => {
  it('reset empties the index; the next request catches up and answers the same', async () => {
    const probes: Params[] = [
      { q: 'strike', limit: 100 },
      { q: 'strike', sort: 'relevance', limit: 100 },
      { q: 'ferry OR bridge', include_edits: 'true' },
      { q: '知事 OR 雨 OR Straße' },
      { q: 'meteor', since: iso(TB), until: iso(TE) },
    ];
    const before = [];
    for (const p of probes) before.push(await ok(p));
    const cursor = (await ok({ q: 'strike', limit: 10 })).next_cursor;

    const total = h.service.store.nextOrd();
    h.service.keyword.reset('news');
    expect(h.service.keyword.indexed('news')).toBe(0);
    expect(h.service.keyword.db.prepare('SELECT count(*) FROM news_rows').pluck().get()).toBe(0);
    expect(h.service.news.behind()).toBe(total);

    const after = [];
    for (const p of probes) after.push(await ok(p));
    expect(after).toEqual(before);
    expect(h.service.news.behind()).toBe(0);
    expect(h.service.keyword.db.prepare('SELECT count(*) FROM news_rows').pluck().get()).toBe(total);
    // A cursor issued before the rebuild goes on where it was.
    const next = await ok({ q: 'strike', limit: 10, cursor });
    expect(next.results.map((r: any) => r.id)).toEqual(before[0].results.slice(10, 20).map((r: any) => r.id));
  });
});
