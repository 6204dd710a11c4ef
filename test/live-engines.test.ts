/**
 * The live engines beside the marketplace and contacts, black-box, against one loopback site
 * standing in for every upstream (the *_URL settings point at it) and serving the captured
 * pages (web search, articles) and the synthetic ones: each engine's parameters, page rules
 * and errors, the upstream URL it builds, the launch leaderboard's Pacific-time "today" across
 * the UTC date line and a DST change (the service runs on a clock the tests move), credits
 * in the ledger, and a fuzz of every live path that must never answer a 500.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/http/app.js';
import { openService } from '../src/service.js';
import { ROOT } from './helpers/cli.js';
import { Rng } from './helpers/rng.js';
import { makeTempDir, type App, type Service } from './helpers/service.js';

const PAGES = path.join(ROOT, 'test/fixtures/pages');
const page = (p: string) => fs.readFileSync(path.join(PAGES, p));
const ROBOT = '<html><head><title>Robot Check</title></head><body><div class="g-recaptcha"></div></body></html>';
const DDG_NONE =
  '<html><body><div class="serp__results"><div id="links" class="results"><div class="result results_links_deep highlight_d result--no-result"><div class="no-results">No  results.</div></div></div></div></body></html>';

const requested: string[] = [];
const held: (() => void)[] = [];
let server: http.Server;
let origin: string;
let service: Service;
let app: App;
let now = Date.parse('2026-11-23T20:00:00Z');
let operator: Record<string, string>;

function site(req: http.IncomingMessage, res: http.ServerResponse): void {
  requested.push(req.url!);
  const u = new URL(req.url!, 'http://x');
  const html = (b: Buffer | string, status = 200): void => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(b);
  };
  const q = u.searchParams.get('q');
  if (u.pathname === '/web') {
    if (q === 'openclaw') return html(page('web-search/duckduckgo-html-search-openclaw-2026.html'));
    if (q === 'test') return html(page('web-search/google-com-search-test-de-ui-2022.html'));
    if (q === 'robot') return html(ROBOT);
    if (q === 'nothing') return html(DDG_NONE);
    if (q === 'slow') return void setTimeout(() => html(page('web-search/duckduckgo-html-search-openclaw-2026.html')), 3_000);
  }
  if (u.pathname === '/news' && q === 'hold') return void held.push(() => html(page('synthetic/web-news-search-grid-battery-storage.html')));
  if (u.pathname === '/news' && q === 'battery storage') return html(page('synthetic/web-news-search-grid-battery-storage.html'));
  if (u.pathname === '/hub/science') return html(page('publisher-listing/apnews_hub_science_2026-03.html'));
  if (u.pathname === '/local/') return html(page('synthetic/publisher-section-generic.html'));
  if (u.pathname === '/article/ap') return html(page('publisher/apnews-article-presidential-campaigns-2024-09-03.html'));
  if (u.pathname === '/article/reuters') return html(page('publisher/reuters-article-israeli-tank-2024-03-07.html'));
  if (u.pathname.startsWith('/launch/leaderboard/daily/')) return html(page('synthetic/launches-leaderboard-2026-11-23.html'));
  if (u.pathname === '/launch/posts/quillmate') return html(page('synthetic/launches-post-quillmate.html'));
  if (u.pathname.startsWith('/launch/posts/')) return html(page('synthetic/launches-not-found.html'), 404);
  if (u.pathname === '/review/northwind-mobile.example') return html(page('synthetic/company-reviews-northwind-mobile-jsonld.html'));
  if (u.pathname.startsWith('/review/')) return html(page('synthetic/company-reviews-not-found.html'), 404);
  if (u.pathname === '/jobs' && q === 'data engineer') return html(page('synthetic/job-board-listing-data-engineer-austin.html'));
  if (u.pathname === '/jobs') return html(page('synthetic/job-board-no-results.html'));
  html('<html><body>not here</body></html>', 404);
}

beforeAll(async () => {
  server = http.createServer(site);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const env = {
    DATA_DIR: path.join(makeTempDir(), 'data'),
    LOG_LEVEL: 'silent',
    WEB_SEARCH_URL: `${origin}/web?q={q}&s={start}`,
    WEB_NEWS_SEARCH_URL: `${origin}/news?q={q}`,
    PUBLISHER_WIRE_URL: `${origin}/hub/{section}?p={page}`,
    LAUNCHES_BASE_URL: `${origin}/launch`,
    COMPANY_REVIEWS_URL: `${origin}/review/{company}?page={page}`,
    JOB_BOARD_URL: `${origin}/jobs?q={q}&l={location}&start={start}`,
    LIVE_ALLOW_PRIVATE: 'on',
    LIVE_TIMEOUT_MS: '2000',
    MAX_INFLIGHT_WEB_NEWS_SEARCH: '1',
  };
  service = await openService(loadConfig(env), { clock: () => now });
  app = await buildApp(service);
  await app.ready();
  // The operator's key: recorded in the ledger at price 0 and never rate-capped.
  operator = { authorization: `Bearer ${service.keys.create({ scheme: 'bearer', name: 'ops' }).secret}` };
}, 60_000);

afterAll(async () => {
  for (const release of held) release();
  await app?.close();
  await service?.close();
  await new Promise((r) => server?.close(r));
});

const get = async (url: string, headers = operator) => {
  const res = await app.inject({ method: 'GET', url, headers });
  return { status: res.statusCode, headers: res.headers, body: res.json() };
};

/** Each case's [query, status, error]: every one answered before a page is read. */
async function refusals(base: string, cases: [string, number, string][]): Promise<void> {
  requested.length = 0;
  for (const [qs, status, code] of cases) {
    const res = await get(`${base}${qs}`);
    expect([qs, res.status, res.body.error]).toEqual([qs, status, code]);
  }
  expect(requested).toEqual([]);
}

