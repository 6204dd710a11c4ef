/**
 * The wallet under load and across a crash: calls racing for the last
 * credits are each charged once and never past the balance; a server killed with SIGKILL while
 * it charges loses no acknowledged debit, and the ledger still sums to the balance.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/http/app.js';
import { Billing, KeyStore, type LedgerEntry } from '../src/platform/index.js';
import { openService } from '../src/service.js';
import { Store } from '../src/store/index.js';
import { cli, ROOT } from './helpers/cli.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-platform-crash-'));
/** Servers this file started: any still running when it ends (a failed test) is killed. */
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  fs.rmSync(root, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const lastLine = (out: string): string => out.trim().split('\n').at(-1)!.trim();

/** Runs `tasks` with at most `width` of them in flight at once; results in task order. */
async function pool<T>(count: number, width: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await task(i);
      }
    }),
  );
  return out;
}

/** The ledger's own arithmetic: each entry's balance is the running sum, the sum is the wallet. */
function expectLedgerAddsUp(entries: LedgerEntry[], balance: number): void {
  let sum = 0;
  for (const e of entries) {
    sum += e.credits;
    expect(e.balance, `entry ${e.seq} (${e.kind})`).toBe(sum);
  }
  expect(sum).toBe(balance);
  const total = (kind: LedgerEntry['kind']) => entries.filter((e) => e.kind === kind).reduce((a, e) => a + Math.abs(e.credits), 0);
  expect(total('grant') + total('buy') - total('debit') + total('refund') - total('expire')).toBe(balance);
}

