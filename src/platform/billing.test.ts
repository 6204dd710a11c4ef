/**
 * The billing core on a real LMDB store with a clock the tests move: each marketplace plan's
 * included, overage and stop numbers (section 8.2), the spending order of credit kinds,
 * expiry with the period, refunds, and the ledger always summing to the balance.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../errors.js';
import { Store } from '../store/index.js';
import { Billing } from './billing.js';
import { OPERATOR } from './journal.js';
import { periodOf } from './ledger.js';
import { FREE_CREDITS } from './spending.js';
import { MARKETPLACE_PLANS, PRODUCT_NAMES, type MarketplacePlan } from './products.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-billing-'));
let store: Store;
let now = Date.UTC(2026, 0, 31, 12);
let billing: Billing;
const ctx = { requestId: 'req', keyId: 'key' };

beforeAll(() => {
  store = new Store(path.join(dir, 'lmdb'));
  billing = new Billing(store, () => now);
});
afterAll(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const code = async (f: () => unknown): Promise<string> => {
  try {
    await f();
  } catch (e) {
    return e instanceof AppError ? `${e.status} ${e.code}` : String(e);
  }
  return 'ok';
};
/** Σ ledger credits = balance: nothing lost, nothing counted twice. */
const expectLedgerSums = (id: string) => {
  const sum = billing.entries(id).reduce((a, e) => a + e.credits, 0);
  expect(sum).toBe(billing.balance(id));
  expect(billing.summary(id).credits.total).toBe(sum);
};

describe('accounts', () => {
  it('a new account: 250 free credits, every product on its free plan, the ledger saying so', async () => {
    const a = billing.createAccount('Acme');
    const s = billing.summary(a.id);
    expect(s.credits).toMatchObject({ total: FREE_CREDITS, free: FREE_CREDITS, subscription: 0, purchased: 0 });
    expect(s.subscriptions.map((x) => [x.product, x.plan]).sort()).toEqual(PRODUCT_NAMES.map((p) => [p, 'free']).sort());
    const market = s.subscriptions.find((x) => x.product === 'marketplace')!;
    expect(market).toMatchObject({ included: 200, stop: 200, overage_requests: 0, used: 0, rate_limit: { quota: 10, windowS: 60 } });
    expect(s.subscriptions.find((x) => x.product === 'match')).toMatchObject({ credits_per_call: 1, rate_limit: { quota: 10, windowS: 60 } });
    expectLedgerSums(a.id);
  });

  it('charges each family its price: indexed 1, live search 5, listing 8, contacts 10', async () => {
    const a = billing.createAccount();
    const charged = [];
    for (const p of ['news', 'web_search', 'launches', 'contacts'] as const) charged.push(await billing.charge(a.id, p, ctx));
    expect(charged.map((c) => c.credits)).toEqual([1, 5, 8, 10]);
    expect(charged.map((c) => c.remaining)).toEqual([249, 244, 236, 226]);
    expectLedgerSums(a.id);
  });

  it('refuses an account without the product (403 not_subscribed), then one that cannot pay (429, not charged)', async () => {
    const a = billing.createAccount();
    billing.subscribe(a.id, 'contacts', 'none');
    expect(await code(() => billing.charge(a.id, 'contacts', ctx))).toBe('403 not_subscribed');
    for (let i = 0; i < 31; i++) await billing.charge(a.id, 'launches', ctx); // 248 credits
    expect(billing.balance(a.id)).toBe(2);
    expect(await code(() => billing.charge(a.id, 'web_search', ctx))).toBe('429 quota_exceeded');
    expect(billing.balance(a.id)).toBe(2);
    expect((await billing.charge(a.id, 'news', ctx)).remaining).toBe(1);
    expectLedgerSums(a.id);
  });

  it('the operator pays nothing and has no cap, but every call is in its ledger', async () => {
    const before = billing.entries(OPERATOR).length;
    for (let i = 0; i < 5; i++) expect(await billing.charge(OPERATOR, 'contacts', ctx)).toMatchObject({ credits: 0, remaining: null });
    const entries = billing.entries(OPERATOR).slice(before);
    expect(entries.map((e) => [e.kind, e.credits, e.product])).toEqual(Array.from({ length: 5 }, () => ['debit', 0, 'contacts']));
  });
});