describe('GET /v1/search?engine=web_search', () => {
  it('reads 10 organic results of the DuckDuckGo page, redirects decoded, the query echoed', async () => {
    requested.length = 0;
    const res = await get('/v1/search?engine=web_search&q=openclaw');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      engine: 'web_search',
      family: 'web',
      query: { engine: 'web_search', q: 'openclaw', page: 1 },
      count: 10,
      next_cursor: null,
    });
    expect(res.body.results[3]).toMatchObject({
      position: 4,
      title: 'OpenClaw - Wikipedia',
      url: 'https://en.wikipedia.org/wiki/OpenClaw',
      displayed_url: 'en.wikipedia.org/wiki/OpenClaw',
    });
    expect(res.body.results.every((r: any) => /^https:\/\//.test(r.url) && !r.url.includes('duckduckgo.com/l/'))).toBe(true);
    expect(requested).toEqual(['/web?q=openclaw&s=0']);
  });

  it('pages by offset: page 2 asks for s=10 and numbers from 11', async () => {
    requested.length = 0;
    const res = await get('/v1/search?engine=web_search&q=openclaw&page=2');
    expect(res.body.results.map((r: any) => r.position)).toEqual(Array.from({ length: 10 }, (_, i) => i + 11));
    expect(requested).toEqual(['/web?q=openclaw&s=10']);
  });

  it('reads the Google layout too, and an empty results page as no results', async () => {
    const google = await get('/v1/search?engine=web_search&q=test');
    expect(google.body.count).toBe(7);
    expect(google.body.results[2]).toMatchObject({ title: 'Test - Wikipedia', url: 'https://de.wikipedia.org/wiki/Test' });
    const none = await get('/v1/search?engine=web_search&q=nothing');
    expect([none.status, none.body.count, none.body.results]).toEqual([200, 0, []]);
  });

  it('turns a robot check into 502 scrape_failed', async () => {
    const res = await get('/v1/search?engine=web_search&q=robot');
    expect([res.status, res.body.error]).toEqual([502, 'scrape_failed']);
  });

  it('refuses bad parameters before a page is read', () =>
    refusals('/v1/search', [
      ['?engine=web_search', 400, 'bad_request'],
      ['?engine=web_search&q=', 400, 'bad_request'],
      ['?engine=web_search&q=x&page=11', 400, 'bad_request'],
      ['?engine=web_search&q=x&page=0', 400, 'bad_request'],
      ['?engine=web_search&q=x&limit=10', 400, 'locked_parameter'],
      ['?engine=web_search&q=x&cursor=abc', 400, 'locked_parameter'],
      ['?engine=web_search&q=x&country=us', 400, 'bad_request'],
      ['?engine=web_news_search&q=x&page=2', 400, 'bad_request'],
      ['?engine=websearch&q=x', 400, 'bad_request'],
    ]));
});

