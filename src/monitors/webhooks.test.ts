/**
 * Webhook delivery on a real LMDB store and a real loopback receiver, with a clock the tests
 * move (and `kick()` instead of waiting for a timer): the signature (a known answer, the
 * reference check, and the README's Node and Python snippets run against a real delivery),
 * retries and their log, giving up, paused monitors, a redirect that is not followed, the
 * creation check, and a restart that delivers what was pending.
 */
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../errors.js';
import { HttpClient, webhookDelivery } from '../net/index.js';
import { Store } from '../store/index.js';
import { MonitorFeed } from './feed.js';
import { commitPaid } from '../../test/helpers/monitors.js';
import { ATTEMPTS_KEPT, MonitorStore, type DeliveryAttempt, type MonitorEvent, type MonitorRecord } from './store.js';
import { NODE_VERIFY, PYTHON_VERIFY } from './verify-snippets.js';
import { checkWebhookUrl, signPayload, verifySignature, WebhookDeliverer, webhookBody } from './webhooks.js';

const run = promisify(execFile);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-webhooks-'));
const lmdbPath = path.join(dir, 'lmdb');
const silent = pino({ level: 'silent' });
const python = ['/usr/bin/python3', 'python3'].find((p) => spawnSync(p, ['--version']).status === 0);

// ---- the receiver: records every request; answers each path from its plan, else 200 ----

interface Got {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}
type Answer = (res: http.ServerResponse) => void;
const got: Got[] = [];
const plans = new Map<string, Answer[]>();
let receiver: http.Server;
let base: string;

const status =
  (code: number, headers: Record<string, string> = {}): Answer =>
  (res) =>
    res.writeHead(code, headers).end(`answer ${code}`);
const plan = (p: string, ...answers: Answer[]) => plans.set(p, answers);
const to = (p: string) => got.filter((g) => g.path === p);

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      got.push({ path: req.url!, headers: req.headers, body: Buffer.concat(parts) });
      const answer = plans.get(req.url!)?.shift() ?? status(200);
      answer(res);
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
  fs.rmSync(dir, { recursive: true, force: true });
});

// ---- the store, the clock and a deliverer per test ----

let store: Store;
let monitors: MonitorStore;
let feed: MonitorFeed;
let client: HttpClient;
let now: number;
const T0 = Date.UTC(2026, 4, 1, 9);
const deliverers: WebhookDeliverer[] = [];

beforeAll(() => {
  store = new Store(lmdbPath);
  monitors = new MonitorStore(store);
  client = new HttpClient(webhookDelivery({ timeoutMs: 2000, allowPrivate: true, userAgent: 'newsmatch-webhooks/1' }));
});
afterEach(async () => {
  await Promise.all(deliverers.splice(0).map((d) => d.stop()));
});
afterAll(async () => {
  await client.close();
  await store.close();
});
beforeEach(() => {
  now = T0;
  feed = new MonitorFeed();
  got.length = 0;
  plans.clear();
});

const deliverer = (o: Partial<ConstructorParameters<typeof WebhookDeliverer>[0]> = {}) => {
  const d = new WebhookDeliverer({ store: monitors, feed, client, clock: () => now, log: silent, retryHours: 24, ...o });
  deliverers.push(d);
  d.start();
  return d;
};

let n = 0;
const SECRET = 'whsec_5WbX5kEWLlfzsGNjH64I8lOOqUB6e8FH';
/** A webhook monitor delivering to `${base}${hookPath}`. */
async function monitor(hookPath: string, o: Partial<MonitorRecord> = {}): Promise<MonitorRecord> {
  const id = `mon_${(++n).toString(16).padStart(20, '0')}`;
  const m: Omit<MonitorRecord, 'num'> = {
    id,
    account: 'acct_1',
    keyId: 'key_1',
    created: now,
    query: { text: 'solar tariffs' },
    vectors: new Uint8Array(0),
    minScore: 0.5,
    sources: null,
    excludeSources: null,
    includeEdits: false,
    excludeUrl: null,
    webhookUrl: `${base}${hookPath}`,
    secret: SECRET,
    status: 'active',
    pausedReason: null,
    pausedSeq: null,
    startSeq: 0,
    failures: 0,
    ...o,
  };
  return monitors.add(m);
}

