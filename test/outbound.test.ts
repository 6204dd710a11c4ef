/**
 * Issue 21 (findings 1, 2 and 6), black box against real loopback servers: the feed poller
 * fetches no item link or redirect that points at a non-public address, even when the operator
 * lets the feed itself live on one (INGEST_ALLOW_PRIVATE); a live read a caller names is
 * refused before it reaches the proxy (LIVE_PROXY_URL) or the socket, and its 502 says
 * "blocked" without saying what the name resolved to.
 *
 * 127.0.0.2 and 127.0.0.3 stand in for internal hosts: Linux routes all of 127/8 to loopback,
 * so servers bound there would answer if anything connected.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Poller } from '../src/ingest/index.js';
import { HttpClient, politePolling } from '../src/net/index.js';
import { rss2, RSS } from './helpers/feed-server.js';
import { startHarness, type Harness } from './helpers/service.js';

/** A loopback server that logs `Host path` of every request and answers from `routes` (else 404). */
async function server(address: string, routes: Record<string, { status?: number; location?: string; body?: string; type?: string }> = {}) {
  const log: string[] = [];
  const s = http.createServer((req, res) => {
    log.push(`${req.headers.host} ${req.url}`);
    const r = routes[req.url ?? ''];
    if (!r) return res.writeHead(404).end();
    res.writeHead(r.status ?? 200, { ...(r.location ? { location: r.location } : {}), 'content-type': r.type ?? 'text/html' }).end(r.body ?? '');
  });
  await new Promise<void>((ok) => s.listen(0, address, ok));
  const port = (s.address() as AddressInfo).port;
  return { log, port, base: `http://${address}:${port}`, routes, close: () => new Promise((ok) => s.close(ok)) };
}
type Server = Awaited<ReturnType<typeof server>>;

const NOW = Math.floor(Date.now() / 1000);
const page = (headline: string, text: string) =>
  `<!doctype html><html><head><title>${headline}</title><script type="application/ld+json">${JSON.stringify({ '@type': 'NewsArticle', headline, articleBody: text })}</script></head><body><article><h1>${headline}</h1><p>${text}</p></article></body></html>`;

