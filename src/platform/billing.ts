/**
 * Accounts, the one credit wallet, per-product subscriptions and the usage ledger, in LMDB.
 * Every change to a balance or a plan's usage is one write transaction together with its
 * ledger entry, so the ledger always sums to the balance and a crash loses nothing committed
 * (a commit reaches the OS page cache before `charge` returns: `kill -9` cannot undo it).
 *
 * Databases:
 *   accounts  id → AccountRecord               (the built-in `operator` account is implicit)
 *   wallets   account id → { lots: Lot[] }      credits, by kind and expiry
 *   subs      [account id, product] → Subscription
 *   ledger    [account id, seq] → LedgerEntry    seq counts per account, from 1
 *
 * Spending order (decisions.md): subscription credits (soonest expiry first), then the free
 * grant, then purchased credits, which never expire.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from 'lmdb';
import { AppError } from '../errors.js';
import type { Store } from '../store/index.js';
import {
  creditsOf,
  familyOf,
  MARKETPLACE_PLANS,
  PRODUCT_NAMES,
  plansFor,
  rateOf,
  type MarketplacePlan,
  type Plan,
  type Product,
  type Rate,
} from './products.js';

export const OPERATOR = 'operator';
/** Credits a new account starts with (section 8.1). */
export const FREE_CREDITS = 250;

export interface AccountRecord {
  id: string;
  name: string | null;
  /** Unix ms. Credit periods (what `credits grant` lasts) are months from here. */
  createdAt: number;
  /** Ledger entries so far. */
  seq: number;
}

export type LotKind = 'subscription' | 'free' | 'purchased';
export interface Lot {
  id: number;
  kind: LotKind;
  credits: number;
  granted: number;
  /** Unix ms, or null: never. */
  expiresAt: number | null;
}

export interface Subscription {
  product: Product;
  plan: Plan;
  /** Unix ms the plan started: its periods are months from here. */
  since: number;
  /** The period `used` counts in (unix ms of its start). */
  periodStart: number;
  /** Billed requests this period. */
  used: number;
}

export type LedgerKind = 'grant' | 'buy' | 'debit' | 'refund' | 'expire' | 'subscribe';
export interface LedgerEntry {
  seq: number;
  at: number;
  kind: LedgerKind;
  /** Signed change of the wallet: + grant, buy, refund; − debit, expire. */
  credits: number;
  /** Wallet total after this entry. */
  balance: number;
  product?: Product;
  plan?: Plan;
  requestId?: string;
  keyId?: string;
  /** Credits taken from (or returned to) each lot: [lot id, credits]. */
  lots?: [number, number][];
  /** Marketplace: billed requests (+1 a call, −1 a refund) and the overage price they cost. */
  units?: number;
  overageMicros?: number;
  /** A debit's refund, and the debit a refund reverses. */
  refundedBy?: number;
  refundOf?: number;
  note?: string;
}

/** What a charge did: shown in X-Credits-Charged / X-Credits-Remaining, reversed by `refund`. */
export interface Charge {
  account: string;
  seq: number | null;
  credits: number;
  /** Wallet total after the charge; null for the operator (no limit). */
  remaining: number | null;
}

export interface PeriodView {
  start: number;
  end: number;
}

/** [start, end) of the month-long period containing `now`, months counted from `anchor` (UTC). */
export function periodOf(anchor: number, now: number): PeriodView {
  const a = new Date(anchor);
  const at = (k: number): number => {
    const y = a.getUTCFullYear();
    const m = a.getUTCMonth() + k;
    // The anchor's day, clamped to the month's last day (Jan 31 → Feb 28 → Mar 31).
    const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
    return Date.UTC(y, m, Math.min(a.getUTCDate(), last), a.getUTCHours(), a.getUTCMinutes(), a.getUTCSeconds(), a.getUTCMilliseconds());
  };
  const n = new Date(now);
  let k = (n.getUTCFullYear() - a.getUTCFullYear()) * 12 + (n.getUTCMonth() - a.getUTCMonth());
  if (at(k) > now) k--;
  k = Math.max(0, k);
  return { start: at(k), end: at(k + 1) };
}

