/** LIVE_PROXY_URL: every live read goes through the configured HTTP proxy (CONNECT tunnels). */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ROOT } from './helpers/cli.js';
import { startHarness, type Harness } from './helpers/service.js';

let site: http.Server;
let proxy: http.Server;
let h: Harness;
const tunnels: string[] = [];
const auth: (string | undefined)[] = [];

beforeAll(async () => {
  const page = fs.readFileSync(path.join(ROOT, 'test/fixtures/pages/amazon-search/amazon-com-search-portable-charger-2026.html'));
  site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page));
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  // A forward proxy that only tunnels, as HTTPS-capable proxies do.
  proxy = http.createServer((_req, res) => res.writeHead(405).end());
  proxy.on('connect', (req, socket: net.Socket, head) => {
    tunnels.push(req.url!);
    auth.push(req.headers['proxy-authorization']);
    const [host, port] = req.url!.split(':');
    const upstream = net.connect(Number(port), host, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const sitePort = (site.address() as AddressInfo).port;
  const proxyPort = (proxy.address() as AddressInfo).port;
  h = await startHarness({
    corpus: null,
    env: { MARKETPLACE_BASE_URL: `http://127.0.0.1:${sitePort}`, LIVE_PROXY_URL: `http://scraper:s3cret@127.0.0.1:${proxyPort}` },
  });
}, 60_000);

afterAll(async () => {
  await h?.close();
  await new Promise((r) => site?.close(r));
  await new Promise((r) => proxy?.close(r));
});

it('reads the page through the proxy, with its credentials', async () => {
  const key = h.service.keys.create({ scheme: 'bearer', name: 'proxy' });
  const res = await h.inject({
    url: '/v1/search?engine=marketplace&q=charger',
    headers: { authorization: `Bearer ${key.secret}`, 'x-gateway-key': undefined, 'x-gateway-host': undefined },
  });
  expect(res.status, res.raw).toBe(200);
  expect(res.body.count).toBe(22);
  expect(tunnels).toEqual([`127.0.0.1:${(site.address() as AddressInfo).port}`]);
  expect(auth[0]).toBe(`Basic ${Buffer.from('scraper:s3cret').toString('base64')}`);
});
