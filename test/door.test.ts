/**
 * The door (issue 21): over real sockets, a slow client cannot hold the server. Clients that
 * trickle their headers or their body are answered 408 and closed, and the process's
 * descriptors come back to where they were; the parser's own failures (headers too large,
 * garbage) and connections over the caps are answered in the catalogue's shape.
 */
import fs from 'node:fs';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/http/index.js';
import { openService } from '../src/service.js';
import { makeTempDir } from './helpers/service.js';

let service: Awaited<ReturnType<typeof openService>>;
let app: Awaited<ReturnType<typeof buildApp>>;
let port: number;
let bearer: string;

const PER_IP = 60;

beforeAll(async () => {
  const dir = makeTempDir();
  service = await openService(
    loadConfig({
      DATA_DIR: `${dir}/data`,
      LOG_LEVEL: 'silent',
      HTTP_HEADERS_TIMEOUT_MS: '600',
      HTTP_REQUEST_TIMEOUT_MS: '1000',
      HTTP_KEEPALIVE_TIMEOUT_MS: '500',
      HTTP_MAX_CONNECTIONS_PER_IP: String(PER_IP),
    }),
  );
  app = await buildApp(service);
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as net.AddressInfo).port;
  bearer = service.keys.create({ scheme: 'bearer', name: 'door' }).secret;
});

afterAll(async () => {
  await app?.close();
  await service?.close();
});

const openFds = () => fs.readdirSync('/proc/self/fd').length;

/** A socket that reads everything the server says and resolves when the server closes it. */
function client(): { socket: net.Socket; said: () => string; closed: Promise<void> } {
  const socket = net.connect(port, '127.0.0.1');
  let text = '';
  socket.on('data', (d) => (text += d.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return { socket, said: () => text, closed };
}

/** The status and JSON body of the one response in `raw`. */
function response(raw: string): { status: number; body: any } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1]);
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  return { status, body: JSON.parse(body) };
}

const within = <T>(p: Promise<T>, ms: number, what: string) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms))]);

describe('slow clients', () => {
  it('trickled headers and trickled bodies are answered 408 and closed; descriptors return to the baseline', async () => {
    const before = openFds();
    const clients: ReturnType<typeof client>[] = [];
    const timers: NodeJS.Timeout[] = [];
    for (let i = 0; i < 40; i++) {
      const c = client();
      clients.push(c);
      const headersOnly = i % 2 === 0;
      c.socket.on('connect', () => {
        // Half the clients never finish their headers; the other half never finish the body.
        c.socket.write(
          headersOnly
            ? 'POST /v1/match HTTP/1.1\r\nHost: x\r\n'
            : `POST /v1/match HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${bearer}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
        );
        timers.push(setInterval(() => c.socket.writable && c.socket.write(headersOnly ? 'X' : ' '), 100));
      });
    }
    await within(new Promise((r) => setTimeout(r, 300)), 1000, 'settle');
    expect(openFds()).toBeGreaterThanOrEqual(before + 40);
    try {
      // Generous: the server checks its deadlines every HTTP_HEADERS_TIMEOUT_MS.
      await within(Promise.all(clients.map((c) => c.closed)), 20_000, 'the server closing every slow client');
    } finally {
      for (const t of timers) clearInterval(t);
    }
    for (const c of clients) {
      const r = response(c.said());
      expect(r.status).toBe(408);
      expect(r.body.error).toBe('request_timeout');
      expect(typeof r.body.detail).toBe('string');
    }
    // Every socket of both sides is gone (the client sockets closed too).
    await within(
      (async () => {
        while (openFds() > before + 2) await new Promise((r) => setTimeout(r, 50));
      })(),
      5000,
      'descriptors back to the baseline',
    );
  }, 40_000);
});

describe('the parser and the caps answer in the catalogue shape', () => {
  it('headers over the limit: 431 headers_too_large', async () => {
    const c = client();
    c.socket.write(`GET /v1/sources HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    await within(c.closed, 5000, 'close');
    const r = response(c.said());
    expect(r.status).toBe(431);
    expect(r.body.error).toBe('headers_too_large');
  });

  it('garbage instead of HTTP: 400 invalid_request', async () => {
    const c = client();
    c.socket.write('HELLO THERE\r\n\r\n');
    await within(c.closed, 5000, 'close');
    const r = response(c.said());
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_request');
  });

  it('one connection over HTTP_MAX_CONNECTIONS_PER_IP: 503 too_many_connections with Retry-After; room again once others close', async () => {
    const held: ReturnType<typeof client>[] = [];
    for (let i = 0; i < PER_IP; i++) {
      const c = client();
      held.push(c);
      await new Promise((r) => c.socket.once('connect', r));
    }
    // Let the server see every one before the next.
    await new Promise((r) => setTimeout(r, 200));
    const over = client();
    await within(over.closed, 5000, 'the refused connection closing');
    const r = response(over.said());
    expect(r.status).toBe(503);
    expect(r.body.error).toBe('too_many_connections');
    expect(over.said().toLowerCase()).toContain('retry-after: 5');
    for (const c of held) c.socket.destroy();
    await Promise.all(held.map((c) => c.closed));
    await new Promise((r) => setTimeout(r, 200));
    const res = await fetch(`http://127.0.0.1:${port}/openapi.json`);
    expect(res.status).toBe(200);
  });
});

describe('draining', () => {
  it('a request that arrives on a busy connection while the server closes: 503 shutting_down, the one in flight answered', async () => {
    const dir = makeTempDir();
    const s = await openService(loadConfig({ DATA_DIR: `${dir}/data`, LOG_LEVEL: 'silent' }));
    const a = await buildApp(s);
    await a.listen({ host: '127.0.0.1', port: 0 });
    const key = s.keys.create({ scheme: 'bearer', name: 'drain' }).secret;
    const socket = net.connect((a.server.address() as net.AddressInfo).port, '127.0.0.1');
    let said = '';
    socket.on('data', (d) => (said += d.toString()));
    const closed = new Promise<void>((r) => socket.on('close', () => r()));
    await new Promise((r) => socket.once('connect', r));
    // Request A is in flight (its body half sent) when the close begins; B follows it on the
    // same connection (pipelined), so it reaches the router while the server drains.
    const body = JSON.stringify({ vector: new Array(1024).fill(0.03), order: 'relevance', limit: 5 });
    socket.write(
      `POST /v1/match HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    await new Promise((r) => setTimeout(r, 100));
    const closing = a.close();
    await new Promise((r) => setTimeout(r, 100));
    socket.write(`${body.slice(10)}GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n`);
    await within(closing, 10_000, 'the close');
    await within(closed, 10_000, 'the connection closing');
    const responses = said.split(/(?=HTTP\/1\.1 )/);
    expect(responses.length, said).toBe(2);
    expect(responses[0]).toMatch(/^HTTP\/1\.1 200/);
    expect(responses[1]).toMatch(/^HTTP\/1\.1 503/);
    expect(JSON.parse(responses[1].slice(responses[1].indexOf('\r\n\r\n') + 4)).error).toBe('shutting_down');
    await s.close();
  });
});