const retryAfter = (ms: number) => ({ 'retry-after': String(Math.max(1, Math.ceil(ms / 1000))) });

export class Billing {
  readonly accounts: Database<AccountRecord, string>;
  readonly wallets: Database<{ lots: Lot[] }, string>;
  readonly subs: Database<Subscription, [string, string]>;
  readonly ledger: Database<LedgerEntry, [string, number]>;

  constructor(
    readonly store: Store,
    readonly clock: () => number = Date.now,
  ) {
    this.accounts = store.root.openDB({ name: 'accounts' });
    this.wallets = store.root.openDB({ name: 'wallets' });
    this.subs = store.root.openDB({ name: 'subs' });
    this.ledger = store.root.openDB({ name: 'ledger' });
  }

  /**
   * A new account: 250 free credits (never expiring), every credit product on the free plan
   * and the marketplace on its Free plan.
   */
  createAccount(name: string | null = null): AccountRecord {
    const now = this.clock();
    const account: AccountRecord = { id: `acct_${randomUUID().replace(/-/g, '').slice(0, 20)}`, name, createdAt: now, seq: 0 };
    this.store.root.transactionSync(() => {
      this.accounts.putSync(account.id, account);
      this.wallets.putSync(account.id, { lots: [] });
      for (const product of PRODUCT_NAMES) this.#subscribe(account, product, 'free', now);
      this.#addLot(account, 'free', FREE_CREDITS, null, now, 'grant', 'new account');
      this.accounts.putSync(account.id, account);
    });
    return account;
  }

  /** A customer account (never the operator's). */
  account(id: string): AccountRecord | undefined {
    return id === OPERATOR ? undefined : this.accounts.get(id);
  }

