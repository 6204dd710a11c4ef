/**
 * The one client under both policies, against a loopback server on two ports (two origins,
 * A and B) that answers by Host and path and records every request. The policies let loopback
 * be reached (polite: those are the feeds' hosts; live: the reads are not `untrusted`).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../errors.js';
import { CookieJar } from './cookies.js';
import { HttpClient } from './http-client.js';
import { FetchError, liveScraping, politePolling, WEBHOOK_MAX_BYTES, WebhookError, webhookDelivery } from './policies.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;
const routes = new Map<string, Handler>();
const requests: string[] = [];
const servers: http.Server[] = [];
/** Host (127.0.0.1:port) of origin A and of origin B. */
let A: string;
let B: string;

const base = (host: string) => `http://${host}`;
const route = (host: string, path: string, h: Handler) => routes.set(`${host} ${path}`, h);
const answer =
  (status: number, headers: Record<string, string | string[]> = {}, body = ''): Handler =>
  (_req, res) =>
    res.writeHead(status, headers).end(body);

beforeAll(async () => {
  const handle = (req: http.IncomingMessage, res: http.ServerResponse) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      requests.push(
        `${req.method} ${req.headers.host} ${req.url}${req.headers.cookie ? ` cookie=${req.headers.cookie}` : ''}${req.headers['if-none-match'] ? ` inm=${req.headers['if-none-match']}` : ''}${body ? ` body=${body}` : ''}`,
      );
      const h = routes.get(`${req.headers.host} ${req.url}`);
      if (h) h(req, res, body);
      else res.writeHead(404).end();
    });
  };
  for (let i = 0; i < 2; i++) {
    const server = http.createServer(handle);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
  }
  [A, B] = servers.map((s) => `127.0.0.1:${(s.address() as AddressInfo).port}`);
});

afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

beforeEach(() => {
  routes.clear();
  requests.length = 0;
});

const failure = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => null,
    (err: Error) => err,
  );
  expect(e, 'the read succeeded').not.toBeNull();
  return e!;
};

describe('polite polling', () => {
  const client = () =>
    new HttpClient(
      politePolling({
        timeoutMs: 2000,
        maxBytes: 64,
        maxRedirects: 2,
        userAgent: 'newsmatch-poller',
        concurrency: 2,
        privateFeeds: () => [A, B].map((h) => `${base(h)}/feed.xml`),
      }),
    );

  it('reads robots.txt once per origin, before every hop, and never asks for a path it disallows', async () => {
    const c = client();
    try {
      route(A, '/robots.txt', answer(200, {}, 'User-agent: newsmatch-poller\nDisallow: /private/\n'));
      route(A, '/feed.xml', answer(301, { location: `${base(B)}/feed.xml` }));
      route(B, '/robots.txt', answer(404));
      route(B, '/feed.xml', answer(200, { 'content-type': 'application/rss+xml', etag: '"v1"' }, '<rss/>'));
      const page = await c.get(`${base(A)}/feed.xml`);
      expect([page.url, page.status, page.html, page.contentType, page.validators]).toEqual([
        `${base(B)}/feed.xml`,
        200,
        '<rss/>',
        'application/rss+xml',
        { etag: '"v1"', lastModified: null },
      ]);
      const e = await failure(c.get(`${base(A)}/private/feed.xml`));
      expect(e).toBeInstanceOf(FetchError);
      expect(e.message).toBe(`${base(A)}/private/feed.xml: disallowed by robots.txt`);
      expect(requests).toEqual([`GET ${A} /robots.txt`, `GET ${A} /feed.xml`, `GET ${B} /robots.txt`, `GET ${B} /feed.xml`]);
    } finally {
      await c.close();
    }
  });

  it('sends the validators with the first request only; a 304 is an answer', async () => {
    const c = client();
    try {
      route(A, '/old.xml', answer(302, { location: '/feed.xml' }));
      route(A, '/feed.xml', answer(304));
      const page = await c.get(`${base(A)}/old.xml`, { validators: { etag: '"v1"' } });
      expect([page.url, page.status]).toEqual([`${base(A)}/feed.xml`, 304]);
      expect(requests.slice(1)).toEqual([`GET ${A} /old.xml inm="v1"`, `GET ${A} /feed.xml`]);
    } finally {
      await c.close();
    }
  });

  it('fails past the redirect limit and over the cap, naming the URL', async () => {
    const c = client();
    try {
      route(A, '/loop', answer(302, { location: '/loop' }));
      route(A, '/big', answer(200, { 'content-length': '65' }, 'x'.repeat(65)));
      expect((await failure(c.get(`${base(A)}/loop`))).message).toBe(`${base(A)}/loop: more than 2 redirects`);
      expect(requests.filter((r) => r.endsWith('/loop'))).toHaveLength(3);
      expect((await failure(c.get(`${base(A)}/big`))).message).toBe(`${base(A)}/big: body of 65 bytes is over the 64-byte cap`);
    } finally {
      await c.close();
    }
  });

  it('a robots.txt that cannot be read closes the site; one that redirects past the limit means no rules', async () => {
    const c = client();
    try {
      route(A, '/robots.txt', (_req, res) => res.destroy());
      route(B, '/robots.txt', answer(302, { location: '/robots.txt' }));
      route(B, '/feed.xml', answer(200, {}, '<rss/>'));
      expect((await failure(c.get(`${base(A)}/feed.xml`))).message).toBe(`${base(A)}/feed.xml: disallowed by robots.txt`);
      expect((await c.get(`${base(B)}/feed.xml`)).status).toBe(200);
      expect(requests.filter((r) => r.includes('/feed.xml'))).toEqual([`GET ${B} /feed.xml`]);
    } finally {
      await c.close();
    }
  });
});