let seq = 100;
const UNIT = new Float32Array(1024).fill(1 / 32);
/** Commits one event of `m` as the pump does (a real revision matched, written, paid: due now) and tells the feed. */
async function event(m: MonitorRecord): Promise<MonitorEvent> {
  const fromSeq = seq;
  seq += 10;
  const [out] = store.writeRevisions([
    {
      url: `https://news.example/solar/${seq}`,
      source: 'Example News',
      title: 'Zölle auf Solarmodule',
      body: 'Tariffs on solar panels…',
      text: 't',
      publishedAt: Date.UTC(2026, 4, 1, 8, 59) / 1000,
      chunks: [{ text: 'Tariffs on solar panels', vector: UNIT }],
    },
  ]);
  if (out.status !== 'new') throw new Error(out.status);
  const label = store.revisions.get(out.ord)!.labelStart;
  await commitPaid(monitors, seq, fromSeq, now, [{ monitor: m.id, ords: [out.ord], labels: [label], scores: [0.71] }], now);
  feed.emit([{ monitor: m.id, seq }]);
  return monitors.event(m.id, seq)!;
}

/** Waits for `cond` (polling), failing after 10 s with `what`. */
async function until(cond: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const outboxOf = (id: string) => [...monitors.outbox.getRange()].filter((r) => r.value.monitor === id);
const attempts = (id: string) => monitors.attemptsOf(id, 100);
const settled = (d: WebhookDeliverer, id: string, count: number) =>
  until(() => attempts(id).length === count && d.inFlight === 0, `${count} attempts of ${id}`);

const failure = async (p: Promise<unknown>): Promise<AppError> => {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e, 'it succeeded').toBeInstanceOf(AppError);
  return e as AppError;
};

describe('signatures', () => {
  const body = '{"id":"evt_0123456789abcdef0123_42","type":"monitor.matches"}';

  it('signs "<t>.<body>" with the whole whsec_ secret (a known answer, from openssl)', () => {
    expect(signPayload(SECRET, 1_700_000_000, body)).toBe('8181591c08d86be52bd10276bce45f01953db38f4f9b51a60fc8277a0b695130');
    expect(signPayload(SECRET, 1_700_000_000, Buffer.from(body))).toBe('8181591c08d86be52bd10276bce45f01953db38f4f9b51a60fc8277a0b695130');
  });

  it('verifySignature takes a good header and any of several v1 values; refuses a changed body, another secret, a stale or future t, a malformed header', () => {
    const t = 1_700_000_000;
    const good = `t=${t},v1=${signPayload(SECRET, t, body)}`;
    expect(verifySignature(SECRET, good, body, t + 10)).toBe(true);
    expect(verifySignature(SECRET, good, Buffer.from(body), t)).toBe(true);
    expect(verifySignature(SECRET, `t=${t},v1=${'0'.repeat(64)},v1=${signPayload(SECRET, t, body)}`, body, t)).toBe(true);
    expect(verifySignature(SECRET, good, body.replace('42', '43'), t)).toBe(false);
    expect(verifySignature('whsec_other', good, body, t)).toBe(false);
    expect(verifySignature(SECRET, good, body, t + 301)).toBe(false);
    expect(verifySignature(SECRET, good, body, t + 301, 600)).toBe(true);
    expect(verifySignature(SECRET, good, body, t - 301)).toBe(false);
    expect(verifySignature(SECRET, `v1=${signPayload(SECRET, t, body)}`, body, t)).toBe(false);
    expect(verifySignature(SECRET, `t=${t}`, body, t)).toBe(false);
    expect(verifySignature(SECRET, `t=${t},t=${t},v1=${signPayload(SECRET, t, body)}`, body, t)).toBe(false);
    expect(verifySignature(SECRET, `t=${t},v1=${signPayload(SECRET, t, body).slice(2)}`, body, t)).toBe(false);
  });
});

