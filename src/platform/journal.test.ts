/**
 * The billing journal and its view (journal.ts, billing.ts) on real LMDB stores: a state is
 * what its ledger adds up to; the view is derived (deleted, it is rebuilt alike; folded in
 * the background, nothing readers see changes); changes from another process while this one
 * charges are neither lost nor counted twice; two processes charging one wallet never spend a
 * credit twice; a store of the first layout still reads and charges.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../errors.js';
import { Store } from '../store/index.js';
import { childEnv, ROOT } from '../../test/helpers/cli.js';
import { Billing, type Charge } from './billing.js';
import { LedgerView, OPERATOR } from './journal.js';
import { applyEntry, emptyState, live, total, type LedgerEntry } from './ledger.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-journal-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const ctx = (i: number) => ({ requestId: `req-${i}`, keyId: 'key' });

/** A store in a new DATA_DIR, with a clock the test moves. */
function open(name: string, clock: { now: number }): { dir: string; store: Store; billing: Billing } {
  const dir = path.join(root, name);
  const store = new Store(path.join(dir, 'lmdb'));
  return { dir, store, billing: new Billing(store, () => clock.now) };
}

/** The ledger's own arithmetic: each entry's balance is the running sum; seqs run 1, 2, 3 … */
function expectAddsUp(entries: LedgerEntry[], balance: number): void {
  let sum = 0;
  entries.forEach((e, i) => {
    expect(e.seq, 'seqs have no gaps and no repeats').toBe(i + 1);
    sum += e.credits;
    expect(e.balance, `entry ${e.seq} (${e.kind})`).toBe(sum);
  });
  expect(sum).toBe(balance);
}

describe('the ledger is the state', () => {
  it("replaying an account's ledger gives its state, through grants, expiry, refunds and plan changes", async () => {
    const clock = { now: Date.UTC(2026, 0, 31, 12) };
    const { store, billing } = open('replay', clock);
    const ids = Array.from({ length: 6 }, (_, i) => billing.createAccount(`r${i}`).id);
    let n = 0;
    for (let round = 0; round < 3; round++) {
      for (const [k, id] of ids.entries()) {
        if (k % 2 === 0) billing.grant(id, 7 + round);
        if (k % 3 === 0) billing.buy(id, 11);
        const charges: Charge[] = [];
        for (const product of ['news', 'web_search', 'launches', 'marketplace'] as const) {
          try {
            charges.push(await billing.charge(id, product, ctx(n++)));
          } catch (e) {
            if (!(e instanceof AppError && e.code === 'quota_exceeded')) throw e;
          }
        }
        if (charges.length > 0) await billing.refund(charges[k % charges.length], 'HTTP 502');
        if (k === round) billing.subscribe(id, 'marketplace', 'pro');
      }
      // A month on: granted credits expire, marketplace periods renew.
      clock.now += 32 * 86_400_000;
    }
    for (const id of ids) {
      const entries = billing.entries(id);
      const replayed = emptyState();
      for (const e of entries) applyEntry(replayed, e);
      const view = billing.summary(id);
      const liveLots = replayed.lots.filter((l) => live(l, clock.now));
      // summary() wrote off what expired this period: the entries read now include it.
      const after = billing.entries(id);
      const state = emptyState();
      for (const e of after) applyEntry(state, e);
      expect(total(state.lots.filter((l) => live(l, clock.now)))).toBe(view.credits.total);
      expect(total(liveLots)).toBe(view.credits.total);
      expect(billing.balance(id)).toBe(view.credits.total);
      expectAddsUp(after, view.credits.total);
      const market = view.subscriptions.find((s) => s.product === 'marketplace')!;
      const u = state.usage.marketplace;
      expect(market.used).toBe(u && u.periodStart === Date.parse(market.period_start) ? u.used : 0);
      // Every refund names a debit, which shows it.
      for (const r of after.filter((e) => e.kind === 'refund'))
        expect(after.find((e) => e.seq === r.refundOf)).toMatchObject({ kind: 'debit', refundedBy: r.seq });
    }
    await billing.close();
    await store.close();
  });
});