describe('GET /v1/search?engine=web_news_search', () => {
  it('reads source, snippet and image, relative times resolved against the fetch time', async () => {
    now = Date.parse('2026-11-23T12:00:00Z');
    const res = await get('/v1/search?engine=web_news_search&q=battery%20storage');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ engine: 'web_news_search', query: { q: 'battery storage', page: 1 }, count: 9 });
    // The first card shows "3 hours ago".
    expect(res.body.results[0]).toMatchObject({ source: 'The Harbor Ledger', published_at: '2026-11-23T09:00:00.000Z' });
  });
});

describe('publisher engines', () => {
  it('wire_listing: the stories of a section page (the real AP science hub), page forwarded', async () => {
    requested.length = 0;
    const res = await get('/v1/publisher/listing?engine=wire_listing&section=science&page=2');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ engine: 'wire_listing', family: 'publisher', query: { section: 'science', page: 2 }, count: 62 });
    expect(res.body.results[0]).toMatchObject({
      position: 1,
      title: 'Spacecraft’s impact changed asteroid’s orbit around the sun in a save-the-Earth test, study finds',
      published_at: '2026-03-06T19:01:09.000Z',
    });
    expect(res.body.results.every((r: any) => /^https:\/\/(projects\.)?apnews\.com\//.test(r.url))).toBe(true);
    expect(requested).toEqual(['/hub/science?p=2']);
  });

  it('publisher_listing: one listing page by URL', async () => {
    const res = await get(`/v1/publisher/listing?engine=publisher_listing&url=${encodeURIComponent(`${origin}/local/`)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.count).toBeGreaterThan(0);
    expect(res.body.results.every((r: any) => r.url.startsWith('https://www.rivertonledger.example/'))).toBe(true);
  });

  it('publisher_article: JSON-LD NewsArticle fields and the body paragraphs', async () => {
    const res = await get(`/v1/publisher/article?url=${encodeURIComponent(`${origin}/article/reuters`)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ engine: 'publisher_article', count: 1 });
    const a = res.body.results[0];
    expect(a).toMatchObject({
      headline: "Israeli tank 'likely' fired machine gun at reporters after deadly shelling, report finds",
      authors: ['Maya Gebeily', 'Anthony Deutsch'],
      published_at: '2024-03-07T07:55:25.000Z',
      section: 'Middle East',
      canonical_url: 'https://www.reuters.com/world/middle-east/israeli-tank-likely-scenario-fired-machine-gun-reporters-after-deadly-shelling-2024-03-07/',
    });
    expect(a.body).toHaveLength(30);
  });

  it('locks sources, and refuses bad parameters before a page is read', () =>
    refusals('', [
      ['/v1/publisher/listing?engine=wire_listing&section=science&sources=Reuters', 400, 'locked_parameter'],
      ['/v1/publisher/listing?engine=publisher_listing&url=https%3A%2F%2Fx.example%2F&sources=a', 400, 'locked_parameter'],
      [`/v1/publisher/article?url=https%3A%2F%2Fx.example%2F&sources=a`, 400, 'locked_parameter'],
      ['/v1/publisher/listing?engine=wire_listing', 400, 'bad_request'],
      ['/v1/publisher/listing?engine=wire_listing&section=Science!', 400, 'bad_request'],
      ['/v1/publisher/listing?engine=wire_listing&section=science&page=11', 400, 'bad_request'],
      ['/v1/publisher/listing?engine=publisher_listing&url=https%3A%2F%2Fx.example%2F&page=2', 400, 'bad_request'],
      ['/v1/publisher/listing?section=science', 400, 'bad_request'],
      ['/v1/publisher/article', 400, 'bad_request'],
      ['/v1/publisher/article?url=ftp%3A%2F%2Fx.example%2F', 400, 'bad_request'],
      ['/v1/publisher/article?url=%2Frelative', 400, 'bad_request'],
      ['/v1/publisher/article?engine=wire_listing&url=https%3A%2F%2Fx.example%2F', 400, 'bad_request'],
    ]));
});