describe('delivery', () => {
  it('POSTs the signed event once; the README snippets (Node, and Python where present) verify the very request', async () => {
    const m = await monitor('/hook/one');
    const d = deliverer();
    const e = await event(m);
    await settled(d, m.id, 1);
    const [req] = to('/hook/one');
    expect(to('/hook/one')).toHaveLength(1);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['newsmatch-event-id']).toBe(e.id);
    expect(req.headers['user-agent']).toBe('newsmatch-webhooks/1');
    expect(req.body.toString()).toBe(webhookBody(e));
    expect(JSON.parse(req.body.toString())).toEqual({
      id: e.id,
      type: 'monitor.matches',
      created: '2026-05-01T09:00:00Z',
      monitor: m.id,
      from_seq: e.fromSeq,
      seq: e.seq,
      count: 1,
      items: e.items,
    });
    const header = String(req.headers['newsmatch-signature']);
    const t = Math.floor(now / 1000);
    expect(header).toMatch(new RegExp(`^t=${t},v1=[0-9a-f]{64}$`));
    expect(verifySignature(SECRET, header, req.body, t)).toBe(true);
    expect(monitors.event(m.id, e.seq)?.delivery).toBe('delivered');
    expect(outboxOf(m.id)).toEqual([]);
    expect(attempts(m.id)).toMatchObject([{ event: e.id, attempt: 1, status: 200, ok: true, error: null, nextAt: null }]);

    // The snippets, as the README shows them, on the bytes received (and on a changed body: refused).
    const bodyFile = path.join(dir, 'body.json');
    const changedFile = path.join(dir, 'changed.json');
    fs.writeFileSync(bodyFile, req.body);
    fs.writeFileSync(changedFile, Buffer.concat([req.body, Buffer.from(' ')]));
    // The inputs go as arguments: secret, header, now, the body received, the changed body.
    const args = [SECRET, header, String(t), bodyFile, changedFile];
    const nodeFile = path.join(dir, 'verify.mjs');
    fs.writeFileSync(nodeFile, NODE_VERIFY);
    const nodeRun = `import fs from 'node:fs'; import { verify } from ${JSON.stringify(pathToFileURL(nodeFile).href)};
      const [SECRET, HEADER, NOW, GOOD, CHANGED] = process.argv.slice(1);
      console.log(verify(SECRET, HEADER, fs.readFileSync(GOOD), 300, Number(NOW)), verify(SECRET, HEADER, fs.readFileSync(CHANGED), 300, Number(NOW)), verify(SECRET, HEADER, fs.readFileSync(GOOD), 300, Number(NOW) + 301));`;
    const node = await run(process.execPath, ['--input-type=module', '-e', nodeRun, ...args]);
    expect(node.stdout.trim()).toBe('true false false');
    if (!python) return console.warn('python3 not found: the Python snippet is not checked');
    fs.writeFileSync(path.join(dir, 'newsmatch_verify.py'), PYTHON_VERIFY);
    const pyRun = `import sys; sys.path.insert(0, ${JSON.stringify(dir)}); from newsmatch_verify import verify
secret, header, now, good, changed = sys.argv[1:]; now = int(now); good = open(good, "rb").read(); changed = open(changed, "rb").read()
print(verify(secret, header, good, 300, now), verify(secret, header, changed, 300, now), verify(secret, header, good, 300, now + 301))`;
    const py = await run(python, ['-c', pyRun, ...args]);
    expect(py.stdout.trim()).toBe('True False False');
  });

  it('retries a 500 with backoff (the clock moved between kicks) until a 200: three attempts logged, delivered once, failures reset', async () => {
    const m = await monitor('/hook/flaky');
    plan('/hook/flaky', status(500), status(500), status(200));
    const d = deliverer();
    const e = await event(m);
    await settled(d, m.id, 1);
    const [first] = outboxOf(m.id);
    // First retry: 30 s × jitter in [0.5, 1.5).
    expect(first.key[0] - T0).toBeGreaterThanOrEqual(15_000);
    expect(first.key[0] - T0).toBeLessThan(45_000);
    expect(first.value).toMatchObject({ event: e.id, attempts: 1, firstDue: T0 });
    expect(monitors.get(m.id)?.failures).toBe(1);
    expect(monitors.event(m.id, e.seq)?.delivery).toBe('pending');

    // Not due yet: a kick sends nothing.
    d.kick();
    await settled(d, m.id, 1);
    expect(to('/hook/flaky')).toHaveLength(1);

    now = first.key[0];
    d.kick();
    await settled(d, m.id, 2);
    const [second] = outboxOf(m.id);
    expect(second.key[0] - now).toBeGreaterThanOrEqual(30_000);
    expect(second.key[0] - now).toBeLessThan(90_000);
    expect(second.value).toMatchObject({ attempts: 2, firstDue: T0 });
    expect(monitors.get(m.id)?.failures).toBe(2);

    now = second.key[0];
    d.kick();
    await settled(d, m.id, 3);
    expect(attempts(m.id).map((a) => [a.attempt, a.status, a.ok, a.error])).toEqual([
      [3, 200, true, null],
      [2, 500, false, 'HTTP 500'],
      [1, 500, false, 'HTTP 500'],
    ]);
    expect(attempts(m.id)[1].nextAt).toBe(second.key[0]);
    expect(monitors.event(m.id, e.seq)?.delivery).toBe('delivered');
    expect(monitors.get(m.id)?.failures).toBe(0);
    expect(outboxOf(m.id)).toEqual([]);
    const sent = to('/hook/flaky');
    expect(sent).toHaveLength(3);
    expect(new Set(sent.map((g) => g.headers['newsmatch-event-id']))).toEqual(new Set([e.id]));
    expect(new Set(sent.map((g) => g.body.toString()))).toEqual(new Set([webhookBody(e)]));
  });

  it('one attempt in flight per monitor, others go meanwhile', async () => {
    const held: http.ServerResponse[] = [];
    const hold: Answer = (res) => held.push(res);
    const a = await monitor('/hook/slow');
    const b = await monitor('/hook/quick');
    plan('/hook/slow', hold, hold);
    const d = deliverer();
    await event(a);
    await event(a);
    await event(b);
    await until(() => attempts(b.id).length === 1 && held.length === 1, 'the quick delivery and the slow request');
    // The slow monitor's second event waits, untried, behind its first.
    expect(to('/hook/slow')).toHaveLength(1);
    expect(outboxOf(a.id).map((r) => r.value.attempts)).toEqual([0, 0]);
    held.shift()!.writeHead(204).end();
    await until(() => held.length === 1, "the slow monitor's second event");
    held.shift()!.writeHead(200).end();
    await settled(d, a.id, 2);
    expect(attempts(a.id).map((x) => x.status)).toEqual([200, 204]);
    expect(outboxOf(a.id)).toEqual([]);
  });

  it('gives up after MONITOR_RETRY_HOURS: the event failed, the monitor paused with the reason, onGivenUp once, its outbox left alone while paused', async () => {
    const m = await monitor('/hook/down');
    plan('/hook/down', status(503), status(503));
    const givenUp: [MonitorEvent, MonitorRecord][] = [];
    const paused: string[] = [];
    // One minute, the jitter fixed at its middle: the first retry (30 s on) is within it, the
    // second (60 s after that) past it. With a random jitter both could fall within the minute
    // (15 s, then 30 s), about one run in sixteen.
    const d = deliverer({
      retryHours: 1 / 60,
      random: () => 0.5,
      onGivenUp: async (ev, mon) => void givenUp.push([ev, mon]),
      onPaused: (id) => void paused.push(id),
    });
    const e = await event(m);
    await settled(d, m.id, 1);
    now = outboxOf(m.id)[0].key[0];
    d.kick();
    await settled(d, m.id, 2);

    const after = monitors.get(m.id)!;
    expect(after).toMatchObject({ status: 'paused', pausedSeq: e.fromSeq, failures: 2 });
    expect(after.pausedReason).toMatch(/^Webhook deliveries failed for \d+ min \(2 attempts of evt_\w+; the last: HTTP 503\)/);
    expect(monitors.event(m.id, e.seq)?.delivery).toBe('failed');
    expect(outboxOf(m.id)).toEqual([]);
    expect(attempts(m.id).map((a) => [a.attempt, a.status, a.nextAt])).toEqual([
      [2, 503, null],
      [1, 503, now],
    ]);
    await until(() => paused.length === 1, 'onPaused');
    expect(paused).toEqual([m.id]);
    expect(givenUp).toHaveLength(1);
    expect(givenUp[0][0]).toMatchObject({ id: e.id, delivery: 'failed' });
    expect(givenUp[0][1]).toMatchObject({ id: m.id, status: 'paused' });

    // A paused monitor's entry stays, untried, through a wake-up and a kick; after it resumes, a kick delivers it.
    const later = await event(m);
    await until(() => d.inFlight === 0, 'the scan');
    d.kick();
    await until(() => d.inFlight === 0, 'the scan');
    expect(to('/hook/down')).toHaveLength(2);
    expect(outboxOf(m.id)).toHaveLength(1);
    await monitors.update(m.id, (x) => Object.assign(x, { status: 'active', pausedReason: null, pausedSeq: null }));
    d.kick();
    await settled(d, m.id, 3);
    expect(monitors.event(m.id, later.seq)?.delivery).toBe('delivered');
    expect(monitors.get(m.id)?.failures).toBe(0);
    expect(givenUp).toHaveLength(1);
  });

  it('a 3xx is a failed attempt, its Location not followed', async () => {
    const m = await monitor('/hook/moved');
    plan('/hook/moved', status(302, { location: '/hook/elsewhere' }));
    const d = deliverer();
    const e = await event(m);
    await settled(d, m.id, 1);
    expect(attempts(m.id)).toMatchObject([{ attempt: 1, status: 302, ok: false, error: 'HTTP 302 (redirects are not followed)' }]);
    expect(to('/hook/elsewhere')).toEqual([]);
    expect(monitors.event(m.id, e.seq)?.delivery).toBe('pending');
    expect(outboxOf(m.id)).toHaveLength(1);
  });

  it(`the log keeps a monitor's newest ${ATTEMPTS_KEPT} attempts; one in the same ms as another is numbered after it`, async () => {
    const m = await monitor('/hook/log');
    const old = (i: number): DeliveryAttempt => ({
      event: 'evt_old',
      at: T0 - ATTEMPTS_KEPT + 1 + i,
      attempt: 1,
      status: 500,
      ok: false,
      error: 'HTTP 500',
      durationMs: 1,
      nextAt: null,
    });
    // A full log whose newest entry is at this very ms.
    await monitors.root.transaction(() => {
      for (let i = 0; i < ATTEMPTS_KEPT; i++) monitors.attempts.put([m.id, T0 - ATTEMPTS_KEPT + 1 + i, 0], old(i));
    });
    const d = deliverer();
    const e = await event(m);
    await until(() => monitors.event(m.id, e.seq)?.delivery === 'delivered' && d.inFlight === 0, 'the delivery');
    const keys = [...monitors.attempts.getKeys({ start: [m.id], end: [m.id, Number.MAX_SAFE_INTEGER] })];
    expect(keys).toHaveLength(ATTEMPTS_KEPT);
    expect(keys[0]).toEqual([m.id, T0 - ATTEMPTS_KEPT + 2, 0]);
    expect(keys.slice(-2)).toEqual([
      [m.id, T0, 0],
      [m.id, T0, 1],
    ]);
    expect(monitors.attempts.get([m.id, T0, 1])).toMatchObject({ event: e.id, status: 200, ok: true });
  });

  it('a deleted monitor is not delivered to, and its entries go', async () => {
    const m = await monitor('/hook/gone');
    const d = deliverer();
    const e = await event(m);
    await settled(d, m.id, 1);
    // An entry left behind (as if read before the delete) is dropped, not sent.
    await monitors.remove(m.id);
    await monitors.outbox.put([now, e.id], { event: e.id, monitor: m.id, seq: e.seq, attempts: 0, firstDue: now });
    d.kick();
    await until(() => outboxOf(m.id).length === 0 && d.inFlight === 0, 'the entry dropped');
    expect(to('/hook/gone')).toHaveLength(1);
  });

  it('restart: stopped with an attempt in flight and a retry scheduled, the store closed and reopened, a new deliverer delivers what was pending', async () => {
    const held: http.ServerResponse[] = [];
    const m = await monitor('/hook/restart');
    plan('/hook/restart', status(500));
    const d = deliverer();
    const e1 = await event(m);
    await settled(d, m.id, 1);
    const m2 = await monitor('/hook/restart2');
    plan('/hook/restart2', (res) => held.push(res));
    const e2 = await event(m2);
    await until(() => held.length === 1, 'the held request');
    const stopped = d.stop();
    let done = false;
    void stopped.then(() => (done = true));
    await new Promise((r) => setImmediate(r));
    expect(done, 'stop() waits for the attempt in flight').toBe(false);
    held.shift()!.writeHead(500).end();
    await stopped;
    expect(attempts(m2.id)).toHaveLength(1);
    // Stopped: a new event starts nothing (an attempt would be in flight as the feed returns).
    const e3 = await event(m2);
    expect(d.inFlight).toBe(0);
    now = Math.max(...[...monitors.outbox.getKeys()].map((k) => k[0]));

    await store.close();
    store = new Store(lmdbPath);
    monitors = new MonitorStore(store);
    const again = deliverer();
    await settled(again, m.id, 2);
    await settled(again, m2.id, 3);
    expect([monitors.event(m.id, e1.seq)?.delivery, monitors.event(m2.id, e2.seq)?.delivery, monitors.event(m2.id, e3.seq)?.delivery]).toEqual([
      'delivered',
      'delivered',
      'delivered',
    ]);
    expect(outboxOf(m.id).concat(outboxOf(m2.id))).toEqual([]);
    expect(to('/hook/restart').map((g) => g.headers['newsmatch-event-id'])).toEqual([e1.id, e1.id]);
  });
});