describe('credit kinds', () => {
  it('spends subscription credits first, then free, then purchased; subscription credits expire with the period', async () => {
    const a = billing.createAccount();
    billing.buy(a.id, 20);
    billing.grant(a.id, 3);
    const period = periodOf(a.createdAt, now);
    expect(billing.summary(a.id).credits).toMatchObject({ total: 273, subscription: 3, free: 250, purchased: 20, expiring: [{ credits: 3 }] });
    await billing.charge(a.id, 'web_search', ctx); // 5: 3 subscription + 2 free
    expect(billing.summary(a.id).credits).toMatchObject({ subscription: 0, free: 248, purchased: 20 });
    for (let i = 0; i < 31; i++) await billing.charge(a.id, 'launches', ctx); // 248 free
    await billing.charge(a.id, 'news', ctx); // now purchased
    expect(billing.summary(a.id).credits).toMatchObject({ subscription: 0, free: 0, purchased: 19 });

    // A grant unused at the period's end is gone, written to the ledger as `expire`.
    billing.grant(a.id, 7);
    const saved = now;
    now = period.end;
    // The summary writes it off at once, so the ledger beside it already sums to its balance.
    expect(billing.summary(a.id).credits).toMatchObject({ total: 19, subscription: 0 });
    expect(
      billing
        .entries(a.id)
        .filter((e) => e.kind === 'expire')
        .map((e) => e.credits),
    ).toEqual([-7]);
    expectLedgerSums(a.id);
    await billing.charge(a.id, 'news', ctx);
    expect(
      billing
        .entries(a.id)
        .filter((e) => e.kind === 'expire')
        .map((e) => e.credits),
    ).toEqual([-7]);
    expectLedgerSums(a.id);
    now = saved;
  });

  it('a refund returns the credits to the lots they came from, once', async () => {
    const a = billing.createAccount();
    billing.buy(a.id, 4);
    for (let i = 0; i < 50; i++) await billing.charge(a.id, 'web_search', ctx); // the 250 free credits
    const c = await billing.charge(a.id, 'news', ctx); // from purchased
    expect(billing.summary(a.id).credits.purchased).toBe(3);
    expect(await billing.refund(c, 'HTTP 503')).toMatchObject({ credits: 0, remaining: 4 });
    expect(await billing.refund(c, 'again')).toMatchObject({ credits: 0, remaining: 4 });
    expect(billing.summary(a.id).credits.purchased).toBe(4);
    const entries = billing.entries(a.id);
    const refund = entries.filter((e) => e.kind === 'refund');
    expect(refund).toHaveLength(1);
    expect(entries.find((e) => e.seq === refund[0].refundOf)).toMatchObject({ kind: 'debit', refundedBy: refund[0].seq });
    expectLedgerSums(a.id);
  });

  it('refuses a grant or purchase that is not a positive whole number', async () => {
    const a = billing.createAccount();
    for (const n of [0, -5, 1.5, Number.NaN]) expect(await code(() => billing.buy(a.id, n))).toBe('422 invalid_request');
    expect(await code(() => billing.grant('acct_nope', 5))).toBe('404 not_found');
  });
});

/** Spends `n` of this period's marketplace requests, as a month of calls would: real charges, 1,000 in flight. */
const use = async (id: string, n: number) => {
  for (let done = 0; done < n; done += 1000) {
    await Promise.all(Array.from({ length: Math.min(1000, n - done) }, () => billing.charge(id, 'marketplace', ctx)));
  }
};
const marketplaceUsed = (id: string) => billing.summary(id).subscriptions.find((s) => s.product === 'marketplace')!.used;

describe('marketplace plans (section 8.2): included, overage, stop', () => {
  const plans = Object.entries(MARKETPLACE_PLANS) as [MarketplacePlan, (typeof MARKETPLACE_PLANS)[MarketplacePlan]][];

  it.each(plans)('%s: %o', async (name, plan) => {
    const a = billing.createAccount();
    billing.subscribe(a.id, 'marketplace', name);
    // Up to just below the included requests in bulk: the boundary is what matters.
    const at = Math.max(0, plan.included - 2);
    await use(a.id, at);
    const overage: number[] = [];
    let used = at;
    while (used < plan.stop) {
      const c = await billing.charge(a.id, 'marketplace', ctx);
      expect(c.credits).toBe(0);
      used++;
      overage.push(billing.entries(a.id).at(-1)!.overageMicros ?? 0);
      if (used === plan.included + 3 && plan.stop - used > 10) {
        // On to just below the stop.
        await use(a.id, plan.stop - 2 - used);
        used = plan.stop - 2;
      }
    }
    // Requests up to `included` cost nothing extra; each one past it costs the overage price.
    const inIncluded = Math.min(2, plan.included);
    expect(overage.slice(0, inIncluded).every((m) => m === 0)).toBe(true);
    if (plan.overageMicros === null) expect(plan.stop).toBe(plan.included);
    else expect(overage.slice(inIncluded).every((m) => m === plan.overageMicros)).toBe(true);
    // At the stop: 429 until the period renews, with Retry-After the seconds to renewal.
    const err = await billing.charge(a.id, 'marketplace', ctx).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('quota_exceeded');
    const { end } = periodOf(billing.subscription(a.id, 'marketplace')!.since, now);
    expect(Number((err as AppError).headers['retry-after'])).toBe(Math.ceil((end - now) / 1000));
    const view = billing.summary(a.id).subscriptions.find((s) => s.product === 'marketplace')!;
    expect(view).toMatchObject({ plan: name, used: plan.stop, included: plan.included, stop: plan.stop, overage_requests: plan.stop - plan.included });
    expect(view.overage_usd).toBeCloseTo(((plan.stop - plan.included) * (plan.overageMicros ?? 0)) / 1e6, 6);
    // The next period starts from zero.
    const saved = now;
    now = end;
    expect((await billing.charge(a.id, 'marketplace', ctx)).credits).toBe(0);
    expect(billing.summary(a.id).subscriptions.find((s) => s.product === 'marketplace')!.used).toBe(1);
    now = saved;
  });

  it('has the numbers of the table', async () => {
    expect(
      Object.fromEntries(
        plans.map(([n, p]) => [
          n,
          [p.priceMicros / 1e6, p.included, p.overageMicros === null ? null : p.overageMicros / 1e6, `${p.rate.quota}/${p.rate.windowS}s`, p.stop],
        ]),
      ),
    ).toEqual({
      free: [0, 200, null, '10/60s', 200],
      pro: [49.99, 3700, 0.0134, '5/1s', 18500],
      ultra: [149, 14800, 0.0101, '10/1s', 44400],
      mega: [399, 49600, 0.0081, '20/1s', 124000],
      payg: [0, 0, 0.0201, '5/1s', 18500],
    });
  });

  it('a refunded marketplace call gives its request back', async () => {
    const a = billing.createAccount();
    const c = await billing.charge(a.id, 'marketplace', ctx);
    expect(marketplaceUsed(a.id)).toBe(1);
    await billing.refund(c, 'HTTP 502');
    expect(marketplaceUsed(a.id)).toBe(0);
  });
});

