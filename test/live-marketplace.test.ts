/**
 * The marketplace live endpoints, black-box, against a loopback "marketplace" that serves the
 * real captured pages (test/fixtures/pages): every endpoint, the envelope echo, parameter
 * rules, a robot check and a missing layout → 502, a slow page → 504, a burst past the
 * concurrency limit → 503, limit/cursor → 400 locked_parameter, the zip-code session's
 * cookies, and charges and refunds in the ledger.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR } from '../src/platform/index.js';
import { ROOT } from './helpers/cli.js';
import { startHarness, type Harness } from './helpers/service.js';

const PAGES = path.join(ROOT, 'test/fixtures/pages');
const page = (p: string) => fs.readFileSync(path.join(PAGES, p));
const ROBOT = '<html><head><title>Robot Check</title></head><body><form action="/errors/validateCaptcha"><input id="captchacharacters"></form></body></html>';

interface Seen {
  method: string;
  url: string;
  cookie?: string;
  body?: string;
}
const seen: Seen[] = [];
let held: (() => void)[] = [];
let server: http.Server;
let h: Harness;
let bearer: Record<string, string | undefined>;
let account: string;

/** The fixture marketplace: /{country}/… paths, as MARKETPLACE_BASE_URL=http://host/{country} asks. */
function marketplace(req: http.IncomingMessage, res: http.ServerResponse, body: string): void {
  const u = new URL(req.url!, 'http://x');
  seen.push({ method: req.method!, url: req.url!, cookie: req.headers.cookie, body });
  const [, country, ...rest] = u.pathname.split('/');
  const p = `/${rest.join('/')}`;
  const html = (b: Buffer | string, status = 200) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
    res.end(b);
  };
  const k = u.searchParams.get('k');
  if (p === '/') {
    res.setHeader('set-cookie', ['session-id=123-456; Path=/', 'i18n-prefs=USD; Path=/']);
    // No home page was captured: a search page carries the same header (the department menu).
    return html(page('amazon-search/amazon-com-search-portable-charger-2026.html'));
  }
  if (p === '/portal-migration/hz/glow/address-change') {
    res.setHeader('set-cookie', 'sp-cdn="L5Z9:DE"; Path=/');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ isValidAddress: JSON.parse(body).zipCode === '00000' ? 0 : 1 }));
    return;
  }
  if (p === '/s' && k === 'robot') return html(ROBOT);
  if (p === '/s' && k === 'throttled') return html('busy', 503);
  if (p === '/s' && k === 'layout') return html('<html><head><title>Something else</title></head><body><div>a different page</div></body></html>');
  if (p === '/s' && k === 'slow') return void setTimeout(() => html(page('amazon-search/amazon-com-search-portable-charger-2026.html')), 3_000);
  if (p === '/s' && k === 'hold') return void held.push(() => html(page('amazon-search/amazon-com-search-portable-charger-2026.html')));
  if (p === '/s' && u.searchParams.get('me')) return html(page('amazon-seller/amazon-com-seller-storefront-search-2020.html'));
  if (p === '/s')
    return html(
      page(country === 'de' ? 'amazon-search/amazon-de-search-katzenfutter-2022.html' : 'amazon-search/amazon-com-search-portable-charger-2026.html'),
    );
  if (p === '/gp/product/ajax/aodAjaxMain/' && u.searchParams.get('asin') === 'B0DR8G428S') return html(page('synthetic/amazon-com-offers-B0DR8G428S.html'));
  if (p === '/sp' && u.searchParams.get('seller') === 'A2JZ0S3QVWQECL') return html(page('synthetic/amazon-com-seller-A2JZ0S3QVWQECL.html'));
  if (p === '/dp/B0DR8G428S') return html(page('amazon-product/amazon-com-product-portable-charger-2026.html'));
  if (p === '/dp/0131103628') return html(page('amazon-product/amazon-com-book-c-programming-language-2019.html'));
  if (p.startsWith('/gp/bestsellers/hi')) return html(page('amazon-bestsellers/amazon-com-bestsellers-tools-home-improvement-2022.html'));
  if (p.startsWith('/gp/bestsellers/')) return html(page('amazon-bestsellers/amazon-de-bestseller-elektronik-foto-2022.html'));
  html('not found', 404);
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => marketplace(req, res, body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  h = await startHarness({
    corpus: null,
    env: { MARKETPLACE_BASE_URL: `http://127.0.0.1:${port}/{country}`, LIVE_TIMEOUT_MS: '1500', MAX_INFLIGHT_MARKETPLACE: '2' },
  });
  // The operator's key: recorded in the ledger like any account, but never rate-capped, so
  // no test here depends on how fast it sends (a plan's 20/s would).
  account = OPERATOR;
  const key = h.service.keys.create({ scheme: 'bearer', name: 'live' });
  bearer = { authorization: `Bearer ${key.secret}`, 'x-gateway-key': undefined, 'x-gateway-host': undefined };
}, 60_000);

