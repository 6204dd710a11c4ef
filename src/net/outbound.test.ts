/**
 * The guarded client against real sockets: a loopback web server (direct), and a loopback
 * CONNECT proxy that records what it is asked to tunnel to and hands every tunnel to that web
 * server, whatever address it named. Names resolve through a stand-in resolver, so "public"
 * names work offline.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Outbound } from './outbound.js';
import { isBlocked, type Lookup } from './guard.js';

/** What the loopback web server was asked: Host header and path. */
const served: string[] = [];
const connects: string[] = [];
/** First bytes a client sent into a tunnel to port 443 (a TLS ClientHello). */
let hello: Buffer | null = null;
let site: http.Server;
let proxy: http.Server;
let sitePort: number;
let proxyUrl: string;

const ZONE: Record<string, { address: string; family: number }[]> = {
  'news.example': [{ address: '93.184.216.34', family: 4 }],
  'v6.example': [{ address: '2606:4700::1111', family: 6 }],
  'metadata.google.internal': [{ address: '169.254.169.254', family: 4 }],
  'mixed.example': [
    { address: '93.184.216.34', family: 4 },
    { address: '10.0.0.7', family: 4 },
  ],
  'nat64.example': [{ address: '64:ff9b::7f00:1', family: 6 }],
};
let lookups = 0;
const lookup: Lookup = (hostname, _options, callback) => {
  lookups++;
  const found = ZONE[hostname];
  if (found) return setImmediate(() => callback(null, found));
  if (hostname === 'localhost') return setImmediate(() => callback(null, [{ address: '127.0.0.1', family: 4 }]));
  setImmediate(() => callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []));
};

beforeAll(async () => {
  site = http.createServer((req, res) => {
    served.push(`${req.headers.host} ${req.url}`);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  sitePort = (site.address() as AddressInfo).port;
  proxy = http.createServer((_req, res) => res.writeHead(405).end());
  proxy.on('connect', (req, socket: net.Socket, head) => {
    connects.push(req.url!);
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (req.url!.endsWith(':443')) {
      socket.once('data', (d: Buffer) => {
        hello = d;
        socket.destroy();
      });
      return;
    }
    const upstream = net.connect(sitePort, '127.0.0.1', () => {
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => site?.close(r));
  await new Promise((r) => proxy?.close(r));
});

beforeEach(() => {
  served.length = 0;
  connects.length = 0;
  lookups = 0;
  hello = null;
});

const refusal = async (p: Promise<unknown>): Promise<Error> => {
  const e = await p.then(
    () => null,
    (err: Error) => err,
  );
  expect(e, 'the request went through').not.toBeNull();
  expect(isBlocked(e), String(e)).toBe(true);
  return e!;
};

describe('direct', () => {
  const out = new Outbound({ timeoutMs: 5000, lookup });
  afterAll(() => out.close());

  it('refuses IP literals that are not public before connecting, in every spelling', async () => {
    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', '[::ffff:0:7f00:1]', '[::7f00:1]', '0.0.0.0', '2130706433', '0x7f.1']) {
      await refusal(out.send(`http://${host}:${sitePort}/admin`));
    }
    expect(served).toEqual([]);
  });

  it('refuses a name that resolves to a non-public address, checked on the connection itself', async () => {
    for (const name of ['localhost', 'metadata.google.internal', 'mixed.example', 'nat64.example']) {
      const e = await refusal(out.send(`http://${name}:${sitePort}/admin`));
      // The refusal never says what the name resolved to.
      expect(e.message).not.toMatch(/127\.0\.0\.1|169\.254|10\.0\.0\.7|64:ff9b/);
    }
    expect(lookups).toBeGreaterThanOrEqual(4);
    expect(served).toEqual([]);
  });

  it('refuses schemes other than http(s)', async () => {
    await refusal(out.send('file:///etc/passwd'));
  });

  it('reaches a private host the operator vouched for (allowPrivate)', async () => {
    const res = await out.send(`http://127.0.0.1:${sitePort}/feed.xml`, { allowPrivate: true });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    expect(served).toEqual([`127.0.0.1:${sitePort} /feed.xml`]);
  });

  it('never follows a redirect itself', async () => {
    const hop = http.createServer((_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${sitePort}/metadata` }).end());
    await new Promise<void>((r) => hop.listen(0, '127.0.0.1', r));
    try {
      const res = await out.send(`http://127.0.0.1:${(hop.address() as AddressInfo).port}/`, { allowPrivate: true });
      await res.body.dump();
      expect(res.statusCode).toBe(302);
      expect(served).toEqual([]);
    } finally {
      await new Promise((r) => hop.close(r));
    }
  });
});

describe('through a proxy', () => {
  let via: Outbound;
  beforeAll(() => {
    via = new Outbound({ timeoutMs: 5000, proxyUrl, lookup });
  });
  afterAll(() => via?.close());

  it('checks the name first and asks the proxy to CONNECT to the checked address, the name as Host', async () => {
    const res = await via.send('http://news.example/world?id=1');
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    expect(connects).toEqual(['93.184.216.34:80']);
    expect(served).toEqual(['news.example /world?id=1']);
    const v6 = await via.send('http://v6.example:8080/x');
    await v6.body.dump();
    expect(connects).toEqual(['93.184.216.34:80', '[2606:4700::1111]:8080']);
    expect(served[1]).toBe('v6.example:8080 /x');
  });

  it('sends the name as the TLS server name through a tunnel to the address', async () => {
    await via.send('https://news.example/').then(
      (r) => r.body.dump(),
      () => undefined,
    );
    expect(connects).toEqual(['93.184.216.34:443']);
    expect(hello?.includes(Buffer.from('news.example'))).toBe(true);
  });

  it('never asks the proxy for a refused target', async () => {
    for (const url of ['http://localhost:6379/', 'http://metadata.google.internal/computeMetadata/v1/', 'http://mixed.example/', 'http://nat64.example/']) {
      const e = await refusal(via.send(url));
      expect(e.message).not.toMatch(/127\.0\.0\.1|169\.254|10\.0\.0\.7|64:ff9b/);
    }
    for (const url of ['http://127.0.0.1:8080/admin', 'http://[::ffff:7f00:1]/', 'http://240.0.0.1/']) await refusal(via.send(url));
    expect(connects).toEqual([]);
  });

  it('passes a host the operator vouched for to the proxy by name', async () => {
    const res = await via.send(`http://127.0.0.1:${sitePort}/`, { allowPrivate: true });
    await res.body.dump();
    expect(connects).toEqual([`127.0.0.1:${sitePort}`]);
  });
});