describe('the view (DATA_DIR/ledger) is derived from the journal', () => {
  it('a background fold changes nothing a reader sees; deleted, the view is rebuilt alike', async () => {
    const clock = { now: Date.UTC(2026, 4, 1) };
    const a = open('rebuild', clock);
    const ids = Array.from({ length: 20 }, (_, i) => a.billing.createAccount(`v${i}`).id);
    for (const id of ids.slice(0, 10)) a.billing.buy(id, 100);
    await Promise.all(Array.from({ length: 600 }, (_, i) => a.billing.charge(ids[i % 20], i % 3 ? 'news' : 'contacts', ctx(i))));
    // More than a row of the view holds (ENTRIES_PER_ROW, 4,096) for one account.
    await Promise.all(Array.from({ length: 4500 }, (_, i) => a.billing.charge(OPERATOR, 'match', ctx(1000 + i))));
    const snapshot = () => ({
      ledgers: ids.map((id) => a.billing.entries(id)),
      balances: ids.map((id) => a.billing.balance(id)),
      operator: a.billing.entries(OPERATOR).length,
    });
    const before = snapshot();
    // The records are the codec's bytes (journal-codec.ts: version 1 first), not msgpack.
    const raw = a.store.root.openDB({ name: 'billingJournal', encoding: 'binary' });
    const [last] = raw.getRange({ reverse: true, limit: 1 });
    expect((last.value as Buffer)[0]).toBe(1);
    // The worker folds what the request path appended (here at once, not after 65,536 entries).
    expect(await a.billing.fold()).toBeGreaterThan(0);
    expect(await a.billing.fold()).toBe(0);
    expect(snapshot()).toEqual(before);
    for (const k of ids.keys()) expectAddsUp(before.ledgers[k], before.balances[k]);
    expect(before.operator).toBe(4500);
    await a.billing.close();
    await a.store.close();
    // A row per account per fold, split at ENTRIES_PER_ROW.
    const view = new LedgerView(path.join(a.dir, 'ledger'));
    const rows = [...view.entries.getRange({ start: [OPERATOR, 0], end: [OPERATOR, Number.MAX_SAFE_INTEGER] })];
    expect(rows.map(({ key, value }) => [key[1], value.length / 2])).toEqual([
      [1, 4096],
      [4097, 404],
    ]);
    await view.close();

    fs.rmSync(path.join(a.dir, 'ledger'), { recursive: true });
    const b = open('rebuild', clock);
    expect(fs.existsSync(path.join(a.dir, 'ledger'))).toBe(true);
    expect(ids.map((id) => b.billing.entries(id))).toEqual(before.ledgers);
    expect(ids.map((id) => b.billing.balance(id))).toEqual(before.balances);
    // And it goes on charging from there.
    expect((await b.billing.charge(ids[0], 'news', ctx(5000))).remaining).toBe(before.balances[0] - 1);
    await b.billing.close();
    await b.store.close();
  });
});

/** Starts the billing child on `dir`; resolves once it has opened the store. */
function child(dir: string, op: 'charge' | 'grant' | 'grant-busy', account: string, count: number, tag: string) {
  const p = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/billing-child.ts', dir, op, account, String(count), tag], {
    cwd: ROOT,
    env: childEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  p.stdout.on('data', (d) => (out += d));
  p.stderr.on('data', (d) => (err += d));
  const ready = new Promise<void>((resolve, reject) => {
    const look = () => (out.includes('ready\n') ? resolve() : undefined);
    p.stdout.on('data', look);
    p.once('exit', (code) => reject(new Error(`child exited ${code} before it was ready: ${err}`)));
  });
  const done = new Promise<{ ok: number; refused: number; errors: string[] }>((resolve, reject) =>
    p.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)!)) : reject(new Error(`child exited ${code}: ${err}`)))),
  );
  return { ready, go: () => p.stdin.end('go\n'), done };
}

/**
 * A new store with one account on the `sources` mega plan (and `buy` credits bought), and a
 * child process running `op` on that account, started.
 */
async function racing(name: string, op: 'charge' | 'grant' | 'grant-busy', count: number, tag: string, buy = 0) {
  const clock = { now: Date.now() };
  const { dir, store, billing } = open(name, clock);
  const id = billing.createAccount(name).id;
  billing.subscribe(id, 'sources', 'mega');
  if (buy > 0) billing.buy(id, buy);
  const other = child(dir, op, id, count, tag);
  await other.ready;
  other.go();
  return { clock, store, billing, id, other };
}