afterAll(async () => {
  for (const f of held) f();
  await h?.close();
  await new Promise((r) => server?.close(r));
});

const get = (url: string) => h.inject({ url, headers: bearer });
const debits = () => h.service.billing.entries(account).filter((e) => e.kind === 'debit' && e.product === 'marketplace').length;
const refunds = () => h.service.billing.entries(account).filter((e) => e.kind === 'refund').length;

describe('GET /v1/search?engine=marketplace', () => {
  it('answers the envelope with the query echoed, unsent parameters null and defaults shown', async () => {
    const res = await get('/v1/search?engine=marketplace&q=portable%20charger');
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toMatchObject({ engine: 'marketplace', family: 'ecommerce', next_cursor: null });
    expect(res.body.query).toEqual({
      engine: 'marketplace',
      q: 'portable charger',
      category_id: null,
      sort_by: 'relevance',
      min_price: null,
      max_price: null,
      brand: null,
      prime: null,
      min_rating: null,
      condition: null,
      deals: null,
      page: 1,
      country: 'us',
      zip_code: null,
    });
    expect(res.body.count).toBe(22);
    expect(res.body.results.filter((c: any) => c.sponsored)).toHaveLength(6);
    expect(res.body.results.map((c: any) => c.position)).toEqual(Array.from({ length: 22 }, (_, i) => i + 1));
    expect(res.body.results.every((c: any) => c.currency === 'USD' && /^[A-Z0-9]{10}$/.test(c.asin))).toBe(true);
    expect(res.headers['x-credits-charged']).toBe('0');
  });

  it('is metered by the marketplace plan: one request of the period a page, refunded on a 5xx', async () => {
    const acct = h.service.billing.createAccount('plan').id;
    const key = h.service.keys.create({ scheme: 'bearer', name: 'plan', account: acct });
    const as = { authorization: `Bearer ${key.secret}`, 'x-gateway-key': undefined, 'x-gateway-host': undefined };
    const ok = await h.inject({ url: '/v1/search?engine=marketplace&q=charger&page=2', headers: as });
    expect(ok.status, ok.raw).toBe(200);
    const failed = await h.inject({ url: '/v1/search?engine=marketplace&q=robot', headers: as });
    expect(failed.status).toBe(502);
    const kinds = h.service.billing
      .entries(acct)
      .filter((e) => e.product === 'marketplace' && (e.kind === 'debit' || e.kind === 'refund'))
      .map((e) => [e.kind, e.units]);
    expect(kinds).toEqual([
      ['debit', 1],
      ['debit', 1],
      ['refund', -1],
    ]);
    const sub = h.service.billing.summary(acct).subscriptions.find((s: { product: string }) => s.product === 'marketplace');
    expect(sub).toMatchObject({ plan: 'free', used: 1 });
  });

  it('builds the site URL from every parameter', async () => {
    seen.length = 0;
    const res = await get(
      '/v1/search?engine=marketplace&q=usb%20c&category_id=2407749011&sort_by=price_low_to_high&min_price=10&max_price=40.5&brand=Anker&prime=true&min_rating=4&condition=new&deals=todays_deals&page=3',
    );
    expect(res.status, res.raw).toBe(200);
    const u = new URL(seen.at(-1)!.url, 'http://x');
    expect(u.pathname).toBe('/us/s');
    expect(Object.fromEntries(u.searchParams)).toEqual({
      k: 'usb c',
      rh: 'n:2407749011,p_89:Anker,p_85:2470955011,p_72:1248879011,p_n_condition-type:6461716011,p_n_deal_type:23566065011',
      s: 'price-asc-rank',
      'low-price': '10',
      'high-price': '40.5',
      page: '3',
    });
    expect(res.body.query).toMatchObject({
      category_id: '2407749011',
      sort_by: 'price_low_to_high',
      min_price: 10,
      max_price: 40.5,
      prime: true,
      min_rating: 4,
      page: 3,
    });
  });

  it('reads the country site in its currency (the 2022 layout)', async () => {
    const res = await get('/v1/search?engine=marketplace&q=katzenfutter&country=de');
    expect(res.status, res.raw).toBe(200);
    expect(res.body.count).toBe(60);
    expect(res.body.results.filter((c: any) => c.sponsored)).toHaveLength(12);
    expect(res.body.results.every((c: any) => c.currency === 'EUR')).toBe(true);
    expect(res.body.results.filter((c: any) => typeof c.price === 'number').length).toBeGreaterThan(40);
    expect(seen.at(-1)!.url).toMatch(/^\/de\/s\?/);
  });

  it('opens a delivery-location session for zip_code, and refuses one the site rejects', async () => {
    seen.length = 0;
    const res = await get('/v1/search?engine=marketplace&q=charger&zip_code=10001');
    expect(res.status, res.raw).toBe(200);
    expect(seen.map((s) => `${s.method} ${s.url.split('?')[0]}`)).toEqual(['GET /us/', 'POST /us/portal-migration/hz/glow/address-change', 'GET /us/s']);
    expect(JSON.parse(seen[1].body!)).toMatchObject({ zipCode: '10001', locationType: 'LOCATION_INPUT' });
    expect(seen[1].cookie).toContain('session-id=123-456');
    expect(seen[2].cookie).toContain('sp-cdn="L5Z9:DE"');
    expect(res.body.query.zip_code).toBe('10001');
    const refused = await get('/v1/search?engine=marketplace&q=charger&zip_code=00000');
    expect([refused.status, refused.body.error]).toEqual([502, 'scrape_failed']);
  });

  it('refuses bad parameters before reading a page', async () => {
    seen.length = 0;
    const cases: [string, number, string][] = [
      ['engine=marketplace', 400, 'bad_request'], // q or category_id
      ['q=x', 400, 'bad_request'], // engine missing
      ['engine=shop&q=x', 400, 'bad_request'],
      ['engine=marketplace&q=x&limit=10', 400, 'locked_parameter'],
      ['engine=marketplace&q=x&cursor=abc', 400, 'locked_parameter'],
      ['engine=marketplace&q=x&page=11', 400, 'bad_request'],
      ['engine=marketplace&q=x&page=0', 400, 'bad_request'],
      ['engine=marketplace&q=x&prime=true&country=de', 400, 'bad_request'],
      ['engine=marketplace&q=x&condition=renewed&country=jp', 400, 'bad_request'],
      ['engine=marketplace&q=x&sort_by=cheapest', 400, 'bad_request'],
      ['engine=marketplace&q=x&min_price=50&max_price=10', 400, 'bad_request'],
      ['engine=marketplace&q=x&country=fr', 400, 'bad_request'],
      ['engine=marketplace&q=x&zip_code=ABC', 400, 'bad_request'],
      ['engine=marketplace&q=x&colour=red', 400, 'bad_request'],
      ['engine=web_searches&q=x', 400, 'bad_request'],
    ];
    for (const [qs, status, code] of cases) {
      const res = await get(`/v1/search?${qs}`);
      expect([qs, res.status, res.body.error]).toEqual([qs, status, code]);
    }
    expect(seen).toHaveLength(0);
  });

  it('turns a robot check, a throttle, a changed layout and a slow page into 502 / 504, refunded', async () => {
    const before = { debits: debits(), refunds: refunds() };
    const robot = await get('/v1/search?engine=marketplace&q=robot');
    expect([robot.status, robot.body.error]).toEqual([502, 'scrape_failed']);
    expect(robot.body.detail).toMatch(/robot check/);
    const throttled = await get('/v1/search?engine=marketplace&q=throttled');
    expect([throttled.status, throttled.body.error]).toEqual([502, 'scrape_failed']);
    expect(throttled.body.detail).toMatch(/503/);
    const layout = await get('/v1/search?engine=marketplace&q=layout');
    expect([layout.status, layout.body.error]).toEqual([502, 'scrape_failed']);
    const slow = await get('/v1/search?engine=marketplace&q=slow');
    expect([slow.status, slow.body.error]).toEqual([504, 'timeout']);
    expect(debits() - before.debits).toBe(4);
    expect(refunds() - before.refunds).toBe(4);
  });

  it('answers 503 overloaded past MAX_INFLIGHT_MARKETPLACE, with Retry-After', async () => {
    held = [];
    const first = [get('/v1/search?engine=marketplace&q=hold'), get('/v1/search?engine=marketplace&q=hold')];
    await expect.poll(() => held.length, { timeout: 5_000 }).toBe(2);
    const third = await get('/v1/search?engine=marketplace&q=charger');
    expect([third.status, third.body.error]).toEqual([503, 'overloaded']);
    expect(third.headers['retry-after']).toBeDefined();
    for (const f of held) f();
    held = [];
    for (const r of await Promise.all(first)) expect(r.status).toBe(200);
  });

  it('needs a Bearer key: a gateway key is refused', async () => {
    const res = await h.inject({ url: '/v1/search?engine=marketplace&q=x' });
    expect([res.status, res.body.error]).toEqual([403, 'forbidden']);
  });
});

