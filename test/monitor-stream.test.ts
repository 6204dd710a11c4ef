/**
 * GET /v1/monitors/{id}/events over a real socket: a stream monitor's matches arrive as they are
 * imported; a client that reconnects with Last-Event-ID gets what it missed, once; the route
 * refuses another account's monitor and a malformed Last-Event-ID.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { perturb, randUnit } from './helpers/corpus.js';
import { writeArrivals } from './helpers/monitors.js';
import { vec } from './helpers/oracle.js';
import { Rng } from './helpers/rng.js';
import { expectError, startHarness, type Harness } from './helpers/service.js';

let h: Harness;
let base: string;
let auth: Record<string, string>;
const rng = new Rng(31337);
const topic = randUnit(rng);

beforeAll(async () => {
  h = await startHarness({ corpus: { articles: 40, seed: 12 }, env: { MONITOR_STREAM_HEARTBEAT_MS: '50' } });
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  const account = h.service.billing.createAccount('stream desk').id;
  auth = { authorization: `Bearer ${h.service.keys.create({ scheme: 'bearer', account }).secret}` };
});

afterAll(async () => {
  await h?.close();
});

let n = 0;
/** Imports `count` articles near the topic (each a match) and returns their URLs. */
async function arrive(count: number): Promise<string[]> {
  const urls = Array.from({ length: count }, () => `https://wire.example/stream/${n++}`);
  const file = join(h.dir, `stream-${n}.jsonl`);
  writeArrivals(file, urls, '2020-01-01T00:00:00Z', () => perturb(rng, topic, 0.2));
  await h.service.importFile(file);
  // Each its own window: an import that followed at once would be matched with it (MONITOR_YIELD_MS).
  await h.service.monitors.pump();
  return urls;
}

interface Sse {
  events: { id: string; data: any }[];
  comments: number;
  status: number;
  close(): void;
}

/** Opens the stream and parses it as it comes. */
function open(id: string, headers: Record<string, string> = {}): Promise<Sse> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}/v1/monitors/${id}/events`, { headers: { ...auth, ...headers } }, (res) => {
      const s: Sse = { events: [], comments: 0, status: res.statusCode!, close: () => req.destroy() };
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        buf += d;
        for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          if (block.startsWith(':')) s.comments++;
          const fields = new Map(block.split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]));
          if (fields.has('data')) s.events.push({ id: fields.get('id')!, data: JSON.parse(fields.get('data')!) });
        }
      });
      res.on('error', () => {});
      resolve(s);
    });
    req.on('error', reject);
  });
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 15_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('GET /v1/monitors/{id}/events', () => {
  it('streams matches as they arrive, and resumes from Last-Event-ID with nothing missed and nothing twice', async () => {
    const res = await h.inject({
      method: 'POST',
      url: '/v1/monitors',
      payload: { vector: vec(topic), min_score: 0.6, stream: true },
      headers: auth,
      noAuth: true,
    });
    expect(res.status, res.raw).toBe(200);
    const id = res.body.monitor.id;
    const first = await open(id);
    expect(first.status).toBe(200);
    const a = await arrive(3);
    await until(() => first.events.length === 1, 'the first event');
    expect(first.events[0].data.items.map((i: { source_url: string }) => i.source_url).sort()).toEqual(a.sort());
    expect(first.events[0].data).toMatchObject({ type: 'monitor.matches', monitor: id, count: 3, seq: Number(first.events[0].id) });
    await until(() => first.comments > 0, 'a heartbeat');
    first.close();

    // Two windows arrive while no one listens.
    const b = await arrive(2);
    const c = await arrive(1);
    const again = await open(id, { 'last-event-id': first.events[0].id });
    await until(() => again.events.length === 2, 'the two missed events');
    expect(again.events.flatMap((e) => e.data.items.map((i: { source_url: string }) => i.source_url)).sort()).toEqual([...b, ...c].sort());
    // Live again, after the replay.
    const d = await arrive(1);
    await until(() => again.events.length === 3, 'the live event');
    expect(again.events[2].data.items[0].source_url).toBe(d[0]);
    again.close();

    // Without Last-Event-ID: every stored event, in order.
    const all = await open(id);
    await until(() => all.events.length === 4, 'the full replay');
    expect(all.events.map((e) => Number(e.id))).toEqual([...first.events, ...again.events].map((e) => Number(e.id)));
    all.close();
  });

  it('refuses another account’s monitor and a malformed Last-Event-ID', async () => {
    const res = await h.inject({ method: 'POST', url: '/v1/monitors', payload: { vector: vec(topic), stream: true }, headers: auth, noAuth: true });
    const id = res.body.monitor.id;
    const other = h.service.billing.createAccount('other').id;
    const otherAuth = { authorization: `Bearer ${h.service.keys.create({ scheme: 'bearer', account: other }).secret}` };
    expectError(await h.inject({ url: `/v1/monitors/${id}/events`, headers: otherAuth, noAuth: true }), 404, 'monitor_not_found');
    expectError(await h.inject({ url: `/v1/monitors/${id}/events`, headers: { ...auth, 'last-event-id': 'abc' }, noAuth: true }), 422, 'invalid_request');
    expectError(await h.inject({ url: '/v1/monitors/mon_nope/events', headers: auth, noAuth: true }), 404, 'monitor_not_found');
  });
});
