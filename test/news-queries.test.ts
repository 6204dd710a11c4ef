/**
 * GET /v1/news, black-box (a second, hand-written corpus): the query language, folding (German,
 * Japanese), cursor paging to the end under both sorts, cursors bound to their filters,
 * edits, highlights, metering, a fuzz, and a rebuild of the index from LMDB.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RevisionInput } from '../src/store/index.js';
import { startHarness, type Harness } from './helpers/service.js';

let h: Harness;
const T0 = Date.parse('2026-04-01T00:00:00Z') / 1000;
const iso = (t: number) => new Date(t * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

const rev = (url: string, source: string, title: string, body: string, text: string, publishedAt: number, revisedAt?: number): RevisionInput => ({
  url: `https://${url}`,
  source,
  title,
  body,
  text,
  publishedAt,
  revisedAt,
  chunks: [],
});

beforeAll(async () => {
  h = await startHarness({ corpus: null });
  const docs: RevisionInput[] = [];
  // 70 port-strike articles over 3 sources; pairs share a second (the tie-break).
  for (let i = 0; i < 70; i++) {
    const source = ['Wire One', 'Daily Ledger', 'Harbour Post'][i % 3];
    const extra = i % 2 === 0 ? 'Dock workers walked out at dawn.' : 'Talks resumed with the union.';
    docs.push(
      rev(
        `port.example/${i}`,
        source,
        `Port strike day ${i}`,
        `Port strike update ${i}.`,
        `${extra} The port strike continues. Number ${i}.`,
        T0 + Math.floor(i / 2) * 3600,
      ),
    );
  }
  docs.push(
    rev('misc.example/phrase', 'Wire One', 'Rates', 'The bank cut rates.', 'A rate cut was announced by the central bank.', T0 + 100_000),
    rev('misc.example/apart', 'Wire One', 'Rates apart', 'Cut the budget.', 'The rate of inflation fell; the government made a cut.', T0 + 100_001),
    rev('misc.example/wind', 'Daily Ledger', 'Wind farm', 'A wind farm opens.', 'Wind power grows offshore.', T0 + 100_002),
    rev('misc.example/solar', 'Daily Ledger', 'Solar farm', 'A solar farm opens.', 'Solar power and wind share the grid.', T0 + 100_003),
    rev('misc.example/opinion', 'Harbour Post', 'Solar opinion', 'An op ed on solar.', 'Opinion: solar subsidies should end.', T0 + 100_004),
    rev(
      'de.example/1',
      'Berliner Blatt',
      'Die Straße in München',
      'Über die Straßenbahn in München.',
      'Die Bürger feiern das Straßenfest. Café Müller öffnet.',
      T0 + 200_000,
    ),
    rev('de.example/2', 'Berliner Blatt', 'Strasse gesperrt', 'Die Strasse bleibt gesperrt.', 'Umleitung über die Hauptstrasse.', T0 + 200_001),
    rev('jp.example/1', 'Tokyo Shimbun', '東京都知事選挙の結果', '東京都の選挙が終わった。', '新しい知事が選ばれました。投票率は高かった。', T0 + 300_000),
    rev('jp.example/2', 'Tokyo Shimbun', '大阪の天気', '大阪は晴れ。', '明日は雨が降るでしょう。', T0 + 300_001),
    rev('html.example/1', 'Harbour Post', 'Markup & more', 'Tags like <script> and a & sign near keyword zebra.', '', T0 + 400_000),
  );
  h.service.store.writeRevisions(docs);
}, 60_000);

afterAll(async () => {
  await h?.close();
});

const news = async (qs: string, headers?: Record<string, string>) => h.inject({ url: `/v1/news?${qs}`, headers });
const urls = async (qs: string) => (await news(`limit=100&${qs}`)).body.results.map((r: any) => r.source_url.replace('https://', '')).sort();

describe('GET /v1/news: results', () => {
  it('answers the documented shape, newest first', async () => {
    const res = await news('q=wind');
    expect(res.status, res.raw).toBe(200);
    expect(res.body.count).toBe(2);
    expect(res.body.next_cursor).toBeNull();
    const [first, second] = res.body.results;
    expect(first).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      title: 'Solar farm',
      body: 'A solar farm opens.',
      source_name: 'Daily Ledger',
      source_url: 'https://misc.example/solar',
      event_time: iso(T0 + 100_003),
      highlight: 'Solar power and <mark>wind</mark> share the grid.',
    });
    expect(second.title).toBe('Wind farm');
    expect(second.highlight).toBe('A <mark>wind</mark> farm opens.');
    expect(first).not.toHaveProperty('score');
  });

  it('ANDs words, matches phrases, OR, exclusion and prefixes', async () => {
    expect(await urls('q=rate%20cut')).toEqual(['misc.example/apart', 'misc.example/phrase']);
    expect(await urls('q=%22rate%20cut%22')).toEqual(['misc.example/phrase']);
    expect(await urls('q=wind%20OR%20rate%20farm')).toEqual(['misc.example/solar', 'misc.example/wind']);
    expect(await urls('q=solar%20-wind')).toEqual(['misc.example/opinion']);
    expect(await urls('q=solar%20-%22op%20ed%22')).toEqual(['misc.example/solar']);
    expect(await urls('q=solar%20NOT%20opinion')).toEqual(['misc.example/solar']);
    expect(await urls('q=subsid*')).toEqual(['misc.example/opinion']);
  });

  it('folds German: case, umlauts and ß', async () => {
    expect(await urls('q=strasse')).toEqual(['de.example/1', 'de.example/2']);
    expect(await urls('q=STRA%C3%9FE%20gesperrt')).toEqual(['de.example/2']);
    expect(await urls('q=stra%C3%9Fenb*')).toEqual(['de.example/1']); // Straßenbahn, a word of its own
    expect(await urls('q=hauptstrasse')).toEqual(['de.example/2']);
    expect(await urls('q=MUNCHEN')).toEqual(['de.example/1']);
    expect(await urls('q=m%C3%BCnchen%20uber')).toEqual(['de.example/1']);
    expect(await urls('q=cafe%20m%C3%BCller')).toEqual(['de.example/1']);
    const hit = (await news('q=muenchen%20OR%20munchen')).body.results[0];
    expect(hit.highlight).toContain('<mark>München</mark>');
  });

  it('finds Japanese words inside unspaced text, and single characters', async () => {
    expect(await urls(`q=${encodeURIComponent('知事')}`)).toEqual(['jp.example/1']);
    expect(await urls(`q=${encodeURIComponent('選挙')}`)).toEqual(['jp.example/1']);
    expect(await urls(`q=${encodeURIComponent('投票率')}`)).toEqual(['jp.example/1']);
    expect(await urls(`q=${encodeURIComponent('大阪')}`)).toEqual(['jp.example/2']);
    expect(await urls(`q=${encodeURIComponent('雨')}`)).toEqual(['jp.example/2']);
    expect(await urls(`q=${encodeURIComponent('京都')}`)).toEqual(['jp.example/1']); // 東京都 holds 京都 as written
    expect(await urls(`q=${encodeURIComponent('選挙 -大阪')}`)).toEqual(['jp.example/1']);
    const h1 = (await news(`q=${encodeURIComponent('知事')}`)).body.results[0];
    expect(h1.highlight).toBe('新しい<mark>知事</mark>が選ばれました。投票率は高かった。');
    expect(await urls(`q=${encodeURIComponent('東京')}`)).toEqual(['jp.example/1']);
    expect(await urls(`q=${encodeURIComponent('京大')}`)).toEqual([]);
  });

  it('escapes the stored text around the marks', async () => {
    const r = (await news('q=zebra')).body.results[0];
    expect(r.highlight).toBe('Tags like &lt;script&gt; and a &amp; sign near keyword <mark>zebra</mark>.');
  });

  it('ranks by BM25 under sort=relevance, with a score', async () => {
    // Newest first the text-only hit leads; by relevance the headline hit does.
    expect((await news('q=wind')).body.results.map((r: any) => r.title)).toEqual(['Solar farm', 'Wind farm']);
    const res = await news('q=wind&sort=relevance');
    expect(res.body.results.map((r: any) => r.title)).toEqual(['Wind farm', 'Solar farm']);
    const scores = res.body.results.map((r: any) => r.score);
    expect(scores.every((s: unknown) => typeof s === 'number' && s > 0)).toBe(true);
    expect(scores[0]).toBeGreaterThan(scores[1]);
  });

  it('filters by since/until (inclusive), sources and exclude_sources', async () => {
    const within = await urls(`q=strike&since=${iso(T0 + 3600)}&until=${iso(T0 + 2 * 3600)}`);
    expect(within).toEqual(['port.example/2', 'port.example/3', 'port.example/4', 'port.example/5']);
    expect(await urls('q=strike&since=2026-04-01&until=2026-04-01T00:00:00Z')).toEqual(['port.example/0', 'port.example/1']);
    expect((await urls('q=strike&sources=Wire%20One')).length).toBe(24);
    expect((await urls('q=strike&sources=Wire%20One,Harbour%20Post')).length).toBe(47);
    expect((await urls('q=strike&exclude_sources=Wire%20One')).length).toBe(46);
  });
});

describe('GET /v1/news: paging', () => {
  async function pageAll(qs: string, limit: number): Promise<any[]> {
    const out: any[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 100; i++) {
      const res = await news(`${qs}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status, res.raw).toBe(200);
      expect(res.body.count).toBe(res.body.results.length);
      out.push(...res.body.results);
      cursor = res.body.next_cursor;
      if (!cursor) return out;
    }
    throw new Error('did not end');
  }

  it('pages newest first to the end with no duplicate, whatever the page size', async () => {
    for (const limit of [7, 25, 100]) {
      const all = await pageAll('q=strike', limit);
      expect(all).toHaveLength(70);
      expect(new Set(all.map((r) => r.id)).size).toBe(70);
      const times = all.map((r) => Date.parse(r.event_time));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
    }
  });

  it('pages under sort=relevance with scores non-increasing across pages', async () => {
    const all = await pageAll('q=strike%20OR%20dawn&sort=relevance', 9);
    expect(all).toHaveLength(70);
    expect(new Set(all.map((r) => r.id)).size).toBe(70);
    const scores = all.map((r) => r.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('lets limit change between pages but binds every other parameter', async () => {
    const first = await news('q=strike&limit=5&sources=Wire%20One');
    const cursor = encodeURIComponent(first.body.next_cursor);
    expect((await news(`q=strike&limit=11&sources=Wire%20One&cursor=${cursor}`)).status).toBe(200);
    for (const changed of [
      'q=strikes&sources=Wire%20One',
      'q=strike',
      'q=strike&sources=Wire%20One,Daily%20Ledger',
      'q=strike&exclude_sources=Daily%20Ledger',
      'q=strike&sources=Wire%20One&since=2026-01-01T00:00:00Z',
      'q=strike&sources=Wire%20One&until=2027-01-01T00:00:00Z',
      'q=strike&sources=Wire%20One&sort=relevance',
      'q=strike&sources=Wire%20One&include_edits=true',
    ]) {
      const res = await news(`${changed}&limit=5&cursor=${cursor}`);
      expect([changed, res.status, res.body.error]).toEqual([changed, 400, 'bad_cursor']);
    }
    const raw = first.body.next_cursor as string;
    const tampered = `${raw.slice(0, 5)}${raw[5] === 'A' ? 'B' : 'A'}${raw.slice(6)}`;
    expect((await news(`q=strike&limit=5&sources=Wire%20One&cursor=${encodeURIComponent(tampered)}`)).body.error).toBe('bad_cursor');
    expect((await news('q=strike&cursor=not-a-cursor')).body.error).toBe('bad_cursor');
  });
});

describe('GET /v1/news: edits', () => {
  it('shows first publications by default and every revision with include_edits; an edit is found by its new words', async () => {
    const url = 'https://edit.example/story';
    h.service.store.writeRevisions([
      rev('edit.example/story', 'Wire One', 'Bridge closed', 'The bridge is closed.', 'Engineers inspect the bridge.', T0 + 500_000),
    ]);
    expect((await news('q=bridge')).body.results.map((r: any) => r.title)).toEqual(['Bridge closed']);
    expect((await news('q=reopened')).body.count).toBe(0);
    h.service.store.writeRevisions([
      rev(
        'edit.example/story',
        'Wire One',
        'Bridge reopened',
        'The bridge reopened today.',
        'Traffic flows again over the bridge.',
        T0 + 500_000,
        T0 + 510_000,
      ),
    ]);
    const edits = (await news('q=bridge&include_edits=true')).body.results;
    expect(edits.map((r: any) => [r.title, r.event_time])).toEqual([
      ['Bridge reopened', iso(T0 + 510_000)],
      ['Bridge closed', iso(T0 + 500_000)],
    ]);
    expect(edits.every((r: any) => r.source_url === url)).toBe(true);
    expect((await news('q=reopened&include_edits=true')).body.results.map((r: any) => r.title)).toEqual(['Bridge reopened']);
    // Default rows are first publications, matched on their own words.
    expect((await news('q=reopened')).body.count).toBe(0);
    expect((await news('q=bridge')).body.results.map((r: any) => r.title)).toEqual(['Bridge closed']);
    expect((await news('q=inspect&include_edits=true')).body.results.map((r: any) => r.title)).toEqual(['Bridge closed']);
  });
});

describe('GET /v1/news: errors', () => {
  it('answers each error with its catalogue code and body', async () => {
    const cases: [string, number, string][] = [
      ['', 400, 'bad_request'],
      ['q=', 400, 'empty_query'],
      ['q=%21%3F%20...', 400, 'empty_query'],
      ['q=-strike', 400, 'empty_query'],
      ['q=strike&sources=Nowhere', 400, 'unknown_source'],
      ['q=strike&exclude_sources=Wire%20One,Nowhere', 400, 'unknown_source'],
      ['q=strike&sources=Wire%20One&exclude_sources=Daily%20Ledger', 400, 'bad_request'],
      ['q=strike&sources=', 400, 'bad_request'],
      ['q=strike&limit=0', 400, 'bad_request'],
      ['q=strike&limit=101', 400, 'bad_request'],
      ['q=strike&limit=abc', 400, 'bad_request'],
      ['q=strike&sort=newest', 400, 'bad_request'],
      ['q=strike&include_edits=yes', 400, 'bad_request'],
      ['q=strike&since=yesterday', 400, 'bad_request'],
      ['q=strike&since=2026-05-01T00:00:00Z&until=2026-04-01T00:00:00Z', 400, 'bad_request'],
      ['q=strike&colour=red', 400, 'bad_request'],
      ['q=s*', 400, 'bad_request'],
      ['q=a&q=b', 400, 'bad_request'],
      [`q=${'x'.repeat(1001)}`, 400, 'bad_request'],
    ];
    for (const [qs, status, code] of cases) {
      const res = await news(qs);
      expect([qs.slice(0, 60), res.status, res.body.error]).toEqual([qs.slice(0, 60), status, code]);
      expect(typeof res.body.message).toBe('string');
      expect(res.body.detail).toBe(res.body.message);
    }
    expect((await news('q=strike&sources=Nowhere')).body.message).toContain('"Nowhere"');
    expect((await news('q=strike&colour=red')).body.message).toContain('colour');
    const noKey = await h.inject({ url: '/v1/news?q=strike', noAuth: true });
    expect([noKey.status, noKey.body.error]).toEqual([401, 'unauthorized']);
  });

  it('never answers a 5xx to random input', async () => {
    let seed = 99;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const parts = [
      'strike',
      'port',
      '"',
      '-',
      '*',
      'OR',
      'AND',
      'NOT',
      ' ',
      '東京',
      'é',
      'ß',
      '(',
      ')',
      ':',
      '^',
      '+',
      'NEAR',
      '{',
      '}',
      '\u200b',
      '😀',
      '\u0301',
      ',',
      '%',
      '0',
    ];
    const word = (n: number) => Array.from({ length: n }, () => parts[Math.floor(rnd() * parts.length)]).join(rnd() < 0.5 ? ' ' : '');
    for (let i = 0; i < 300; i++) {
      const params: string[] = [`q=${encodeURIComponent(word(1 + Math.floor(rnd() * (i % 50 === 0 ? 400 : 12))))}`];
      if (rnd() < 0.2) params.push(`sort=${rnd() < 0.5 ? 'relevance' : word(1)}`);
      if (rnd() < 0.2) params.push(`limit=${encodeURIComponent(word(1))}`);
      if (rnd() < 0.1) params.push(`since=${encodeURIComponent(word(2))}`);
      if (rnd() < 0.1) params.push(`cursor=${encodeURIComponent(word(3))}`);
      const res = await news(params.join('&'));
      expect(res.status, `${params.join('&')}: ${res.raw}`).toBeLessThan(500);
      if (res.status !== 200) expect(['bad_request', 'empty_query', 'bad_cursor']).toContain(res.body.error);
    }
  });
});

describe('GET /v1/news: metering and rebuild', () => {
  it('charges a customer 1 credit a call and nothing for a 400', async () => {
    const account = h.service.billing.createAccount('news test');
    const key = h.service.keys.create({ scheme: 'bearer', name: 'news', account: account.id });
    const auth = { authorization: `Bearer ${key.secret}`, 'x-gateway-key': undefined as unknown as string, 'x-gateway-host': undefined as unknown as string };
    const before = h.service.billing.balance(account.id);
    const ok = await news('q=strike', auth);
    expect(ok.status, ok.raw).toBe(200);
    expect(ok.headers['x-credits-charged']).toBe('1');
    expect(h.service.billing.balance(account.id)).toBe(before - 1);
    const bad = await news('q=strike&limit=0', auth);
    expect(bad.status).toBe(400);
    expect(h.service.billing.balance(account.id)).toBe(before - 1);
  });

  it('rebuilds from LMDB after the index is emptied', async () => {
    const before = (await news('q=strike&limit=100')).body.results.map((r: any) => r.id);
    h.service.keyword.reset('news');
    expect(h.service.news.behind()).toBeGreaterThan(70);
    const after = (await news('q=strike&limit=100')).body.results.map((r: any) => r.id);
    expect(after).toEqual(before);
    expect(h.service.news.behind()).toBe(0);
  });
});