describe('the wallet under concurrency', () => {
  it('600 credits, 1,000 calls with 32 in flight: exactly 600 served, 400 refused, each debit once, the ledger sums to 0', async () => {
    const dir = path.join(root, 'concurrent');
    // Every read of the clock moves it 100 ms: at most 10 calls can fall in any second, so the
    // mega plan's 20/s never refuses one, whatever the interleaving. Only the wallet can.
    let now = Date.now();
    const service = await openService(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent' }), { clock: () => (now += 100) });
    const app = await buildApp(service);
    await app.ready();
    try {
      const { id } = service.billing.createAccount('racer');
      service.billing.subscribe(id, 'sources', 'mega');
      service.billing.buy(id, 350);
      expect(service.billing.balance(id)).toBe(600);
      const auth = `Bearer ${service.keys.create({ scheme: 'bearer', account: id }).secret}`;

      const results = await pool(1000, 32, async (i) => {
        const res = await app.inject({ method: 'GET', url: '/v1/sources', headers: { authorization: auth, 'x-request-id': `race-${i}` } });
        return { rid: `race-${i}`, status: res.statusCode, headers: res.headers, body: res.json() };
      });

      const served = results.filter((r) => r.status === 200);
      const refused = results.filter((r) => r.status === 429);
      expect(served.length).toBe(600);
      expect(refused.length).toBe(400);
      for (const r of refused) {
        expect(r.body.error).toBe('quota_exceeded');
        expect(r.headers['x-credits-charged']).toBe('0');
        expect(r.headers['x-credits-remaining']).toBe('0');
      }
      for (const r of served) expect(r.headers['x-credits-charged']).toBe('1');
      // Each served call saw its own balance: no two charges read the same wallet.
      expect(served.map((r) => Number(r.headers['x-credits-remaining'])).sort((a, b) => a - b)).toEqual(Array.from({ length: 600 }, (_, k) => k));

      const entries = service.billing.entries(id);
      const debits = entries.filter((e) => e.kind === 'debit');
      expect(debits.length).toBe(600);
      expect(entries.filter((e) => e.kind === 'refund')).toEqual([]);
      expect(new Set(debits.map((e) => e.requestId)).size).toBe(600);
      expect(new Set(debits.map((e) => e.requestId))).toEqual(new Set(served.map((r) => r.rid)));
      expectLedgerAddsUp(entries, 0);
      expect(service.billing.balance(id)).toBe(0);
      const acct = await app.inject({ url: '/v1/account', headers: { authorization: auth } });
      expect(acct.json().credits.total).toBe(0);
    } finally {
      await app.close();
      await service.close();
    }
  });
});

/** `newsmatch serve` as a child process on a free port; resolves once it listens. */
async function startServer(dataDir: string): Promise<{ child: ChildProcess; base: string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'serve', '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '', DATA_DIR: dataDir, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let head = '';
  let base: string | null = null;
  const look = (d: Buffer) => {
    if (base !== null) return; // request logs after this are drained, not kept
    head += d;
    const m = /Server listening at (http:\/\/[0-9.]+:\d+)/.exec(head);
    if (m) base = m[1];
  };
  child.stdout!.on('data', look);
  child.stderr!.on('data', look);
  for (let waited = 0; base === null; waited += 20) {
    if (child.exitCode !== null || waited > 50_000) throw new Error(`serve did not start: ${head}`);
    await sleep(20);
  }
  return { child, base: base!, exited };
}

interface Customer {
  id: string;
  auth: string;
  /** Send times of the last calls (the client keeps under the plan's 20/s). */
  sent: number[];
  /** A response said X-Credits-Remaining: 0. */
  empty: boolean;
}

describe('kill -9 while charging', () => {
  it('every acknowledged call has its debit after a SIGKILL and a restart, and the ledger sums to the balance', async () => {
    const dataDir = path.join(root, 'killed');
    const env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
    const nm = (...args: string[]) => {
      const r = cli(args, env);
      expect(r.status, `newsmatch ${args.join(' ')}: ${r.stderr}`).toBe(0);
      return lastLine(r.stdout);
    };
    // Ten accounts of 60 credits each, on mega (20/s each): 600 calls at up to 200/s in all.
    // The first is made with the CLI as an operator would; the others in process, for speed.
    const ACCOUNTS = 10;
    const CREDITS = 60;
    const first = nm('accounts', 'create', '--name', 'crash-0');
    const firstSecret = nm('keys', 'create', '--account', first);
    nm('subscribe', '--account', first, '--product', 'sources', '--plan', 'mega');
    const customers: Customer[] = [{ id: first, auth: `Bearer ${firstSecret}`, sent: [], empty: false }];
    {
      const store = new Store(path.join(dataDir, 'lmdb'));
      try {
        const billing = new Billing(store);
        const keys = new KeyStore(store);
        for (let i = 1; i < ACCOUNTS; i++) {
          const { id } = billing.createAccount(`crash-${i}`);
          billing.subscribe(id, 'sources', 'mega');
          customers.push({ id, auth: `Bearer ${keys.create({ scheme: 'bearer', account: id }).secret}`, sent: [], empty: false });
        }
        // Down to 60 each: spent before the server starts, under request ids of their own.
        for (const c of customers) {
          const extra = billing.balance(c.id) - CREDITS;
          await Promise.all(Array.from({ length: extra }, (_, i) => billing.charge(c.id, 'sources', { requestId: `before-${c.id}-${i}`, keyId: 'setup' })));
          expect(billing.balance(c.id)).toBe(CREDITS);
        }
      } finally {
        await store.close();
      }
    }

    const IN_FLIGHT = 16;
    const KILL_AFTER = 300;
    const acked = new Map<string, string>(); // request id → account, for every 200 read in full
    const sentIds = new Set<string>();
    const unexpected: string[] = [];
    const failures: string[] = [];
    let calls = 0;

    /** Calls GET /v1/sources until every wallet is empty, the server dies, or `stop` says so. */
    async function load(base: string, stop: () => boolean): Promise<void> {
      let dead = false;
      const worker = async () => {
        while (!dead && !stop()) {
          expect(calls, 'too many calls: the wallets never emptied').toBeLessThan(20_000);
          const t = performance.now();
          const c = customers.find((x) => !x.empty && (x.sent = x.sent.filter((s) => t - s < 1100)).length < 18);
          if (!c) {
            if (customers.every((x) => x.empty)) return;
            await sleep(5);
            continue;
          }
          c.sent.push(t);
          const rid = `call-${++calls}`;
          sentIds.add(rid);
          let res: Response;
          let body: any;
          try {
            res = await fetch(`${base}/v1/sources`, { headers: { authorization: c.auth, 'x-request-id': rid } });
            body = await res.json();
          } catch (e) {
            // The server is gone (or the body was cut short): this call is not acknowledged.
            dead = true;
            failures.push(`${rid}: ${(e as Error).message}`);
            continue;
          }
          if (res.headers.get('x-request-id') !== rid) unexpected.push(`${rid}: answered as ${res.headers.get('x-request-id')}`);
          if (res.headers.get('x-credits-remaining') === '0') c.empty = true;
          if (res.status === 200) acked.set(rid, c.id);
          else if (res.status !== 429 || body.error !== 'quota_exceeded') unexpected.push(`${rid}: ${res.status} ${JSON.stringify(body)}`);
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    }

    const s1 = await startServer(dataDir);
    let killed = false;
    await load(s1.base, () => {
      if (!killed && acked.size >= KILL_AFTER) {
        killed = s1.child.kill('SIGKILL');
      }
      return false;
    });
    expect(killed, `no SIGKILL: ${acked.size} calls acknowledged; ${failures.slice(0, 3).join('; ')}`).toBe(true);
    expect(await s1.exited).toBeNull();
    const ackedBeforeKill = acked.size;

    const s2 = await startServer(dataDir);
    try {
      failures.length = 0;
      await load(s2.base, () => false);
      expect(failures).toEqual([]);
      expect(customers.every((c) => c.empty)).toBe(true);
      // The restarted server agrees: every wallet is empty.
      for (const c of customers) {
        const res = await fetch(`${s2.base}/v1/account`, { headers: { authorization: c.auth } });
        expect((await res.json()).credits.total).toBe(0);
      }
    } finally {
      s2.child.kill('SIGTERM');
      await s2.exited;
    }
    expect(unexpected).toEqual([]);
    console.log(`${ackedBeforeKill} calls acknowledged before SIGKILL, ${acked.size} in all, ${calls} calls made`);

    // `newsmatch usage` shows the same: an empty wallet and a debit line for every acknowledged call.
    const usage = cli(['usage', '--account', first], env);
    expect(usage.status, usage.stderr).toBe(0);
    expect(usage.stdout).toMatch(/^credits: 0 \(subscription 0, free 0, purchased 0\)$/m);
    const usageDebits = new Set(
      usage.stdout
        .split('\n')
        .filter((l) => /\sdebit\s/.test(l))
        .map((l) => /\b(call-\d+)\b/.exec(l)?.[1]),
    );
    for (const [rid, id] of acked) if (id === first) expect(usageDebits.has(rid), `usage lists no debit for ${rid}`).toBe(true);

    const store = new Store(path.join(dataDir, 'lmdb'));
    try {
      const billing = new Billing(store);
      const httpDebits: LedgerEntry[] = [];
      for (const c of customers) {
        const entries = billing.entries(c.id);
        expect(billing.balance(c.id)).toBe(0);
        expectLedgerAddsUp(entries, 0);
        const debits = entries.filter((e) => e.kind === 'debit' && !e.requestId?.startsWith('before-'));
        // No refunds: every call either was served or was refused before its charge.
        expect(entries.filter((e) => e.kind === 'refund')).toEqual([]);
        expect(debits.length).toBe(CREDITS);
        for (const e of debits) expect(sentIds.has(e.requestId!), `a debit for ${e.requestId}, never sent`).toBe(true);
        httpDebits.push(...debits);
        // Every call acknowledged for this account has its debit here.
        const mine = new Set(debits.map((e) => e.requestId));
        for (const [rid, id] of acked) if (id === c.id) expect(mine.has(rid), `acknowledged ${rid} has no debit`).toBe(true);
      }
      // No request charged twice.
      expect(new Set(httpDebits.map((e) => e.requestId)).size).toBe(httpDebits.length);
      // Debits without an acknowledgement are calls that were in flight when the server died.
      const unacked = httpDebits.length - acked.size;
      expect(unacked).toBeGreaterThanOrEqual(0);
      expect(unacked).toBeLessThanOrEqual(IN_FLIGHT);
    } finally {
      await store.close();
    }
  });
});