describe('periods', () => {
  it('are months from the anchor, clamped to short months', async () => {
    const jan31 = Date.UTC(2026, 0, 31, 9);
    expect(periodOf(jan31, Date.UTC(2026, 1, 10))).toEqual({ start: jan31, end: Date.UTC(2026, 1, 28, 9) });
    expect(periodOf(jan31, Date.UTC(2026, 1, 28, 9))).toEqual({ start: Date.UTC(2026, 1, 28, 9), end: Date.UTC(2026, 2, 31, 9) });
    expect(periodOf(jan31, Date.UTC(2027, 0, 1))).toEqual({ start: Date.UTC(2026, 11, 31, 9), end: Date.UTC(2027, 0, 31, 9) });
  });
});

describe('the accounts held in memory', () => {
  it('past its limit a fold forgets idle accounts; a call that took an account before is charged to it all the same', async () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-billing-held-'));
    const s = new Store(path.join(d, 'lmdb'));
    const b = new Billing(s, () => now, undefined, 2);
    try {
      const ids = Array.from({ length: 4 }, () => b.createAccount().id);
      // Taken as the metering path takes them (authorise), then charged.
      const taken = ids.map((id) => b.held(id));
      for (const h of taken) await b.charge(h, 'news', ctx);
      await b.fold();
      // Forgotten: the next lookup makes a new record.
      for (const [i, id] of ids.entries()) expect(b.held(id)).not.toBe(taken[i]);
      // A call that authorised with the old record before the fold: charged to the account.
      for (const h of taken) await b.charge(h, 'news', ctx);
      for (const id of ids) {
        expect(b.balance(id)).toBe(FREE_CREDITS - 2);
        const debits = b.entries(id).filter((e) => e.kind === 'debit');
        expect(debits.map((e) => e.balance)).toEqual([FREE_CREDITS - 1, FREE_CREDITS - 2]);
      }
    } finally {
      await b.close();
      await s.close();
      fs.rmSync(d, { recursive: true, force: true });
    }
  });
});

describe('the ledger read off the event loop (Billing.ledger)', () => {
  it('reads on the fold worker what entries() reads: folded, past the fold, refunds linked, a time window', async () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-billing-ledger-'));
    const s = new Store(path.join(d, 'lmdb'));
    const b = new Billing(s, () => now);
    try {
      const a = b.createAccount('reader').id;
      const other = b.createAccount('other').id;
      b.buy(a, 100);
      const t0 = now;
      const charges: Awaited<ReturnType<typeof b.charge>>[] = [];
      for (let i = 0; i < 30; i++) {
        charges.push(await b.charge(a, 'news', { requestId: `r${i}`, keyId: `k${i % 3}` }));
        await b.charge(other, 'news', ctx);
      }
      await b.refund(charges[3], 'HTTP 503');
      // Half of it folded into the view, half still past the fold in the journal.
      await b.fold();
      now += 60_000;
      for (let i = 30; i < 40; i++) await b.charge(a, 'web_search', { requestId: `r${i}`, keyId: 'k9' });
      await b.refund(charges[20], 'HTTP 502');
      const want = b.entries(a);
      expect(want.length).toBeGreaterThan(40);
      expect(await b.ledger(a)).toEqual(want);
      expect(await b.ledger(a, t0 + 30_000)).toEqual(b.entries(a, t0 + 30_000));
      expect(await b.ledger(a, 0, t0 + 30_000)).toEqual(b.entries(a, 0, t0 + 30_000));
      expect((await b.ledger(a)).find((e) => e.seq === charges[3].seq)?.refundedBy).toBeGreaterThan(0);
      expect(await b.ledger('acct_nobody')).toEqual([]);
    } finally {
      await b.close();
      await s.close();
      fs.rmSync(d, { recursive: true, force: true });
    }
  });
});