describe('the feed poller (finding 1)', () => {
  let feed: Server;
  let admin: Server;
  let metadata: Server;
  let h: Harness;

  beforeAll(async () => {
    admin = await server('127.0.0.2', { '/internal-admin': { body: page('Admin', 'internal admin console') } });
    metadata = await server('127.0.0.3', { '/metadata': { body: page('Metadata', 'instance credentials') } });
    feed = await server('127.0.0.1');
    feed.routes['/feed.xml'] = {
      type: RSS,
      body: rss2('Inside Desk', [
        { title: 'A story on the feed host', link: `${feed.base}/ok`, description: 'Fine.', date: NOW - 3600 },
        { title: 'Admin console', link: `${admin.base}/internal-admin`, description: 'Item link to another private host.', date: NOW - 3600 },
        { title: 'Metadata', link: `${feed.base}/story`, description: 'Redirects to a private host.', date: NOW - 3600 },
        {
          title: 'By name',
          link: `http://localhost:${feed.port}/by-name`,
          description: 'The feed host, under a name that resolves to loopback.',
          date: NOW - 3600,
        },
      ]),
    };
    feed.routes['/ok'] = { body: page('A story on the feed host', 'The text of a story the operator vouched for.') };
    feed.routes['/story'] = { status: 302, location: `${metadata.base}/metadata` };
    feed.routes['/by-name'] = { body: page('By name', 'must not be read') };
  });

  afterAll(async () => {
    await h?.close();
    await Promise.all([feed?.close(), admin?.close(), metadata?.close()]);
  });

  it('with INGEST_ALLOW_PRIVATE=on reads the feed, but no item link or redirect to another private host', async () => {
    h = await startHarness({ corpus: null, env: { INGEST_ALLOW_PRIVATE: 'on' } });
    const { config, outlets, store } = h.service;
    expect(config.ingestAllowPrivate).toBe('on');
    outlets.add({ name: 'Inside Desk', homepage: `${feed.base}/`, feeds: [`${feed.base}/feed.xml`], fetchArticles: true, interval: '5m' });
    // As service.ts wires the setting: the outlets' feed URLs name the hosts that may be private.
    const fetcher = new HttpClient(
      politePolling({
        timeoutMs: 5000,
        maxBytes: 1_048_576,
        maxRedirects: 5,
        userAgent: 'newsmatch-test',
        concurrency: 2,
        privateFeeds: config.ingestAllowPrivate === 'on' ? () => outlets.list().flatMap((o) => o.feeds) : undefined,
      }),
    );
    const poller = new Poller({ store, outlets, fetcher, log: pino({ level: 'silent' }), revisitHours: 48 });
    try {
      const [report] = await poller.round({ force: true });
      expect(report).toMatchObject({ outlet: 'Inside Desk', items: 4, newArticles: 1 });
      expect(admin.log).toEqual([]);
      expect(metadata.log).toEqual([]);
      expect(feed.log.filter((l) => l.startsWith('localhost'))).toEqual([]);
      expect(feed.log).toContain(`127.0.0.1:${feed.port} /ok`);
      expect(report.errors).toHaveLength(3);
      expect(report.errors).toContainEqual(expect.stringMatching(new RegExp(`^${admin.base}/internal-admin: blocked`)));
      expect(report.errors).toContainEqual(expect.stringMatching(new RegExp(`^${feed.base}/story: redirected to ${metadata.base}/metadata, which is blocked`)));
      const byName = report.errors.find((e) => e.startsWith(`http://localhost:${feed.port}/by-name: blocked`));
      expect(byName, JSON.stringify(report.errors)).toBeDefined();
      expect(byName).not.toContain('127.0.0.1');
      expect(outlets.get('Inside Desk')?.lastError?.message).toMatch(/blocked/);
    } finally {
      await poller.stop();
    }
  });

  it('by default (INGEST_ALLOW_PRIVATE=off) does not read a feed on a private address at all', async () => {
    const off = await startHarness({ corpus: null });
    const before = feed.log.length;
    const poller = off.service.createPoller();
    try {
      off.service.outlets.add({ name: 'Loopback Desk', homepage: `${feed.base}/`, feeds: [`${feed.base}/feed.xml`], fetchArticles: true, interval: '5m' });
      const [report] = await poller.round({ force: true });
      expect(report.errors).toEqual([`${feed.base}/feed.xml: blocked: the host is a private address or resolves to one (INGEST_ALLOW_PRIVATE is off)`]);
      expect(feed.log.slice(before)).toEqual([]);
    } finally {
      await poller.stop();
      await off.close();
    }
  });
});

