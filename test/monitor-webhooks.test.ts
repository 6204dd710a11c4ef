/**
 * Webhook monitors end to end, through the service: the URL is checked at creation (a signed
 * ping; private and unreachable URLs refused), matches are POSTed signed with the secret shown
 * once, retried with backoff while the receiver fails, logged per attempt, and given up after
 * MONITOR_RETRY_HOURS with the monitor paused and the credits refunded. Then a server killed
 * with SIGKILL while a delivery is in flight: after the restart every match arrives (at least
 * once, the same event id: receivers dedup on it).
 */
import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path, { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { verifySignature } from '../src/monitors/index.js';
import { openService } from '../src/service.js';
import { perturb, randUnit } from './helpers/corpus.js';
import { writeArrivals } from './helpers/monitors.js';
import { vec } from './helpers/oracle.js';
import { Rng } from './helpers/rng.js';
import { expectError, makeTempDir, startHarness, type Harness } from './helpers/service.js';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A loopback receiver: `answer` decides each request's status (or null: never answer). */
async function receiver(answer: (r: Received, n: number) => number | null): Promise<{ url: string; got: Received[]; close(): Promise<void> }> {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      const r = { headers: req.headers, body };
      got.push(r);
      const status = answer(r, got.length);
      if (status !== null) res.writeHead(status).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    got,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const rng = new Rng(8080);
const topic = randUnit(rng);
let n = 0;
function batch(dir: string, count: number): { file: string; urls: string[] } {
  const urls = Array.from({ length: count }, () => `https://wire.example/hook/${n++}`);
  const file = join(dir, `hook-${n}.jsonl`);
  writeArrivals(file, urls, '2021-03-04T05:06:07Z', () => perturb(rng, topic, 0.2));
  return { file, urls };
}

async function until(cond: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

let now = Date.UTC(2026, 10, 1, 12);
let h: Harness;
let auth: Record<string, string>;
let account: string;

beforeAll(async () => {
  h = await startHarness({ corpus: { articles: 30, seed: 5 }, env: { LIVE_ALLOW_PRIVATE: 'on', MONITOR_WEBHOOK_TIMEOUT_MS: '2000' }, clock: () => now });
  account = h.service.billing.createAccount('hooks desk').id;
  auth = { authorization: `Bearer ${h.service.keys.create({ scheme: 'bearer', account }).secret}` };
  h.service.startBackground();
});

afterAll(async () => {
  await h?.close();
});

const create = (body: unknown) => h.inject({ method: 'POST', url: '/v1/monitors', payload: body, headers: auth, noAuth: true });

describe('webhook monitors', () => {
  it('checks the URL with a signed ping, then delivers signed matches, retrying with backoff until a 2xx', async () => {
    let failFirst = 2;
    const rx = await receiver((r) => (JSON.parse(r.body).type === 'monitor.ping' ? 200 : failFirst-- > 0 ? 503 : 200));
    try {
      const res = await create({ vector: vec(topic), min_score: 0.6, webhook_url: rx.url });
      expect(res.status, res.raw).toBe(200);
      const { monitor, secret } = res.body;
      expect(secret).toMatch(/^whsec_/);
      expect(monitor.delivery).toEqual({ type: 'webhook', url: rx.url });
      // The ping came first, signed with the secret the answer shows (once: GET never shows it).
      expect(JSON.parse(rx.got[0].body).type).toBe('monitor.ping');
      expect(verifySignature(secret, String(rx.got[0].headers['newsmatch-signature']), rx.got[0].body, now / 1000)).toBe(true);
      expect((await h.inject({ url: `/v1/monitors/${monitor.id}`, headers: auth, noAuth: true })).raw).not.toContain(secret);

      const { file, urls } = batch(h.dir, 3);
      await h.service.importFile(file);
      // An attempt is settled (logged, its retry scheduled from the clock of then) before the clock moves.
      const settled = (k: number) =>
        until(() => h.service.monitorStore.attemptsOf(monitor.id, 10).length === k && h.service.webhooks.inFlight === 0, `attempt ${k} settled`);
      await until(() => rx.got.length === 2, 'the first attempt');
      await settled(1);
      // Moved past each backoff (at most 1.5 × 30 s, then 1.5 × 60 s), the deliverer tries again.
      now += 46_000;
      h.service.webhooks.kick();
      await until(() => rx.got.length === 3, 'the second attempt');
      await settled(2);
      now += 91_000;
      h.service.webhooks.kick();
      await until(() => rx.got.length === 4, 'the third attempt');
      const tries = rx.got.slice(1);
      const ids = new Set(tries.map((r) => r.headers['newsmatch-event-id']));
      expect(ids.size).toBe(1);
      for (const r of tries) expect(verifySignature(secret, String(r.headers['newsmatch-signature']), r.body, now / 1000, 600)).toBe(true);
      expect(verifySignature(secret, String(tries[0].headers['newsmatch-signature']), `${tries[0].body} `, now / 1000, 600)).toBe(false);
      const body = JSON.parse(tries[2].body);
      expect(body).toMatchObject({ type: 'monitor.matches', monitor: monitor.id, count: 3, id: [...ids][0] });
      expect(body.items.map((i: { source_url: string }) => i.source_url).sort()).toEqual(urls.sort());

      await until(() => h.service.monitorStore.attemptsOf(monitor.id, 10).some((a) => a.ok), 'the delivered attempt logged');
      const log = await h.inject({ url: `/v1/monitors/${monitor.id}/deliveries`, headers: auth, noAuth: true });
      expect(log.status, log.raw).toBe(200);
      expect(log.body.items.map((a: { status: number; attempt: number; ok: boolean }) => [a.attempt, a.status, a.ok])).toEqual([
        [3, 200, true],
        [2, 503, false],
        [1, 503, false],
      ]);
      const shown = (await h.inject({ url: `/v1/monitors/${monitor.id}`, headers: auth, noAuth: true })).body;
      expect(shown.failures).toBe(0);
      expect(shown.status).toBe('active');
      await h.inject({ method: 'DELETE', url: `/v1/monitors/${monitor.id}`, headers: auth, noAuth: true });
    } finally {
      await rx.close();
    }
  });

  it('gives up after MONITOR_RETRY_HOURS: the monitor pauses with the reason, the credits come back', async () => {
    const rx = await receiver((r) => (JSON.parse(r.body).type === 'monitor.ping' ? 204 : 500));
    try {
      const res = await create({ vector: vec(topic), min_score: 0.6, webhook_url: rx.url });
      const id = res.body.monitor.id;
      const before = h.service.billing.balance(account);
      await h.service.importFile(batch(h.dir, 2).file);
      await h.service.monitors.pump();
      expect(h.service.billing.balance(account)).toBe(before - 2);
      await until(() => rx.got.length === 2, 'the first attempt');
      // A day of retries: the clock moves 1.5 h at a time (past the backoff's cap with its jitter), the deliverer keeps trying.
      for (let step = 0; step < 20 && (await h.inject({ url: `/v1/monitors/${id}`, headers: auth, noAuth: true })).body.status === 'active'; step++) {
        const seen = rx.got.length;
        now += 5_400_001;
        h.service.webhooks.kick();
        await until(() => rx.got.length > seen || h.service.monitorStore.get(id)!.status === 'paused', 'another attempt or the pause');
        await until(() => h.service.webhooks.inFlight === 0, 'the attempt settled');
      }
      const shown = (await h.inject({ url: `/v1/monitors/${id}`, headers: auth, noAuth: true })).body;
      expect(shown.status).toBe('paused');
      expect(shown.paused_reason).toMatch(/HTTP 500/);
      expect(shown.failures).toBeGreaterThan(5);
      await until(() => h.service.billing.balance(account) === before, 'the refund');
      // Resumed, it matches what arrives next.
      const resumed = await h.inject({ method: 'POST', url: `/v1/monitors/${id}/resume`, headers: auth, noAuth: true });
      expect(resumed.body.status).toBe('active');
      await h.inject({ method: 'DELETE', url: `/v1/monitors/${id}`, headers: auth, noAuth: true });
    } finally {
      await rx.close();
    }
  });

  it('refuses a private address (LIVE_ALLOW_PRIVATE off), an unreachable one, and a URL that is not http(s)', async () => {
    const closed = await receiver(() => 200);
    await closed.close();
    expectError(await create({ vector: vec(topic), webhook_url: closed.url }), 422, 'webhook_unreachable');
    expectError(await create({ vector: vec(topic), webhook_url: 'ftp://hooks.example/x' }), 422, 'invalid_request');
    expectError(await create({ vector: vec(topic), webhook_url: 'https://user:pw@hooks.example/x' }), 422, 'invalid_request');
    expectError(await create({ vector: vec(topic), webhook_url: 'not a url' }), 422, 'invalid_request');
    const strict = await startHarness({ corpus: null });
    try {
      const acct = strict.service.billing.createAccount('strict').id;
      const key = strict.service.keys.create({ scheme: 'bearer', account: acct }).secret;
      const rx = await receiver(() => 200);
      try {
        for (const url of [rx.url, 'http://10.1.2.3/hook', 'http://[::1]:9/hook', 'http://169.254.169.254/latest']) {
          const res = await strict.inject({
            method: 'POST',
            url: '/v1/monitors',
            payload: { vector: vec(topic), webhook_url: url },
            headers: { authorization: `Bearer ${key}` },
            noAuth: true,
          });
          expectError(res, 422, 'webhook_blocked');
        }
        expect(rx.got).toEqual([]);
      } finally {
        await rx.close();
      }
    } finally {
      await strict.close();
    }
  });
});

describe('kill -9 mid-delivery', () => {
  it('a server killed while a delivery is in flight delivers it after the restart: no match lost', async () => {
    const dir = makeTempDir('newsmatch-hook-kill-');
    const dataDir = join(dir, 'data');
    const env = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'info', LIVE_ALLOW_PRIVATE: 'on', MONITOR_PUMP_MS: '50' };
    // The first delivery hangs (the server dies holding it); every later one is answered.
    let hang = true;
    const rx = await receiver((r) => {
      if (JSON.parse(r.body).type === 'monitor.ping') return 200;
      if (hang) {
        hang = false;
        return null;
      }
      return 200;
    });
    const CLI = ['--import', 'tsx', path.resolve('src/cli/index.ts')];
    const serve = () => {
      const child = spawn(process.execPath, [...CLI, 'serve', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      return { child, out: () => out, exited: new Promise<number | null>((r) => child.once('exit', r)) };
    };
    try {
      const service = await openService(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', LIVE_ALLOW_PRIVATE: 'on' }));
      const acct = service.billing.createAccount('killed').id;
      const { monitor } = await service.monitors.create(acct, 'k', { vector: vec(topic), min_score: 0.6, webhook_url: rx.url });
      await service.close();

      const first = serve();
      await until(() => /listening/.test(first.out()) || first.child.exitCode !== null, 'the server');
      // Written beside the running server (the CLI import): the server matches it on its next look.
      const { file, urls } = batch(dir, 4);
      const imp = spawnSync(process.execPath, [...CLI, 'import', file], { env, encoding: 'utf8' });
      expect(imp.status, imp.stderr).toBe(0);
      await until(() => rx.got.length === 2, 'the delivery in flight');
      first.child.kill('SIGKILL');
      expect(await first.exited).toBe(null);

      const second = serve();
      await until(() => rx.got.length === 3, 'the delivery after the restart');
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
      const [held, again] = rx.got.slice(1);
      expect(again.headers['newsmatch-event-id']).toBe(held.headers['newsmatch-event-id']);
      expect(again.body).toBe(held.body);
      const items = JSON.parse(again.body).items.map((i: { source_url: string }) => i.source_url);
      expect(items.sort()).toEqual(urls.sort());
      const reopened = await openService(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }));
      try {
        const events = reopened.monitorStore.eventsAfter(monitor.id, -1, 10);
        expect(events.map((e) => e.delivery)).toEqual(['delivered']);
        expect(reopened.monitorStore.dueAfter(Number.MAX_SAFE_INTEGER, null, 10)).toEqual([]);
      } finally {
        await reopened.close();
      }
    } finally {
      await rx.close();
    }
  }, 60_000);
});