describe('across processes', () => {
  it('credits granted by another process while this one charges: every call charged once, none lost, the ledger adds up', async () => {
    const { store, billing, id, other } = await racing('grants', 'grant', 40, 'cli');
    // 250 free + 40 granted elsewhere; 400 calls: 290 served whatever the interleaving.
    let served = 0;
    let refused = 0;
    const calls = async (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        try {
          await billing.charge(id, 'sources', ctx(i));
          served++;
        } catch (e) {
          if (e instanceof AppError && e.code === 'quota_exceeded') refused++;
          else throw e;
        }
        await new Promise((r) => setImmediate(r));
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, k) => calls(k * 30, k * 30 + 30)));
    expect(await other.done).toMatchObject({ ok: 40, errors: [] });
    await Promise.all(Array.from({ length: 8 }, (_, k) => calls(240 + k * 20, 240 + k * 20 + 20)));
    expect(served + refused).toBe(400);
    expect(served).toBe(290);
    const entries = billing.entries(id);
    expectAddsUp(entries, 0);
    expect(entries.filter((e) => e.kind === 'grant' && e.credits === 1)).toHaveLength(40);
    expect(new Set(entries.filter((e) => e.kind === 'debit').map((e) => e.requestId)).size).toBe(290);
    await billing.close();
    await store.close();
  });

  it("another account changed elsewhere: this account's calls in flight are computed again, never counted twice", async () => {
    const clock = { now: Date.now() };
    const { dir, store, billing } = open('other-account', clock);
    const mine = billing.createAccount('mine').id;
    const theirs = billing.createAccount('theirs').id;
    billing.subscribe(mine, 'sources', 'mega');
    const other = child(dir, 'grant', theirs, 60, 'cli');
    await other.ready;
    other.go();
    // Every grant to `theirs` makes this process's batches in flight fail: each must go back to
    // what LMDB holds for `mine`, or the calls computed again would count twice.
    const results: string[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async (_, k) => {
        for (let i = 0; i < 40; i++) {
          results.push(
            await billing.charge(mine, 'sources', ctx(k * 100 + i)).then(
              () => 'ok',
              (e: unknown) => (e instanceof AppError ? e.code : String(e)),
            ),
          );
          await new Promise((r) => setImmediate(r));
        }
      }),
    );
    expect(await other.done).toMatchObject({ ok: 60, errors: [] });
    expect(results.filter((r) => r === 'ok')).toHaveLength(250);
    expect(results.filter((r) => r === 'quota_exceeded')).toHaveLength(70);
    expect(billing.balance(mine)).toBe(0);
    expectAddsUp(billing.entries(mine), 0);
    expectAddsUp(billing.entries(theirs), 310);
    await billing.close();
    await store.close();
  });

  it('another process appending back to back (a script granting in a loop) refuses no charge: each is computed again under the write lock and lands', async () => {
    const { store, billing, id, other } = await racing('busy-script', 'grant-busy', 150, 'cli', 100_000);
    // Charges while the script runs (it holds the write lock most of the time), a few started
    // every turn of the event loop whatever is in flight, so some are always made while a
    // commit computes the ones before them again: every one is served, none refused for
    // contention (503 product_unavailable), none counted twice.
    let running = true;
    void other.done.finally(() => (running = false));
    const calls: Promise<string>[] = [];
    while ((running || calls.length < 200) && calls.length < 60_000) {
      for (let k = 0; k < 3; k++) {
        calls.push(
          billing.charge(id, 'sources', ctx(calls.length)).then(
            () => 'ok',
            (e: unknown) => (e instanceof AppError ? e.code : String(e)),
          ),
        );
      }
      await new Promise((r) => setTimeout(r, 1));
    }
    const results = await Promise.all(calls);
    expect(await other.done).toMatchObject({ ok: 150, errors: [] });
    expect(results.filter((r) => r !== 'ok')).toEqual([]);
    const entries = billing.entries(id);
    expect(entries.filter((e) => e.kind === 'grant' && e.credits === 1)).toHaveLength(150);
    const debits = entries.filter((e) => e.kind === 'debit');
    expect(debits).toHaveLength(results.length);
    expect(new Set(debits.map((e) => e.requestId)).size).toBe(results.length);
    expectAddsUp(entries, 250 + 100_000 + 150 - results.length);
    await billing.close();
    await store.close();
  }, 60_000);

  it('a close while charges are recomputed under the lock waits for them: each lands once, none is left hanging', async () => {
    const { clock, store, billing, id, other } = await racing('close-busy', 'grant-busy', 100, 'cli');
    // Once the script's first grant is in, a batch sent now is computed on a head it has moved.
    while (billing.entries(id).every((e) => e.kind !== 'grant' || e.credits !== 1)) await new Promise((r) => setTimeout(r, 1));
    const calls = Array.from({ length: 40 }, (_, i) => billing.charge(id, 'sources', ctx(i)).then(() => 'ok'));
    await billing.close();
    expect(await Promise.all(calls)).toEqual(Array(40).fill('ok'));
    expect(await other.done).toMatchObject({ ok: 100, errors: [] });
    await store.close();
    // Read back from a new store: what the close left on disk.
    const again = open('close-busy', clock);
    const entries = again.billing.entries(id);
    expect(entries.filter((e) => e.kind === 'debit')).toHaveLength(40);
    expectAddsUp(entries, 250 + 100 - 40);
    await again.billing.close();
    await again.store.close();
  }, 60_000);

  it('two processes charging one wallet never spend a credit twice', async () => {
    const { store, billing, id, other } = await racing('two-writers', 'charge', 250, 'child', 50); // 300 credits in all
    const mine = await Promise.all(
      Array.from({ length: 250 }, (_, i) =>
        billing.charge(id, 'sources', { requestId: `parent-${i}`, keyId: 'parent' }).then(
          () => 'ok',
          (e: unknown) => (e instanceof AppError ? e.code : String(e)),
        ),
      ),
    );
    const theirs = await other.done;
    expect(theirs.errors).toEqual([]);
    const ok = mine.filter((r) => r === 'ok').length;
    // Whoever got there first: 300 calls served between the two, 200 refused, none twice.
    expect(ok + theirs.ok).toBe(300);
    expect(mine.filter((r) => r === 'quota_exceeded').length + theirs.refused).toBe(200);
    const entries = billing.entries(id);
    expectAddsUp(entries, 0);
    const debits = entries.filter((e) => e.kind === 'debit');
    expect(debits).toHaveLength(300);
    expect(new Set(debits.map((e) => e.requestId)).size).toBe(300);
    expect(debits.filter((e) => e.requestId!.startsWith('child-'))).toHaveLength(theirs.ok);
    await billing.close();
    await store.close();
  }, 60_000);
});