/** Names this machine's hosts file maps to loopback, besides localhost (none on some machines). */
function loopbackNames(): string[] {
  let hosts = '';
  try {
    hosts = fs.readFileSync('/etc/hosts', 'utf8');
  } catch {
    return [];
  }
  const names = new Set<string>();
  for (const line of hosts.split('\n')) {
    const [address, ...aliases] = line.replace(/#.*/, '').trim().split(/\s+/);
    if (!address || !(address.startsWith('127.') || address === '::1')) continue;
    for (const n of aliases) if (/^[a-z0-9.-]+$/i.test(n) && n !== 'localhost' && !n.includes('..')) names.add(n.toLowerCase());
  }
  return [...names].slice(0, 3);
}

const live = (h: Harness, url: string) => h.inject({ url, headers: { ...h.bearerHeaders, 'x-gateway-key': undefined, 'x-gateway-host': undefined } });

describe('live reads a caller names (findings 2 and 6)', () => {
  let target: Server;
  let proxy: http.Server;
  const tunnels: string[] = [];
  let direct: Harness;
  let proxied: Harness;

  beforeAll(async () => {
    target = await server('127.0.0.1', { '/': { body: '<html><body>internal</body></html>' }, '/robots.txt': { body: '', type: 'text/plain' } });
    proxy = http.createServer((_req, res) => res.writeHead(405).end());
    proxy.on('connect', (req, socket: net.Socket, head) => {
      tunnels.push(req.url!);
      const [host, port] = req.url!.split(/:(?=\d+$)/);
      const upstream = net.connect(Number(port), host.replace(/^\[|\]$/g, ''), () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      upstream.on('error', () => socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const env = { CONTACTS_BASE_URL: 'http://{domain}', LIVE_TIMEOUT_MS: '5000' };
    direct = await startHarness({ corpus: null, env });
    proxied = await startHarness({ corpus: null, env: { ...env, LIVE_PROXY_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` } });
  }, 60_000);

  afterAll(async () => {
    await direct?.close();
    await proxied?.close();
    await target?.close();
    await new Promise((r) => proxy?.close(r));
  });

  /** Caller-named targets that are, or resolve to, loopback or private addresses. */
  const refused = () => [
    `/v1/contacts?domain=localhost:${target.port}`,
    '/v1/contacts?domain=localhost:6379',
    ...loopbackNames().map((n) => `/v1/contacts?domain=${n}:${target.port}`),
    `/v1/publisher/article?url=${encodeURIComponent('http://localhost:8080/admin')}`,
    `/v1/publisher/article?url=${encodeURIComponent(`http://127.0.0.1:${target.port}/`)}`,
    `/v1/publisher/article?url=${encodeURIComponent(`http://[::ffff:127.0.0.1]:${target.port}/`)}`,
    `/v1/publisher/article?url=${encodeURIComponent(`http://[::ffff:0:7f00:1]:${target.port}/`)}`,
    `/v1/publisher/article?url=${encodeURIComponent(`http://[::7f00:1]:${target.port}/`)}`,
    `/v1/publisher/article?url=${encodeURIComponent('http://240.0.0.1/')}`,
    `/v1/publisher/article?url=${encodeURIComponent('http://255.255.255.255/')}`,
    `/v1/publisher/article?url=${encodeURIComponent('http://198.18.0.1/')}`,
    `/v1/publisher/article?url=${encodeURIComponent('http://[64:ff9b::7f00:1]/')}`,
    `/v1/publisher/article?url=${encodeURIComponent('http://[2002:7f00:1::]/')}`,
  ];

  it.each([
    ['directly', () => direct],
    ['through LIVE_PROXY_URL', () => proxied],
  ])('%s: every one answers 502 "blocked", never saying what a name resolved to, and nothing is connected to', async (_how, harness) => {
    const h = harness();
    target.log.length = 0;
    tunnels.length = 0;
    for (const url of refused()) {
      const res = await live(h, url);
      expect([url, res.status, res.body.error], res.raw).toEqual([url, 502, 'scrape_failed']);
      expect(res.body.detail, url).toMatch(/: blocked, /);
      // A name's detail carries no address: the caller learns "blocked", not the operator's network.
      if (/localhost|domain=[a-z]/.test(url)) expect(res.body.detail, url).not.toMatch(/127\.0\.0\.1|::1\b|resolves to \d/);
    }
    expect(target.log).toEqual([]);
    expect(tunnels).toEqual([]);
  });

  it.each([
    ['directly', () => direct],
    ['through LIVE_PROXY_URL', () => proxied],
  ])('%s: an unknown name and a refused connection read alike ("could not connect")', async (_how, harness) => {
    const h = harness();
    tunnels.length = 0;
    const unknown = await live(h, `/v1/publisher/article?url=${encodeURIComponent('http://no-such-host.invalid/admin')}`);
    expect([unknown.status, unknown.body.error, unknown.body.detail]).toEqual([502, 'scrape_failed', 'http://no-such-host.invalid/admin: could not connect']);
    expect(tunnels).toEqual([]);
  });

  it('metadata.google.internal never reaches the proxy, whether or not it resolves here', async () => {
    tunnels.length = 0;
    const res = await live(proxied, `/v1/publisher/article?url=${encodeURIComponent('http://metadata.google.internal/computeMetadata/v1/')}`);
    expect([res.status, res.body.error]).toEqual([502, 'scrape_failed']);
    expect(res.body.detail).toMatch(/^http:\/\/metadata\.google\.internal\/computeMetadata\/v1\/: (blocked, |could not connect$)/);
    expect(res.body.detail).not.toContain('169.254');
    expect(tunnels).toEqual([]);
  });
});
