/**
 * GET /v1/contacts, black-box, against a loopback company site: each email obfuscation form
 * (entity-encoded mailto:, "[at] … [dot]", Cloudflare data-cfemail and its email-protection
 * link), phones in E.164 from the page's country hint, socials canonicalised, a robots.txt
 * that forbids a path (never requested), a redirect to another domain (not followed), a 10 MB
 * page (cut at CONTACTS_PAGE_BYTES: what lies past the cut is not found), the `pages` report,
 * the domain rules, the private-address guard and the 10-credit charge. Then a real page: the
 * markeich.de Impressum (test/fixtures/pages/contacts/) as a site's home page, its phone and its
 * fax told apart by `kind`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './helpers/service.js';
import { readFixture } from './helpers/pages.js';

/** Cloudflare's email protection: a key byte, then each byte of the address XOR the key, in hex. */
const cfEncode = (email: string, key = 0x5a) => [key, ...Buffer.from(email)].map((b, i) => (i === 0 ? b : b ^ key).toString(16).padStart(2, '0')).join('');

const requested: string[] = [];
/** What /robots.txt answers: the site's rules by default. */
let robots: { status: number; body: string } = { status: 200, body: 'User-agent: *\nDisallow: /private/\n' };
const elsewhere: string[] = [];
let site: http.Server;
let other: http.Server;
/** Serves the real Impressum page as its home page; every other path is a 404 (robots.txt too: no rules). */
let impressum: http.Server;
let impressumDomain: string;
let h: Harness;
let domain: string;
let otherOrigin: string;

const HOME = () => `<!doctype html><html lang="de-DE"><head><title>Acme Werkzeuge GmbH</title>
<meta property="og:locale" content="de_DE"></head><body>
<header><nav>
  <a href="/kontakt">Kontakt</a> <a href="/impressum">Impressum</a> <a href="/about-us">About us</a>
  <a href="/ueber-uns">Über uns</a> <a href="/private/team">Team</a> <a href="/produkte">Produkte</a>
  <a href="${otherOrigin}/contact">Contact (partner site)</a>
</nav></header>
<main><p>Schreiben Sie uns: <a href="&#109;&#97;&#105;&#108;&#116;&#111;&#58;&#118;&#101;&#114;&#116;&#114;&#105;&#101;&#98;&#64;&#97;&#99;&#109;&#101;&#45;&#116;&#101;&#115;&#116;&#46;&#100;&#101;">Vertrieb</a></p>
<p>Presse: <a href="/cdn-cgi/l/email-protection" class="__cf_email__" data-cfemail="${cfEncode('presse@acme-test.de')}">[email&#160;protected]</a></p>
<p>Hotline: <a href="tel:+4989123456">089 123 456</a></p></main>
<footer><a href="https://twitter.com/AcmeWerkzeuge?ref=footer">Twitter</a> <a href="https://www.linkedin.com/company/acme-werkzeuge/">LinkedIn</a>
<a href="https://www.facebook.com/sharer/sharer.php?u=https%3A%2F%2Facme-test.de">Teilen</a> <a href="https://m.facebook.com/acmewerkzeuge/">Facebook</a></footer>
</body></html>`;

const KONTAKT = `<!doctype html><html lang="de"><body><h1>Kontakt</h1>
<p>E-Mail: info [at] acme-test [dot] de</p><p>Telefon: 030 1234567</p><p>Bestellnummer 4711-0815-2024</p></body></html>`;

const IMPRESSUM = `<!doctype html><html lang="de"><body><h1>Impressum</h1>
<p>Datenschutz: <a href="/cdn-cgi/l/email-protection#${cfEncode('datenschutz@acme-test.de', 0x21)}">E-Mail schreiben</a></p>
<p>Geschäftsführer: Max Mustermann</p><p>Vertrieb: <a href="mailto:vertrieb@acme-test.de?subject=Anfrage">vertrieb@acme-test.de</a></p></body></html>`;