describe('a store of the first layout', () => {
  it("reads its ledger and state as each account's history, and charges on from there", async () => {
    const clock = { now: Date.UTC(2026, 2, 1) };
    const dir = path.join(root, 'legacy');
    const store = new Store(path.join(dir, 'lmdb'));
    // What the first layout wrote: an account, its subscription, its state and its ledger.
    const id = 'acct_legacy0000000000000';
    store.root.transactionSync(() => {
      store.root.openDB({ name: 'accounts' }).putSync(id, { id, name: 'old', createdAt: clock.now });
      store.root.openDB({ name: 'subs' }).putSync([id, 'news'], { product: 'news', plan: 'free', since: clock.now });
      const ledger = store.root.openDB({ name: 'ledger' });
      ledger.putSync([id, 1], { seq: 1, at: clock.now, kind: 'subscribe', credits: 0, balance: 0, product: 'news', plan: 'free' });
      ledger.putSync([id, 2], { seq: 2, at: clock.now, kind: 'grant', credits: 250, balance: 250, lots: [[1, 250]], note: 'new account' });
      ledger.putSync([id, 3], {
        seq: 3,
        at: clock.now,
        kind: 'debit',
        credits: -1,
        balance: 249,
        product: 'news',
        plan: 'free',
        lots: [[1, 1]],
        requestId: 'old-1',
        keyId: 'k',
      });
      store.root
        .openDB({ name: 'accountState', useVersions: true })
        .putSync(
          id,
          { lots: [{ id: 1, kind: 'free', credits: 249, granted: 250, expiresAt: null }], seq: 3, usage: { news: { periodStart: clock.now, used: 1 } } },
          4,
        );
    });
    const billing = new Billing(store, () => clock.now);
    expect(billing.balance(id)).toBe(249);
    expect(await billing.charge(id, 'news', ctx(1))).toMatchObject({ credits: 1, remaining: 248, seq: 4 });
    const entries = billing.entries(id);
    expect(entries.map((e) => [e.seq, e.kind, e.requestId])).toEqual([
      [1, 'subscribe', undefined],
      [2, 'grant', undefined],
      [3, 'debit', 'old-1'],
      [4, 'debit', 'req-1'],
    ]);
    expectAddsUp(entries, 248);
    expect(billing.summary(id).subscriptions).toEqual([expect.objectContaining({ product: 'news', used: 2 })]);
    await billing.close();
    await store.close();
  });
});