describe('live scraping', () => {
  let c: HttpClient;
  beforeAll(() => {
    c = new HttpClient(liveScraping({ timeoutMs: 300, maxBytes: 64, userAgent: 'Mozilla/5.0' }));
  });
  afterAll(() => c.close());
  const call = () => ({ signal: c.deadline(), jar: new CookieJar() });

  it('follows a redirect on the site as a GET, with the cookies the redirect set', async () => {
    route(A, '/address-change', answer(303, { location: `${base(A)}/done`, 'set-cookie': ['session=s1; Path=/', 'zip=10001'] }));
    route(A, '/done', answer(200, { 'content-type': 'text/html' }, '<p>ok</p>'));
    const ctx = call();
    const page = await c.get(`${base(A)}/address-change`, { ...ctx, method: 'POST', body: '{"zip":"10001"}', contentType: 'application/json' });
    expect([page.url, page.status, page.html]).toEqual([`${base(A)}/done`, 200, '<p>ok</p>']);
    expect(requests).toEqual([`POST ${A} /address-change body={"zip":"10001"}`, `GET ${A} /done cookie=session=s1; zip=10001`]);
    expect(ctx.jar.get('zip')).toBe('10001');
  });

  it('a redirect off the site fails the read, or stops it where the read says so', async () => {
    route(A, '/away', answer(302, { location: `${base(B)}/` }));
    const e = await failure(c.get(`${base(A)}/away`, call()));
    expect(e).toBeInstanceOf(AppError);
    expect([(e as AppError).code, e.message]).toEqual(['scrape_failed', `${base(A)}/away: redirected off the site, to ${B}`]);
    const page = await c.get(`${base(A)}/away`, { ...call(), offSite: 'stop' });
    expect([page.status, page.html, page.redirectedTo]).toEqual([302, '', `${base(B)}/`]);
    expect(requests.every((r) => r.includes(A))).toBe(true);
  });

  it('cuts a page where the read asks, else fails over LIVE_MAX_BYTES; a status it does not take fails', async () => {
    route(A, '/big', answer(200, {}, 'x'.repeat(100)));
    route(A, '/busy', answer(503, {}, 'robot check'));
    const cut = await c.get(`${base(A)}/big`, { ...call(), cutAt: 10 });
    expect([cut.html, cut.truncated]).toEqual(['x'.repeat(10), true]);
    expect((await failure(c.get(`${base(A)}/big`, call()))).message).toBe(`${base(A)}/big: the page is over LIVE_MAX_BYTES (64)`);
    expect((await failure(c.get(`${base(A)}/busy`, call()))).message).toBe(`${base(A)}/busy: the site answered 503 (throttled or a robot check)`);
    expect((await c.get(`${base(A)}/busy`, { ...call(), anyStatus: true })).html).toBe('robot check');
  });

  it("a page past the call's deadline is 504 timeout", async () => {
    route(A, '/slow', (_req, res) => setTimeout(() => res.writeHead(200).end('late'), 1000).unref());
    const e = (await failure(c.get(`${base(A)}/slow`, call()))) as AppError;
    expect([e.code, e.message]).toEqual(['timeout', `the scrape of ${base(A)}/slow passed its deadline (LIVE_TIMEOUT_MS)`]);
  });

  it('reads robots.txt when asked, every call anew: 5xx closes the site, 404 is no rules, no answer fails the call', async () => {
    route(A, '/robots.txt', answer(503));
    expect((await c.robots(base(A), call())).refusal(`${base(A)}/`)).toMatch(/answered HTTP 503/);
    route(A, '/robots.txt', answer(404));
    expect((await c.robots(base(A), call())).refusal(`${base(A)}/`)).toBeNull();
    route(A, '/robots.txt', answer(200, {}, 'User-agent: *\nDisallow: /team\n'));
    expect((await c.robots(base(A), call())).refusal(`${base(A)}/team`)).toBe('robots.txt disallows it');
    route(A, '/robots.txt', (_req, res) => res.destroy());
    const e = (await failure(c.robots(base(A), call()))) as AppError;
    expect([e.code, e.message]).toEqual(['scrape_failed', `${base(A)}/robots.txt: could not connect`]);
    expect(requests.filter((r) => r.endsWith('/robots.txt'))).toHaveLength(4);
  });
});