beforeAll(async () => {
  other = http.createServer((req, res) => {
    elsewhere.push(req.url!);
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><a href="mailto:partner@elsewhere.example">x</a></body></html>');
  });
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;

  site = http.createServer((req, res) => {
    requested.push(req.url!);
    const html = (body: string, status = 200) => res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    switch (req.url) {
      case '/robots.txt':
        return res.writeHead(robots.status, { 'content-type': 'text/plain' }).end(robots.body);
      case '/':
        return html(HOME());
      case '/kontakt':
        return html(KONTAKT);
      case '/impressum':
        return html(IMPRESSUM);
      case '/about-us':
        return res.writeHead(301, { location: `${otherOrigin}/about` }).end();
      case '/ueber-uns': {
        // 10 MB: an address early on, another past the cut, sent in 1 MB pieces.
        res.writeHead(200, { 'content-type': 'text/html' });
        res.write('<html><body><p>Karriere: jobs@acme-test.de</p>');
        const filler = `<p>${'Lorem ipsum dolor sit amet. '.repeat(36_000)}</p>`;
        const send = async () => {
          for (let i = 0; i < 10 && !res.destroyed; i++) {
            if (!res.write(i === 5 ? `<p>spaet@acme-test.de</p>${filler}` : filler)) await new Promise((r) => res.once('drain', r).once('close', r));
          }
          res.end('</body></html>');
        };
        return void send();
      }
      default:
        return html('<html><body>not here</body></html>', 404);
    }
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  domain = `localhost:${(site.address() as AddressInfo).port}`;
  const impressumHtml = readFixture('contacts/markeich_de_impressum.html');
  impressum = http.createServer((req, res) => {
    if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(impressumHtml);
    else res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>not here</body></html>');
  });
  await new Promise<void>((r) => impressum.listen(0, '127.0.0.1', r));
  impressumDomain = `localhost:${(impressum.address() as AddressInfo).port}`;
  h = await startHarness({
    corpus: null,
    env: {
      CONTACTS_BASE_URL: 'http://{domain}',
      CONTACTS_MAX_PAGES: '6',
      CONTACTS_PAGE_BYTES: String(1_048_576),
      LIVE_ALLOW_PRIVATE: 'on',
      LIVE_TIMEOUT_MS: '10000',
    },
  });
}, 60_000);

afterAll(async () => {
  await h?.close();
  await new Promise((r) => site?.close(r));
  await new Promise((r) => other?.close(r));
  await new Promise((r) => impressum?.close(r));
});

const get = (url: string, headers = h.bearerHeaders) => h.inject({ url, headers: { ...headers, 'x-gateway-key': undefined, 'x-gateway-host': undefined } });

describe('GET /v1/contacts', () => {
  it('finds every form on the home page and its contact pages, each with the page it came from', async () => {
    requested.length = 0;
    const res = await get(`/v1/contacts?domain=${domain}`);
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toMatchObject({ engine: 'contacts', family: 'contacts', query: { engine: 'contacts', domain }, domain, next_cursor: null });
    const origin = `http://${domain}`;
    const items = res.body.results.map((r: any) => [r.type, r.value, r.page.replace(origin, '')]);
    expect(items).toEqual([
      ['email', 'vertrieb@acme-test.de', '/'],
      ['email', 'presse@acme-test.de', '/'],
      ['phone', '+4989123456', '/'],
      ['social', 'https://x.com/acmewerkzeuge', '/'],
      ['social', 'https://linkedin.com/company/acme-werkzeuge', '/'],
      ['social', 'https://facebook.com/acmewerkzeuge', '/'],
      ['email', 'info@acme-test.de', '/kontakt'],
      ['phone', '+49301234567', '/kontakt'],
      ['email', 'datenschutz@acme-test.de', '/impressum'],
      ['email', 'jobs@acme-test.de', '/ueber-uns'],
    ]);
    expect(res.body.count).toBe(10);
    const phone = res.body.results.find((r: any) => r.value === '+49301234567');
    expect(phone).toMatchObject({ shown: '030 1234567', network: null, kind: 'phone' });
    // `kind` says phone or fax for phones, and is null on the others
    expect(res.body.results.filter((r: any) => r.kind === null).length).toBe(8);
    expect(res.body.results.find((r: any) => r.type === 'social' && r.value.includes('x.com')).network).toBe('x');
  });

  it('honours robots.txt, does not follow a redirect off the domain, and cuts a 10 MB page', async () => {
    requested.length = 0;
    elsewhere.length = 0;
    const res = await get(`/v1/contacts?domain=${domain}`);
    expect(res.status, res.raw).toBe(200);
    const origin = `http://${domain}`;
    const pages = res.body.pages.map((p: any) => [p.url.replace(origin, ''), p.status]);
    expect(pages).toEqual([
      ['/', 'read'],
      ['/kontakt', 'read'],
      ['/impressum', 'read'],
      ['/about-us', 'redirected_off_site'],
      ['/ueber-uns', 'truncated'],
      ['/private/team', 'disallowed'],
    ]);
    expect(requested).not.toContain('/private/team');
    expect(requested).not.toContain('/produkte');
    expect(elsewhere).toEqual([]); // neither the redirect target nor the partner link
    expect(res.body.results.map((r: any) => r.value)).not.toContain('spaet@acme-test.de');
    expect(res.body.pages.find((p: any) => p.status === 'redirected_off_site').detail).toContain(`${otherOrigin}/about`);
  });

  it('reads nothing robots.txt forbids: Disallow: / or a 5xx (RFC 9309); a 404 means no rules', async () => {
    const pagesFor = async (r: typeof robots) => {
      robots = r;
      requested.length = 0;
      const res = await get(`/v1/contacts?domain=${domain}`);
      expect(res.status, res.raw).toBe(200);
      return { pages: res.body.pages.map((p: any) => [p.url.replace(`http://${domain}`, ''), p.status, p.detail]), count: res.body.count };
    };
    try {
      expect(await pagesFor({ status: 200, body: 'User-agent: *\nDisallow: /\n' })).toEqual({
        pages: [['/', 'disallowed', 'robots.txt disallows it']],
        count: 0,
      });
      expect(requested).toEqual(['/robots.txt']);
      const closed = await pagesFor({ status: 503, body: 'busy' });
      expect(closed.pages).toEqual([['/', 'disallowed', expect.stringContaining('HTTP 503')]]);
      expect(requested).toEqual(['/robots.txt']);
      const open = await pagesFor({ status: 404, body: 'no robots here' });
      expect(open.pages.map((p: string[]) => p[1])).toEqual(['read', 'read', 'read', 'redirected_off_site', 'truncated', 'failed']); // the site has no /private/team: a 404
      expect(requested).toContain('/private/team');
    } finally {
      robots = { status: 200, body: 'User-agent: *\nDisallow: /private/\n' };
    }
  });

  it('charges 10 credits a call and refunds a site that cannot be read', async () => {
    const acct = h.service.billing.createAccount('contacts').id;
    const key = h.service.keys.create({ scheme: 'bearer', name: 'c', account: acct });
    const as = { authorization: `Bearer ${key.secret}` };
    const ok = await get(`/v1/contacts?domain=${domain}`, as);
    expect(ok.status, ok.raw).toBe(200);
    expect(ok.headers['x-credits-charged']).toBe('10');
    expect(ok.headers['x-credits-remaining']).toBe('240');
    const down = await get('/v1/contacts?domain=localhost:1', as);
    expect([down.status, down.body.error]).toEqual([502, 'scrape_failed']);
    expect(down.headers['x-credits-remaining']).toBe('240');
    const ledger = h.service.billing
      .entries(acct)
      .filter((e) => e.product === 'contacts' && e.kind !== 'subscribe')
      .map((e) => [e.kind, e.credits]);
    expect(ledger).toEqual([
      ['debit', -10],
      ['debit', -10],
      ['refund', 10],
    ]);
  });

  it('refuses what is not a domain, before a page is read', async () => {
    requested.length = 0;
    const cases: [string, number, string][] = [
      ['', 400, 'bad_request'],
      ['?domain=', 400, 'bad_request'],
      ['?domain=https://example.com/', 400, 'bad_request'],
      ['?domain=example.com/contact', 400, 'bad_request'],
      ['?domain=exa mple.com', 400, 'bad_request'],
      ['?domain=-bad-.com', 400, 'bad_request'],
      ['?domain=example.com&page=2', 400, 'bad_request'],
      ['?domain=example.com&limit=5', 400, 'locked_parameter'],
      ['?domain=example.com&engine=web_search', 400, 'bad_request'],
    ];
    for (const [qs, status, code] of cases) {
      const res = await get(`/v1/contacts${qs}`);
      expect([qs, res.status, res.body.error]).toEqual([qs, status, code]);
    }
    expect(requested).toEqual([]);
  });

  it('reads an internationalised domain as its punycode', async () => {
    const res = await get('/v1/contacts?domain=B%C3%BCcher.invalid');
    expect([res.status, res.body.error]).toEqual([502, 'scrape_failed']);
    expect(res.body.detail).toContain('http://xn--bcher-kva.invalid/');
  });
});

describe('GET /v1/contacts on a real page', () => {
  it("reads the markeich.de Impressum as a site's home page: its email, its phone and its fax told apart, its profiles", async () => {
    const res = await get(`/v1/contacts?domain=${impressumDomain}`);
    expect(res.status, res.raw).toBe(200);
    const home = `http://${impressumDomain}/`;
    // Values read by hand from the page (line numbers of test/fixtures/pages/contacts/markeich_de_impressum.html).
    expect(res.body.results).toEqual([
      { type: 'email', value: 'info@markeich.de', kind: null, network: null, shown: null, page: home }, // mailto: line 373
      { type: 'phone', value: '+495191979238', kind: 'phone', network: null, shown: '05191 979238', page: home }, // "Fon  05191 979238" line 361
      { type: 'phone', value: '+495191979228', kind: 'fax', network: null, shown: '05191 979228', page: home }, // "Fax   05191 979228" line 364
      { type: 'social', value: 'https://facebook.com/markeich', kind: null, network: 'facebook', shown: null, page: home }, // line 565
      { type: 'social', value: 'https://x.com/marke_ich', kind: null, network: 'x', shown: null, page: home },
      { type: 'social', value: 'https://instagram.com/agentur.markeich', kind: null, network: 'instagram', shown: null, page: home },
    ]);
    // its nav's "Kontakt", "Impressum" (now another page than the home page) and "Unternehmen" (line 303) are tried,
    // contact before imprint before about; this server has none of them
    expect(res.body.pages.map((p: any) => [p.url.replace(home, '/'), p.status])).toEqual([
      ['/', 'read'],
      ['/kontakt-werbeagentur-soltau/', 'failed'],
      ['/kontakt/impressum-werbeagentur-soltau/', 'failed'],
      ['/unternehmen/', 'failed'],
    ]);
  });
});

describe('the private-address guard (LIVE_ALLOW_PRIVATE=off)', () => {
  it('will not read a loopback site a caller names', async () => {
    const guarded = await startHarness({ corpus: null, env: { CONTACTS_BASE_URL: 'http://{domain}', LIVE_TIMEOUT_MS: '5000' } });
    try {
      requested.length = 0;
      for (const d of [domain, `127.0.0.1:${domain.split(':')[1]}`]) {
        const res = await guarded.inject({
          url: `/v1/contacts?domain=${d}`,
          headers: { ...guarded.bearerHeaders, 'x-gateway-key': undefined, 'x-gateway-host': undefined },
        });
        expect([res.status, res.body.error]).toEqual([502, 'scrape_failed']);
        expect(res.body.detail).toMatch(/private address/);
      }
      expect(requested).toEqual([]);
    } finally {
      await guarded.close();
    }
  });
});