describe('other marketplace endpoints', () => {
  it('GET /v1/product reads the product page', async () => {
    const res = await get('/v1/product?engine=marketplace&asin=B0DR8G428S');
    expect(res.status, res.raw).toBe(200);
    expect(res.body.count).toBe(1);
    expect(res.body.results[0]).toMatchObject({ asin: 'B0DR8G428S', price: 35.99, rating: 4.2, ratings_count: 226 });
    expect(res.body.query).toEqual({ engine: 'marketplace', asin: 'B0DR8G428S', country: 'us', zip_code: null });
    expect((await get('/v1/product?engine=marketplace&asin=b0dr8g428s')).body.error).toBe('bad_request');
    expect((await get('/v1/product?engine=marketplace')).body.error).toBe('bad_request');
    const missing = await get('/v1/product?engine=marketplace&asin=B000000000');
    expect([missing.status, missing.body.error]).toEqual([404, 'not_found']);
  });

  it('GET /v1/product/reviews returns the on-page reviews', async () => {
    const res = await get('/v1/product/reviews?engine=marketplace&asin=0131103628');
    expect(res.status, res.raw).toBe(200);
    expect(res.body.count).toBe(8);
    expect((await get('/v1/product/reviews?engine=marketplace&asin=0131103628&page=2')).body.error).toBe('bad_request');
  });

  it('GET /v1/product/lookup searches the US site for a GTIN, sponsored dropped', async () => {
    seen.length = 0;
    const res = await get('/v1/product/lookup?engine=marketplace&gtin=0885909950805');
    expect(res.status, res.raw).toBe(200);
    expect(res.body.count).toBe(16);
    expect(res.body.results.some((c: any) => c.sponsored)).toBe(false);
    expect(seen.at(-1)!.url).toBe('/us/s?k=0885909950805');
    expect((await get('/v1/product/lookup?engine=marketplace&gtin=0885909950806')).body.error).toBe('bad_request');
  });

  it('GET /v1/seller/products reads the storefront, sponsored dropped', async () => {
    const res = await get('/v1/seller/products?engine=marketplace&seller_id=A2DP2EEPU3VU45');
    expect(res.status, res.raw).toBe(200);
    expect(res.body.count).toBeGreaterThan(0);
    expect(res.body.results.some((c: any) => c.sponsored)).toBe(false);
    expect((await get('/v1/seller/products?engine=marketplace')).body.error).toBe('bad_request');
  });

  it('GET /v1/bestsellers returns 30 ranked items and the subcategories, 2 pages at most', async () => {
    const res = await get('/v1/bestsellers?engine=marketplace&category=hi');
    expect(res.status, res.raw).toBe(200);
    expect(res.body.count).toBe(30);
    expect(res.body.results.map((r: any) => r.rank)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(res.body.category).toBe('Tools & Home Improvement');
    expect(Array.isArray(res.body.subcategories)).toBe(true);
    const de = await get('/v1/bestsellers?engine=marketplace&category=ce-de&country=de&page=2');
    expect(de.status, de.raw).toBe(200);
    expect(de.body.results[0].currency).toBe('EUR');
    expect((await get('/v1/bestsellers?engine=marketplace&category=hi&page=3')).body.error).toBe('bad_request');
  });

  it("GET /v1/categories lists the departments, or a node's children", async () => {
    const top = await get('/v1/categories?engine=marketplace');
    expect(top.status, top.raw).toBe(200);
    expect(top.body.count).toBe(59);
    expect(top.body.results).toContainEqual({ name: 'Tools & Home Improvement', alias: 'tools', node_id: null });
    const children = await get('/v1/categories?engine=marketplace&category=hi&node_id=228013');
    expect(children.status, children.raw).toBe(200);
    expect(children.body.results[0]).toMatchObject({ name: 'Air Tools', node_id: '552684' });
    expect(children.body.count).toBe(13);
    expect((await get('/v1/categories?engine=marketplace&category=hi')).body.error).toBe('bad_request');
  });

  it('GET /v1/product/offers and GET /v1/seller (synthetic pages)', async () => {
    const offers = await get('/v1/product/offers?engine=marketplace&asin=B0DR8G428S');
    expect(offers.status, offers.raw).toBe(200);
    expect(offers.body.count).toBe(3);
    expect(offers.body.results[0]).toMatchObject({ pinned: true, condition: 'New', price: 35.99, seller: { id: 'A2JZ0S3QVWQECL' } });
    const id = offers.body.results[0].seller.id;
    const seller = await get(`/v1/seller?engine=marketplace&seller_id=${id}`);
    expect(seller.status, seller.raw).toBe(200);
    expect(seller.body.results[0]).toMatchObject({ name: 'Chen Ying Ke Ji', rating: 4.5, ratings_count: 1237, positive_percent: 93 });
    const missing = await get('/v1/seller?engine=marketplace&seller_id=A0000000000000');
    expect([missing.status, missing.body.error]).toEqual([404, 'not_found']);
    expect((await get('/v1/seller?engine=marketplace')).body.error).toBe('bad_request');
  });
});