describe('webhook delivery (post)', () => {
  const client = (allowPrivate: boolean) => new HttpClient(webhookDelivery({ timeoutMs: 2000, allowPrivate, userAgent: 'newsmatch-webhooks/1' }));

  it("POSTs the body with its headers and the policy's; any status is an answer, a 3xx not followed, the body cut at 64 KiB", async () => {
    const c = client(true);
    const seen: http.IncomingHttpHeaders[] = [];
    try {
      route(A, '/hook', (req, res, body) => {
        seen.push(req.headers);
        res.writeHead(body === 'big' ? 200 : 503, { 'x-receiver': 'r1' }).end(body === 'big' ? 'y'.repeat(WEBHOOK_MAX_BYTES + 10) : 'busy');
      });
      route(A, '/moved', answer(308, { location: '/hook' }));
      const busy = await c.post(`${base(A)}/hook`, { body: Buffer.from('{"a":1}'), headers: { 'Content-Type': 'application/json', 'User-Agent': 'mine' } });
      expect([busy.status, busy.body.toString(), busy.truncated, busy.headers['x-receiver']]).toEqual([503, 'busy', false, 'r1']);
      expect([seen[0]['content-type'], seen[0]['user-agent'], seen[0]['content-length']]).toEqual(['application/json', 'mine', '7']);
      const big = await c.post(`${base(A)}/hook`, { body: 'big', headers: {} });
      expect([big.status, big.body.length, big.truncated, seen[1]['user-agent']]).toEqual([200, WEBHOOK_MAX_BYTES, true, 'newsmatch-webhooks/1']);
      const moved = await c.post(`${base(A)}/moved`, { body: 'x', headers: {} });
      expect([moved.status, moved.headers.location]).toEqual([308, '/hook']);
      expect(requests).toEqual([`POST ${A} /hook body={"a":1}`, `POST ${A} /hook body=big`, `POST ${A} /moved body=x`]);
    } finally {
      await c.close();
    }
  });

  it('a loopback target is refused unless the policy allows private addresses, before anything is sent', async () => {
    const c = client(false);
    try {
      route(A, '/hook', answer(200));
      const e = await failure(c.post(`${base(A)}/hook`, { body: 'x', headers: {}, untrusted: true }));
      expect(e).toBeInstanceOf(WebhookError);
      expect([(e as WebhookError).reason, e.message]).toEqual([
        'blocked',
        'blocked: the host is a private or loopback address or resolves to one (LIVE_ALLOW_PRIVATE is off)',
      ]);
      expect(requests).toEqual([]);
    } finally {
      await c.close();
    }
  });
});