  #mustAccount(id: string): AccountRecord {
    const a = id === OPERATOR ? undefined : this.accounts.get(id);
    if (!a) throw new AppError('not_found', id === OPERATOR ? 'the operator account has no wallet or plans' : `no account ${id}`);
    return a;
  }

  subscription(account: string, product: Product): Subscription | undefined {
    return this.subs.get([account, product]);
  }

  /** Puts an account on a plan of a product (a new period starts now), or `none` to unsubscribe. */
  subscribe(accountId: string, product: Product, plan: Plan | 'none'): Subscription | null {
    if (plan !== 'none' && !plansFor(product).includes(plan)) {
      throw new AppError('invalid_request', `${product} has no plan "${plan}"; plans: ${plansFor(product).join(', ')}, none`);
    }
    const now = this.clock();
    return this.store.root.transactionSync(() => {
      const account = this.#mustAccount(accountId);
      if (plan === 'none') {
        this.subs.removeSync([account.id, product]);
        this.#entry(account, { kind: 'subscribe', credits: 0, product, note: 'unsubscribed' }, now, this.#total(account.id));
        this.accounts.putSync(account.id, account);
        return null;
      }
      const sub = this.#subscribe(account, product, plan, now);
      this.accounts.putSync(account.id, account);
      return sub;
    });
  }

  #subscribe(account: AccountRecord, product: Product, plan: Plan, now: number): Subscription {
    const sub: Subscription = { product, plan, since: now, periodStart: now, used: 0 };
    this.subs.putSync([account.id, product], sub);
    this.#entry(account, { kind: 'subscribe', credits: 0, product, plan }, now, this.#total(account.id));
    return sub;
  }

  /** Subscription credits: spent first, gone at the end of the account's current month. */
  grant(accountId: string, credits: number): LedgerEntry {
    const now = this.clock();
    return this.store.root.transactionSync(() => {
      const account = this.#mustAccount(accountId);
      const entry = this.#addLot(account, 'subscription', credits, periodOf(account.createdAt, now).end, now, 'grant');
      this.accounts.putSync(account.id, account);
      return entry;
    });
  }

  /** Purchased credits: never expire, spent last. */
  buy(accountId: string, credits: number): LedgerEntry {
    const now = this.clock();
    return this.store.root.transactionSync(() => {
      const account = this.#mustAccount(accountId);
      const entry = this.#addLot(account, 'purchased', credits, null, now, 'buy');
      this.accounts.putSync(account.id, account);
      return entry;
    });
  }

  #addLot(account: AccountRecord, kind: LotKind, credits: number, expiresAt: number | null, now: number, entryKind: 'grant' | 'buy', note?: string): LedgerEntry {
    if (!Number.isSafeInteger(credits) || credits <= 0) throw new AppError('invalid_request', `credits must be a positive integer, got ${credits}`);
    const wallet = this.#liveWallet(account, now);
    const id = wallet.lots.reduce((m, l) => Math.max(m, l.id), 0) + 1;
    wallet.lots.push({ id, kind, credits, granted: credits, expiresAt });
    this.wallets.putSync(account.id, wallet);
    return this.#entry(account, { kind: entryKind, credits, lots: [[id, credits]], note }, now, total(wallet.lots));
  }

  /** The wallet with its expired lots dropped, each written to the ledger as an `expire` entry. */
  #liveWallet(account: AccountRecord, now: number): { lots: Lot[] } {
    const lots = (this.wallets.get(account.id)?.lots ?? []).map((l) => ({ ...l }));
    const expired = lots.filter((l) => l.expiresAt !== null && l.expiresAt <= now);
    if (expired.length === 0) return { lots };
    let balance = total(lots);
    for (const l of expired) {
      if (l.credits === 0) continue;
      balance -= l.credits;
      this.#entry(account, { kind: 'expire', credits: -l.credits, lots: [[l.id, l.credits]] }, now, balance);
    }
    const wallet = { lots: lots.filter((l) => !expired.includes(l)) };
    this.wallets.putSync(account.id, wallet);
    return wallet;
  }

  /** Appends a ledger entry with the wallet total after it (the caller writes `account` back: its seq moved). */
  #entry(account: AccountRecord, e: Omit<LedgerEntry, 'seq' | 'at' | 'balance'>, now: number, balance: number): LedgerEntry {
    account.seq += 1;
    const entry: LedgerEntry = { seq: account.seq, at: now, balance, ...e };
    this.ledger.putSync([account.id, account.seq], entry);
    return entry;
  }

  /**
   * Debits one call of `product` before its handler runs: its price in credits, or one request
   * of the marketplace plan. Throws 429 `quota_exceeded` (with Retry-After where waiting for the
   * next period helps) when the wallet cannot pay or the plan is past its stop. The operator
   * account has no wallet and no plans: its calls are recorded at price 0.
   */
  charge(accountId: string, product: Product, ctx: { requestId: string; keyId: string }): Charge {
    const now = this.clock();
    if (accountId === OPERATOR) {
      return this.store.root.transactionSync(() => {
        const operator = this.accounts.get(OPERATOR) ?? { id: OPERATOR, name: 'operator', createdAt: now, seq: 0 };
        const entry = this.#entry(operator, { kind: 'debit', credits: 0, product, note: `operator (list price ${creditsOf(product)})`, ...ctx }, now, 0);
        this.accounts.putSync(OPERATOR, operator);
        return { account: OPERATOR, seq: entry.seq, credits: 0, remaining: null };
      });
    }
    return this.store.root.transactionSync(() => {
      const account = this.#mustAccount(accountId);
      const sub = this.subs.get([account.id, product]);
      if (!sub) throw new AppError('not_subscribed', `this account does not subscribe to ${product}`);
      const period = periodOf(sub.since, now);
      if (sub.periodStart !== period.start) Object.assign(sub, { periodStart: period.start, used: 0 });
      let entry: LedgerEntry;
      if (familyOf(product) === 'marketplace') {
        const plan = MARKETPLACE_PLANS[sub.plan as MarketplacePlan];
        if (sub.used >= plan.stop) {
          throw new AppError('quota_exceeded', `the ${sub.plan} plan of ${product} stops at ${plan.stop} requests this period; it renews at ${new Date(period.end).toISOString()}`, {
            headers: retryAfter(period.end - now),
          });
        }
        sub.used += 1;
        const overageMicros = sub.used > plan.included ? (plan.overageMicros ?? 0) : 0;
        entry = this.#entry(account, { kind: 'debit', credits: 0, product, plan: sub.plan, units: 1, overageMicros, ...ctx }, now, this.#total(account.id));
      } else {
        const cost = creditsOf(product);
        const wallet = this.#liveWallet(account, now);
        const held = total(wallet.lots);
        if (held < cost) {
          throw new AppError('quota_exceeded', `the wallet holds ${held} credits and ${product} costs ${cost}: buy or grant credits`);
        }
        const taken: [number, number][] = [];
        let due = cost;
        for (const lot of spendOrder(wallet.lots)) {
          const take = Math.min(due, lot.credits);
          if (take === 0) continue;
          lot.credits -= take;
          due -= take;
          taken.push([lot.id, take]);
          if (due === 0) break;
        }
        this.wallets.putSync(account.id, wallet);
        sub.used += 1;
        entry = this.#entry(account, { kind: 'debit', credits: -cost, product, plan: sub.plan, lots: taken, ...ctx }, now, total(wallet.lots));
      }
      this.subs.putSync([account.id, product], sub);
      this.accounts.putSync(account.id, account);
      return { account: account.id, seq: entry.seq, credits: 0 - entry.credits, remaining: entry.balance };
    });
  }

  /** Reverses a charge (a 5xx, or a request refused after it was charged). Idempotent. */
  refund(charge: Charge, reason: string): Charge {
    if (charge.seq === null) return { ...charge, credits: 0 };
    const now = this.clock();
    return this.store.root.transactionSync(() => {
      const account = charge.account === OPERATOR ? this.accounts.get(OPERATOR) : this.#mustAccount(charge.account);
      if (!account) return { ...charge, credits: 0 };
      const debit = this.ledger.get([account.id, charge.seq!]);
      if (!debit || debit.kind !== 'debit' || debit.refundedBy !== undefined) return { ...charge, credits: 0, remaining: this.#total(account.id) };
      const wallet = this.wallets.get(account.id) ?? { lots: [] };
      const returned: [number, number][] = [];
      let lost = 0;
      for (const [id, credits] of debit.lots ?? []) {
        const lot = wallet.lots.find((l) => l.id === id);
        // A lot that expired since goes on expired: its credits are not returned.
        if (lot && (lot.expiresAt === null || lot.expiresAt > now)) {
          lot.credits += credits;
          returned.push([id, credits]);
        } else lost += credits;
      }
      this.wallets.putSync(account.id, wallet);
      const sub = debit.product ? this.subs.get([account.id, debit.product]) : undefined;
      if (sub && sub.periodStart <= debit.at && sub.used > 0) this.subs.putSync([account.id, debit.product!], { ...sub, used: sub.used - 1 });
      const credits = -debit.credits - lost;
      const entry = this.#entry(
        account,
        { kind: 'refund', credits, product: debit.product, lots: returned, refundOf: debit.seq, requestId: debit.requestId, note: reason, ...(debit.units ? { units: -1, overageMicros: -(debit.overageMicros ?? 0) } : {}) },
        now,
        total(wallet.lots),
      );
      this.ledger.putSync([account.id, debit.seq], { ...debit, refundedBy: entry.seq });
      this.accounts.putSync(account.id, account);
      return { account: account.id, seq: charge.seq, credits: 0, remaining: account.id === OPERATOR ? null : entry.balance };
    });
  }

  /** The credits an account can spend now (expired lots left out). */
  balance(account: string): number {
    const now = this.clock();
    return total((this.wallets.get(account)?.lots ?? []).filter((l) => l.expiresAt === null || l.expiresAt > now));
  }

  #total(account: string): number {
    return total(this.wallets.get(account)?.lots ?? []);
  }

  /** Ledger entries of an account, oldest first, optionally those at or after `since` (unix ms) and before `until`. */
  entries(account: string, since = 0, until = Number.POSITIVE_INFINITY): LedgerEntry[] {
    const out: LedgerEntry[] = [];
    for (const { value } of this.ledger.getRange({ start: [account, 0], end: [account, Number.MAX_SAFE_INTEGER] })) {
      if (value.at >= since && value.at < until) out.push(value);
    }
    return out;
  }

  /** What GET /v1/account and `newsmatch usage` show. */
  summary(accountId: string): AccountSummary {
    const now = this.clock();
    const account = this.#mustAccount(accountId);
    const lots = (this.wallets.get(account.id)?.lots ?? []).filter((l) => l.expiresAt === null || l.expiresAt > now);
    const sum = (kind: LotKind) => lots.filter((l) => l.kind === kind).reduce((a, l) => a + l.credits, 0);
    const subscriptions: SubscriptionView[] = [];
    for (const { value: sub } of this.subs.getRange({ start: [account.id, ''], end: [account.id, '\uffff'] })) {
      const period = periodOf(sub.since, now);
      const used = sub.periodStart === period.start ? sub.used : 0;
      const view: SubscriptionView = {
        product: sub.product,
        plan: sub.plan,
        period_start: iso(period.start),
        period_end: iso(period.end),
        used,
        rate_limit: rateOf(sub.product, sub.plan),
        credits_per_call: creditsOf(sub.product),
      };
      if (familyOf(sub.product) === 'marketplace') {
        const plan = MARKETPLACE_PLANS[sub.plan as MarketplacePlan];
        const over = Math.max(0, used - plan.included);
        Object.assign(view, { included: plan.included, overage_requests: over, overage_usd: (over * (plan.overageMicros ?? 0)) / 1e6, stop: plan.stop });
      }
      subscriptions.push(view);
    }
    return {
      id: account.id,
      name: account.name,
      created_at: iso(account.createdAt),
      credits: {
        total: lots.reduce((a, l) => a + l.credits, 0),
        subscription: sum('subscription'),
        free: sum('free'),
        purchased: sum('purchased'),
        expiring: lots.filter((l) => l.expiresAt !== null && l.credits > 0).map((l) => ({ credits: l.credits, expires_at: iso(l.expiresAt!) })),
      },
      subscriptions,
    };
  }
}

export interface SubscriptionView {
  product: Product;
  plan: Plan;
  period_start: string;
  period_end: string;
  used: number;
  rate_limit: Rate;
  credits_per_call: number;
  included?: number;
  overage_requests?: number;
  overage_usd?: number;
  stop?: number;
}

export interface AccountSummary {
  id: string;
  name: string | null;
  created_at: string;
  credits: { total: number; subscription: number; free: number; purchased: number; expiring: { credits: number; expires_at: string }[] };
  subscriptions: SubscriptionView[];
}

const total = (lots: Lot[]): number => lots.reduce((a, l) => a + l.credits, 0);
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const KIND_ORDER: Record<LotKind, number> = { subscription: 0, free: 1, purchased: 2 };
/** Subscription credits first (soonest expiry first), then the free grant, then purchased. */
const spendOrder = (lots: Lot[]): Lot[] =>
  [...lots].sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || (a.expiresAt ?? Infinity) - (b.expiresAt ?? Infinity) || a.id - b.id);