describe('checkWebhookUrl', () => {
  it('takes any HTTP answer to a signed monitor.ping', async () => {
    plan('/hook/check', status(404));
    await checkWebhookUrl(client, `${base}/hook/check`, SECRET, T0);
    const [req] = to('/hook/check');
    expect(JSON.parse(req.body.toString())).toMatchObject({ type: 'monitor.ping', created: '2026-05-01T09:00:00Z' });
    expect(req.headers['newsmatch-event-id']).toBe(JSON.parse(req.body.toString()).id);
    expect(verifySignature(SECRET, String(req.headers['newsmatch-signature']), req.body, T0 / 1000)).toBe(true);
  });

  it('refuses what is not an http(s) URL, or carries credentials: 422 invalid_request naming webhook_url', async () => {
    for (const url of ['not a url', 'ftp://example.com/hook', 'file:///etc/passwd', 'https://user:pw@example.com/hook']) {
      const e = await failure(checkWebhookUrl(client, url, SECRET));
      expect([e.status, e.code]).toEqual([422, 'invalid_request']);
      expect(e.message).toMatch(/^webhook_url: /);
    }
    expect(got).toEqual([]);
  });

  it('a private or loopback target without LIVE_ALLOW_PRIVATE is 422 webhook_blocked, and nothing is sent', async () => {
    const guarded = new HttpClient(webhookDelivery({ timeoutMs: 2000, allowPrivate: false, userAgent: 'newsmatch-webhooks/1' }));
    try {
      for (const url of [`${base}/hook/private`, `${base.replace('127.0.0.1', 'localhost')}/hook/private`, 'http://10.1.2.3/hook']) {
        const e = await failure(checkWebhookUrl(guarded, url, SECRET));
        expect([e.status, e.code]).toEqual([422, 'webhook_blocked']);
      }
    } finally {
      await guarded.close();
    }
    expect(got).toEqual([]);
  });

  it('no HTTP answer (a closed port, or none in time) is 422 webhook_unreachable, saying why', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const refused = await failure(checkWebhookUrl(client, `http://127.0.0.1:${port}/hook`, SECRET));
    expect([refused.status, refused.code, refused.message]).toEqual([
      422,
      'webhook_unreachable',
      'webhook_url gave no HTTP answer to a signed test POST: the connection was refused (ECONNREFUSED)',
    ]);

    const quick = new HttpClient(webhookDelivery({ timeoutMs: 200, allowPrivate: true, userAgent: 'newsmatch-webhooks/1' }));
    plan('/hook/silent', () => undefined);
    try {
      const late = await failure(checkWebhookUrl(quick, `${base}/hook/silent`, SECRET));
      expect([late.code, late.message]).toEqual(['webhook_unreachable', 'webhook_url gave no HTTP answer to a signed test POST: no answer within 200 ms']);
    } finally {
      await quick.close();
    }
  });
});