describe('GET /v1/launches', () => {
  const day = async (iso: string, qs = '') => {
    now = Date.parse(iso);
    requested.length = 0;
    const res = await get(`/v1/launches${qs}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return { path: requested[0], date: res.body.date, res };
  };

  it("reads today's leaderboard, today being the site's Pacific-time day", async () => {
    // 07:59 UTC on the 24th is 23:59 PST on the 23rd; a minute later it is the 24th there.
    expect(await day('2026-11-24T07:59:00Z')).toMatchObject({ path: '/launch/leaderboard/daily/2026/11/23', date: '2026-11-23' });
    expect(await day('2026-11-24T08:00:00Z')).toMatchObject({ path: '/launch/leaderboard/daily/2026/11/24', date: '2026-11-24' });
    // Summer time: UTC−7, so the day turns at 07:00 UTC.
    expect(await day('2026-07-01T06:59:00Z')).toMatchObject({ path: '/launch/leaderboard/daily/2026/6/30' });
    expect(await day('2026-07-01T07:00:00Z')).toMatchObject({ path: '/launch/leaderboard/daily/2026/7/1' });
  });

  it('turns the day at the right hour across the DST changes', async () => {
    // Spring forward on 2026-03-08: that day began at 08:00 UTC (PST), the next at 07:00 UTC (PDT).
    expect((await day('2026-03-08T07:59:00Z')).date).toBe('2026-03-07');
    expect((await day('2026-03-08T08:00:00Z')).date).toBe('2026-03-08');
    expect((await day('2026-03-09T06:59:00Z')).date).toBe('2026-03-08');
    expect((await day('2026-03-09T07:00:00Z')).date).toBe('2026-03-09');
    // Fall back on 2026-11-01: that day began at 07:00 UTC (PDT), the next at 08:00 UTC (PST).
    expect((await day('2026-11-01T06:59:00Z')).date).toBe('2026-10-31');
    expect((await day('2026-11-01T07:00:00Z')).date).toBe('2026-11-01');
    expect((await day('2026-11-02T07:59:00Z')).date).toBe('2026-11-01');
    expect((await day('2026-11-02T08:00:00Z')).date).toBe('2026-11-02');
  });

  it('reads a past day, and q keeps launches whose name, tagline, slug or topic match', async () => {
    const all = await day('2026-11-25T12:00:00Z', '?date=2026-11-23');
    expect(all.path).toBe('/launch/leaderboard/daily/2026/11/23');
    expect(all.res.body.count).toBe(8);
    expect(all.res.body.results[0]).toMatchObject({ rank: 1, slug: 'quillmate', name: 'Quillmate' });
    const dev = await day('2026-11-25T12:00:00Z', '?date=2026-11-23&q=developer%20tools');
    expect(dev.res.body.results.map((l: any) => [l.rank, l.slug])).toEqual([
      [2, 'tidepool-db'],
      [4, 'pixelhearth'],
      [8, 'stackshelf'],
    ]);
    const bySlug = await day('2026-11-25T12:00:00Z', '?date=2026-11-23&q=ledgerly-2');
    expect(bySlug.res.body.results.map((l: any) => l.slug)).toEqual(['ledgerly-2-0']);
    expect(bySlug.res.body.query).toMatchObject({ date: '2026-11-23', q: 'ledgerly-2', page: 1 });
  });

  it('refuses a day that has not begun on the site, a malformed one, and page 2', async () => {
    now = Date.parse('2026-11-24T07:59:00Z'); // still the 23rd in California
    await refusals('/v1/launches', [
      ['?date=2026-11-24', 400, 'bad_request'],
      ['?date=2026-02-30', 400, 'bad_request'],
      ['?date=23.11.2026', 400, 'bad_request'],
      ['?date=2010-01-01', 400, 'bad_request'],
      ['?page=2', 400, 'bad_request'],
      ['?limit=5', 400, 'locked_parameter'],
    ]);
  });
});

describe('GET /v1/launches/product', () => {
  it('reads one launch: hunter, makers, images, comments and contact links; the product site is not read', async () => {
    requested.length = 0;
    const res = await get('/v1/launches/product?slug=quillmate');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const d = res.body.results[0];
    expect(d).toMatchObject({
      slug: 'quillmate',
      name: 'Quillmate',
      tagline: 'AI writing partner that learns your voice',
      website: 'https://quillmate.app/?ref=producthunt',
      hunter: { username: 'danawhit' },
    });
    expect(d.makers.length).toBeGreaterThan(0);
    expect(d.images.length).toBeGreaterThan(0);
    expect(d.comments.length).toBeGreaterThan(0);
    expect(requested).toEqual(['/launch/posts/quillmate']);
  });

  it('is 404 not_found for a slug the site does not have, and 400 for a malformed one', async () => {
    const res = await get('/v1/launches/product?slug=no-such-launch');
    expect([res.status, res.body.error]).toEqual([404, 'not_found']);
    await refusals('/v1/launches/product', [
      ['', 400, 'bad_request'],
      ['?slug=Bad Slug', 400, 'bad_request'],
      ['?slug=../admin', 400, 'bad_request'],
    ]);
  });
});

describe('GET /v1/company/reviews', () => {
  it("reads the company's rating summary and a page of reviews, page forwarded", async () => {
    requested.length = 0;
    const res = await get('/v1/company/reviews?company=northwind-mobile.example&page=3');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      engine: 'company_reviews',
      family: 'reviews',
      count: 8,
      page: 3,
      total_pages: 3,
      company: { domain: 'northwind-mobile.example' },
    });
    expect(res.body.results.every((r: any) => r.rating >= 1 && r.rating <= 5 && r.body)).toBe(true);
    expect(requested).toEqual(['/review/northwind-mobile.example?page=3']);
  });

  it('is 404 not_found when the site has no profile, and 400 for what is not a domain', async () => {
    const res = await get('/v1/company/reviews?company=nobody.example');
    expect([res.status, res.body.error]).toEqual([404, 'not_found']);
    await refusals('/v1/company/reviews', [
      ['', 400, 'bad_request'],
      ['?company=https://x.example', 400, 'bad_request'],
      ['?company=x.example&page=0', 400, 'bad_request'],
    ]);
  });
});

describe('GET /v1/job-board/jobs', () => {
  it('reads one page of job cards, page forwarded as an offset', async () => {
    requested.length = 0;
    const res = await get('/v1/job-board/jobs?q=data%20engineer&location=Austin%2C%20TX&page=2');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ engine: 'job_boards', family: 'jobs', query: { q: 'data engineer', location: 'Austin, TX', page: 2 }, count: 12 });
    expect(res.body.results.every((j: any) => j.title && j.url.startsWith('http'))).toBe(true);
    expect(requested).toEqual(['/jobs?q=data%20engineer&l=Austin%2C%20TX&start=10']);
    const none = await get('/v1/job-board/jobs?q=underwater%20basket%20weaving');
    expect([none.status, none.body.count]).toEqual([200, 0]);
  });

  it('needs q or location', () =>
    refusals('/v1/job-board/jobs', [
      ['', 400, 'bad_request'],
      ['?page=2', 400, 'bad_request'],
    ]));
});

describe('credits', () => {
  it('charges web and news search 5 and the page engines 8 (a launch listing and its detail each), and refunds a 502', async () => {
    now = Date.parse('2026-11-23T20:00:00Z');
    const acct = service.billing.createAccount('engines').id;
    const key = { authorization: `Bearer ${service.keys.create({ scheme: 'bearer', name: 'e', account: acct }).secret}` };
    const calls = [
      '/v1/search?engine=web_search&q=openclaw',
      '/v1/search?engine=web_news_search&q=battery%20storage',
      '/v1/publisher/listing?engine=wire_listing&section=science',
      '/v1/launches',
      '/v1/launches/product?slug=quillmate',
      `/v1/publisher/article?url=${encodeURIComponent(`${origin}/article/ap`)}`,
      '/v1/company/reviews?company=northwind-mobile.example',
      '/v1/job-board/jobs?q=data%20engineer',
      '/v1/search?engine=web_search&q=robot',
    ];
    const charged = [];
    for (const url of calls) {
      const res = await get(url, key);
      charged.push([res.status, res.headers['x-credits-charged']]);
    }
    expect(charged).toEqual([
      [200, '5'],
      [200, '5'],
      [200, '8'],
      [200, '8'],
      [200, '8'],
      [200, '8'],
      [200, '8'],
      [200, '8'],
      [502, '0'],
    ]);
    const ledger = service.billing
      .entries(acct)
      .filter((e) => e.kind === 'debit' || e.kind === 'refund')
      .map((e) => [e.kind, e.product, e.credits]);
    expect(ledger).toEqual([
      ['debit', 'web_search', -5],
      ['debit', 'web_news_search', -5],
      ['debit', 'publisher', -8],
      ['debit', 'launches', -8],
      ['debit', 'launches', -8],
      ['debit', 'publisher', -8],
      ['debit', 'company_reviews', -8],
      ['debit', 'job_boards', -8],
      ['debit', 'web_search', -5],
      ['refund', 'web_search', 5],
    ]);
    expect(service.billing.balance(acct)).toBe(250 - 58);
  });

  it('a page past the deadline is 504 timeout, and a call past MAX_INFLIGHT is 503 overloaded with Retry-After; neither is charged', async () => {
    const acct = service.billing.createAccount('limits').id;
    const key = { authorization: `Bearer ${service.keys.create({ scheme: 'bearer', name: 'l', account: acct }).secret}` };
    const slow = await get('/v1/search?engine=web_search&q=slow', key);
    expect([slow.status, slow.body.error]).toEqual([504, 'timeout']);
    const first = get('/v1/search?engine=web_news_search&q=hold', key);
    while (held.length === 0) await new Promise((r) => setTimeout(r, 10));
    const second = await get('/v1/search?engine=web_news_search&q=battery%20storage', key);
    expect([second.status, second.body.error, second.headers['retry-after']]).toEqual([503, 'overloaded', '1']);
    held.shift()!();
    expect((await first).status).toBe(200);
    const ledger = service.billing
      .entries(acct)
      .filter((e) => e.kind === 'debit' || e.kind === 'refund')
      .map((e) => [e.kind, e.product, e.credits]);
    expect(ledger).toEqual([
      ['debit', 'web_search', -5],
      ['refund', 'web_search', 5],
      ['debit', 'web_news_search', -5],
    ]);
  });

  it('a key scoped to other products gets 403 forbidden, before a page is read', async () => {
    const acct = service.billing.createAccount('scoped').id;
    const key = { authorization: `Bearer ${service.keys.create({ scheme: 'bearer', name: 's', account: acct, scopes: ['news'] }).secret}` };
    requested.length = 0;
    for (const url of ['/v1/search?engine=web_search&q=openclaw', '/v1/launches', '/v1/contacts?domain=x.example']) {
      const res = await get(url, key);
      expect([url, res.status, res.body.error]).toEqual([url, 403, 'forbidden']);
    }
    expect(requested).toEqual([]);
  });
});

describe('fuzz: every live path', () => {
  it('answers 200, 400, 404 or 502 to 400 seeded odd queries, never a 500, always a JSON error body', async () => {
    const rng = new Rng(9);
    const paths = [
      '/v1/search',
      '/v1/publisher/listing',
      '/v1/publisher/article',
      '/v1/launches',
      '/v1/launches/product',
      '/v1/company/reviews',
      '/v1/job-board/jobs',
      '/v1/contacts',
    ];
    const names = ['engine', 'q', 'page', 'section', 'url', 'date', 'slug', 'company', 'location', 'domain', 'limit', 'sources', 'x'];
    const values = [
      'web_search',
      'web_news_search',
      'wire_listing',
      'publisher_listing',
      'publisher_article',
      'openclaw',
      'science',
      '1',
      '2',
      '10',
      '11',
      '-1',
      '1e3',
      '0x10',
      '',
      '2026-11-23',
      '2026-13-01',
      'quillmate',
      'northwind-mobile.example',
      `${origin}/local/`,
      'javascript:alert(1)',
      'http://[::1',
      '%',
      '%E0%A4%A',
      '💥',
      'a'.repeat(3000),
      '__proto__',
      'constructor',
    ];
    for (let i = 0; i < 400; i++) {
      const n = rng.int(4);
      const qs = Array.from({ length: n }, () => `${rng.pick(names)}=${encodeURIComponent(rng.pick(values))}`).join('&');
      const url = `${rng.pick(paths)}?${qs}`;
      const res = await app.inject({ method: 'GET', url, headers: operator });
      expect([url, [200, 400, 404, 502].includes(res.statusCode)]).toEqual([url, true]);
      if (res.statusCode !== 200) expect(typeof res.json().error).toBe('string');
    }
  }, 60_000);
});
