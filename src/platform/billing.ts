/**
 * Accounts, the one credit wallet, per-product subscriptions and the usage ledger, in LMDB.
 * Every change to a balance or a plan's usage is one write transaction together with its
 * ledger entry, so the ledger always sums to the balance and a crash loses nothing committed
 * (a commit reaches the OS page cache before `charge` returns: `kill -9` cannot undo it).
 *
 * Databases:
 *   accounts       id → AccountRecord                (the built-in `operator` account is implicit)
 *   accountStates  id → AccountState                 credit lots, ledger seq, usage this period
 *   subs           [account id, product] → Subscription (plan, since)
 *   ledger         [account id, seq] → LedgerEntry    seq counts per account, from 1
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

/**
 * Everything a charge reads and writes, in one record: a charge is one read and two writes
 * (this and its ledger entry).
 */
export interface AccountState {
  lots: Lot[];
  /** Ledger entries so far. */
  seq: number;
  /** Billed calls per product in its current period. */
  usage: Partial<Record<Product, { periodStart: number; used: number }>>;
}

export interface Subscription {
  product: Product;
  plan: Plan;
  /** Unix ms the plan started: its periods are months from here. */
  since: number;
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
const total = (lots: Lot[]): number => lots.reduce((a, l) => a + l.credits, 0);
const live = (l: Lot, now: number) => l.expiresAt === null || l.expiresAt > now;
const emptyState = (): AccountState => ({ lots: [], seq: 0, usage: {} });

const cloneState = (s: AccountState): AccountState => ({ lots: s.lots.map((l) => ({ ...l })), seq: s.seq, usage: { ...s.usage } });

/** Accounts whose state the request path keeps in memory (a cache: dropped wholesale past this). */
const WORKING_ACCOUNTS_MAX = 100_000;

/** Bumped by every change made outside the request path (CLI, admin): caches of plans and wallets are dropped. */
const EPOCH_KEY = 'billingEpoch';

export class Billing {
  readonly accounts: Database<AccountRecord, string>;
  /** Versioned: the request path writes a state only if no other process changed it meanwhile. */
  readonly states: Database<AccountState, string>;
  readonly subs: Database<Subscription, [string, string]>;
  readonly ledger: Database<LedgerEntry, [string, number]>;
  /**
   * The request path's working copies: states by account (with their LMDB version) and plans.
   * This process's own charges keep them current; anything else bumps the epoch.
   */
  readonly #states = new Map<string, { state: AccountState; version: number }>();
  readonly #subs = new Map<string, Subscription | null>();
  readonly #periods = new Map<number, PeriodView>();
  #epoch = -1;

  constructor(
    readonly store: Store,
    readonly clock: () => number = Date.now,
  ) {
    this.accounts = store.root.openDB({ name: 'accounts' });
    this.states = store.root.openDB({ name: 'accountState', useVersions: true });
    this.subs = store.root.openDB({ name: 'subs' });
    this.ledger = store.root.openDB({ name: 'ledger' });
  }

  /**
   * A new account: 250 free credits (never expiring), every credit product on the free plan
   * and the marketplace on its Free plan.
   */
  createAccount(name: string | null = null): AccountRecord {
    const now = this.clock();
    const account: AccountRecord = { id: `acct_${randomUUID().replace(/-/g, '').slice(0, 20)}`, name, createdAt: now };
    this.store.root.transactionSync(() => {
      this.accounts.putSync(account.id, account);
      const state = emptyState();
      const out: LedgerEntry[] = [];
      for (const product of PRODUCT_NAMES) this.#subscribe(account.id, state, product, 'free', now, out);
      this.#addLot(state, 'free', FREE_CREDITS, null, now, 'grant', out, 'new account');
      this.#writeSync(account.id, state, 0, out);
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

  /** Drops the working copies when another process (or a CLI call here) changed plans or wallets. */
  #checkEpoch(): void {
    const epoch = (this.store.meta.get(EPOCH_KEY) as number | undefined) ?? 0;
    if (epoch === this.#epoch) return;
    this.#epoch = epoch;
    this.#states.clear();
    this.#subs.clear();
  }

  subscription(account: string, product: Product): Subscription | undefined {
    this.#checkEpoch();
    const key = `${account}\0${product}`;
    let sub = this.#subs.get(key);
    if (sub === undefined) this.#subs.set(key, (sub = this.subs.get([account, product]) ?? null));
    return sub ?? undefined;
  }

  /** Puts an account on a plan of a product (a new period starts now), or `none` to unsubscribe. */
  subscribe(accountId: string, product: Product, plan: Plan | 'none'): Subscription | null {
    if (plan !== 'none' && !plansFor(product).includes(plan)) {
      throw new AppError('invalid_request', `${product} has no plan "${plan}"; plans: ${plansFor(product).join(', ')}, none`);
    }
    return this.#sync(accountId, (account, state, now, out) => {
      if (plan !== 'none') return this.#subscribe(account.id, state, product, plan, now, out);
      this.subs.removeSync([account.id, product]);
      this.#entry(state, { kind: 'subscribe', credits: 0, product, note: 'unsubscribed' }, now, total(state.lots), out);
      return null;
    });
  }

  #subscribe(account: string, state: AccountState, product: Product, plan: Plan, now: number, out: LedgerEntry[]): Subscription {
    const sub: Subscription = { product, plan, since: now };
    this.subs.putSync([account, product], sub);
    // A new plan starts a new period with nothing used (no usage entry: the record stays small).
    delete state.usage[product];
    this.#entry(state, { kind: 'subscribe', credits: 0, product, plan }, now, total(state.lots), out);
    return sub;
  }

  /** Subscription credits: spent first, gone at the end of the account's current month. */
  grant(accountId: string, credits: number): LedgerEntry {
    return this.#sync(accountId, (account, state, now, out) => this.#addLot(state, 'subscription', credits, periodOf(account.createdAt, now).end, now, 'grant', out));
  }

  /** Purchased credits: never expire, spent last. */
  buy(accountId: string, credits: number): LedgerEntry {
    return this.#sync(accountId, (_account, state, now, out) => this.#addLot(state, 'purchased', credits, null, now, 'buy', out));
  }

  /** A change outside the request path: one synchronous transaction, and the epoch moves. */
  #sync<T>(accountId: string, f: (account: AccountRecord, state: AccountState, now: number, out: LedgerEntry[]) => T): T {
    const now = this.clock();
    return this.store.root.transactionSync(() => {
      const account = this.#mustAccount(accountId);
      const stored = this.states.getEntry(account.id);
      const state = stored ? cloneState(stored.value) : emptyState();
      const out: LedgerEntry[] = [];
      const result = f(account, state, now, out);
      this.#writeSync(account.id, state, stored?.version ?? 0, out);
      return result;
    });
  }

  #writeSync(account: string, state: AccountState, version: number, entries: LedgerEntry[]): void {
    this.states.putSync(account, state, version + 1);
    for (const e of entries) this.ledger.putSync([account, e.seq], e);
    this.store.meta.putSync(EPOCH_KEY, (((this.store.meta.get(EPOCH_KEY) as number | undefined) ?? 0) + 1) as number);
    this.#states.delete(account);
    this.#subs.clear();
  }

  #addLot(state: AccountState, kind: LotKind, credits: number, expiresAt: number | null, now: number, entryKind: 'grant' | 'buy', out: LedgerEntry[], note?: string): LedgerEntry {
    if (!Number.isSafeInteger(credits) || credits <= 0) throw new AppError('invalid_request', `credits must be a positive integer, got ${credits}`);
    this.#expire(state, now, out);
    const id = state.lots.reduce((m, l) => Math.max(m, l.id), 0) + 1;
    // Lots are kept in spending order, so a charge walks them as they are.
    state.lots = spendOrder([...state.lots, { id, kind, credits, granted: credits, expiresAt }]);
    return this.#entry(state, { kind: entryKind, credits, lots: [[id, credits]], note }, now, total(state.lots), out);
  }

  /** Drops expired lots from `state`, each written off in an `expire` entry. */
  #expire(state: AccountState, now: number, out: LedgerEntry[]): void {
    if (state.lots.every((l) => live(l, now))) return;
    let balance = total(state.lots);
    for (const l of state.lots) {
      if (live(l, now) || l.credits === 0) continue;
      balance -= l.credits;
      this.#entry(state, { kind: 'expire', credits: -l.credits, lots: [[l.id, l.credits]] }, now, balance, out);
    }
    state.lots = state.lots.filter((l) => live(l, now));
  }

  /** A ledger entry with the wallet total after it, numbered by `state` and added to `out` (written by the caller). */
  #entry(state: AccountState, e: Omit<LedgerEntry, 'seq' | 'at' | 'balance'>, now: number, balance: number, out: LedgerEntry[]): LedgerEntry {
    state.seq += 1;
    const entry: LedgerEntry = { seq: state.seq, at: now, balance, ...e };
    out.push(entry);
    return entry;
  }

  /** periodOf, remembered per anchor until the period ends (every charge asks). */
  #period(since: number, now: number): PeriodView {
    const p = this.#periods.get(since);
    if (p && p.start <= now && now < p.end) return p;
    const fresh = periodOf(since, now);
    if (this.#periods.size > 100_000) this.#periods.clear();
    this.#periods.set(since, fresh);
    return fresh;
  }

  /** The working copy of an account's state (read from LMDB on first use); undefined: no such account. */
  #working(id: string): { state: AccountState; version: number } | undefined {
    this.#checkEpoch();
    let w = this.#states.get(id);
    if (!w) {
      const stored = this.states.getEntry(id);
      if (!stored) return undefined;
      // A working copy is only a cache of LMDB: past this many accounts, start again.
      if (this.#states.size >= WORKING_ACCOUNTS_MAX) this.#states.clear();
      this.#states.set(id, (w = { state: stored.value, version: stored.version ?? 0 }));
    }
    return w;
  }

  /**
   * Writes a request-path change: the new state and its ledger entries in lmdb's batched
   * asynchronous commit (calls of one event turn share it; nothing flushes on the event loop),
   * on condition that the state is still the version it was computed from. Resolves once
   * committed: false when another process changed the account meanwhile (then retried).
   */
  async #commit(id: string, from: { version: number }, state: AccountState, entries: LedgerEntry[]): Promise<boolean> {
    const version = from.version + 1;
    this.#states.set(id, { state, version });
    const ok = await this.states.ifVersion(id, from.version, () => {
      this.states.put(id, state, version);
      for (const e of entries) this.ledger.put([id, e.seq], e);
    });
    if (!ok) this.#states.delete(id);
    return ok;
  }

  /** Runs a request-path change, computed from the working state, until it commits (a few tries). */
  async #change<T>(id: string, f: (state: AccountState, now: number, out: LedgerEntry[]) => T): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const now = this.clock();
      let w = this.#working(id);
      if (!w && id === OPERATOR) {
        // The operator's state is made on its first call.
        this.store.root.transactionSync(() => this.states.getEntry(OPERATOR) ?? this.states.putSync(OPERATOR, emptyState(), 1));
        w = this.#working(id);
      }
      if (!w) throw new AppError('not_found', `no account ${id}`);
      const state = cloneState(w.state);
      const out: LedgerEntry[] = [];
      const result = f(state, now, out); // an AppError here refuses the call: nothing is written
      if (await this.#commit(id, w, state, out)) return result;
      if (attempt >= 4) throw new AppError('product_unavailable', 'credits could not be reached: the account kept changing under this call');
    }
  }

  /**
   * Debits one call of `product` before its handler runs: its price in credits, or one request
   * of the marketplace plan. Rejects with 429 `quota_exceeded` (with Retry-After where waiting
   * for the next period helps) when the wallet cannot pay or the plan is past its stop. The
   * operator account has no wallet and no plans: its calls are recorded at price 0. `sub` is
   * the subscription the caller has just authorised against (read again when absent).
   */
  charge(accountId: string, product: Product, ctx: { requestId: string; keyId: string }, sub?: Subscription): Promise<Charge> {
    if (accountId === OPERATOR) {
      return this.#change(OPERATOR, (state, now, out) => {
        const entry = this.#entry(state, { kind: 'debit', credits: 0, product, note: `operator (list price ${creditsOf(product)})`, ...ctx }, now, 0, out);
        return { account: OPERATOR, seq: entry.seq, credits: 0, remaining: null };
      });
    }
    return this.#change(accountId, (state, now, out) => {
      const subscription = sub ?? this.subscription(accountId, product);
      if (!subscription) throw new AppError('not_subscribed', `this account does not subscribe to ${product}`);
      const period = this.#period(subscription.since, now);
      let usage = state.usage[product];
      if (!usage || usage.periodStart !== period.start) usage = { periodStart: period.start, used: 0 };
      let entry: LedgerEntry;
      if (familyOf(product) === 'marketplace') {
        const plan = MARKETPLACE_PLANS[subscription.plan as MarketplacePlan];
        if (usage.used >= plan.stop) {
          throw new AppError('quota_exceeded', `the ${subscription.plan} plan of ${product} stops at ${plan.stop} requests this period; it renews at ${new Date(period.end).toISOString()}`, {
            headers: retryAfter(period.end - now),
          });
        }
        usage = { periodStart: usage.periodStart, used: usage.used + 1 };
        const overageMicros = usage.used > plan.included ? (plan.overageMicros ?? 0) : 0;
        entry = this.#entry(state, { kind: 'debit', credits: 0, product, plan: subscription.plan, units: 1, overageMicros, ...ctx }, now, total(state.lots), out);
      } else {
        const cost = creditsOf(product);
        this.#expire(state, now, out);
        const held = total(state.lots);
        if (held < cost) throw new AppError('quota_exceeded', `the wallet holds ${held} credits and ${product} costs ${cost}: buy or grant credits`);
        const taken: [number, number][] = [];
        let due = cost;
        for (const lot of state.lots) {
          const take = Math.min(due, lot.credits);
          if (take === 0) continue;
          lot.credits -= take;
          due -= take;
          taken.push([lot.id, take]);
          if (due === 0) break;
        }
        usage = { periodStart: usage.periodStart, used: usage.used + 1 };
        entry = this.#entry(state, { kind: 'debit', credits: -cost, product, plan: subscription.plan, lots: taken, ...ctx }, now, total(state.lots), out);
      }
      state.usage[product] = usage;
      return { account: accountId, seq: entry.seq, credits: 0 - entry.credits, remaining: entry.balance };
    });
  }

  /** Reverses a charge (a 5xx, or a request refused after it was charged). Idempotent. */
  async refund(charge: Charge, reason: string): Promise<Charge> {
    if (charge.seq === null) return { ...charge, credits: 0 };
    const id = charge.account;
    const remaining = (s: AccountState, now: number) => (id === OPERATOR ? null : total(s.lots.filter((l) => live(l, now))));
    return this.#change(id, (state, now, out) => {
      const debit = this.ledger.get([id, charge.seq!]);
      if (!debit || debit.kind !== 'debit' || debit.refundedBy !== undefined) return { ...charge, credits: 0, remaining: remaining(state, now) };
      const returned: [number, number][] = [];
      let lost = 0;
      for (const [lotId, credits] of debit.lots ?? []) {
        const lot = state.lots.find((l) => l.id === lotId);
        // A lot that expired since stays expired: its credits are not returned.
        if (lot && live(lot, now)) {
          lot.credits += credits;
          returned.push([lotId, credits]);
        } else lost += credits;
      }
      const usage = debit.product ? state.usage[debit.product] : undefined;
      if (usage && usage.periodStart <= debit.at && usage.used > 0) state.usage[debit.product!] = { ...usage, used: usage.used - 1 };
      const entry = this.#entry(
        state,
        { kind: 'refund', credits: -debit.credits - lost, product: debit.product, lots: returned, refundOf: debit.seq, requestId: debit.requestId, note: reason, ...(debit.units ? { units: -1, overageMicros: -(debit.overageMicros ?? 0) } : {}) },
        now,
        total(state.lots),
        out,
      );
      out.push({ ...debit, refundedBy: entry.seq });
      return { account: id, seq: charge.seq, credits: 0, remaining: remaining(state, now) };
    });
  }

  /** The credits an account can spend now (expired lots left out), charges still committing included. */
  balance(account: string): number {
    const now = this.clock();
    return total((this.#working(account)?.state.lots ?? []).filter((l) => live(l, now)));
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
    let state = this.states.get(account.id) ?? emptyState();
    // Credits that expired since the account's last write are written off now, so the ledger
    // shown beside this summary sums to the balance it shows (rare: once a period at most).
    if (state.lots.some((l) => !live(l, now) && l.credits > 0)) {
      this.#sync(account.id, (_a, s, at, out) => this.#expire(s, at, out));
      state = this.states.get(account.id) ?? emptyState();
    }
    const lots = state.lots.filter((l) => live(l, now));
    const sum = (kind: LotKind) => total(lots.filter((l) => l.kind === kind));
    const subscriptions: SubscriptionView[] = [];
    for (const { value: sub } of this.subs.getRange({ start: [account.id, ''], end: [account.id, '\uffff'] })) {
      const period = periodOf(sub.since, now);
      const u = state.usage[sub.product];
      const used = u && u.periodStart === period.start ? u.used : 0;
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
        total: total(lots),
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

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const KIND_ORDER: Record<LotKind, number> = { subscription: 0, free: 1, purchased: 2 };
/** Subscription credits first (soonest expiry first), then the free grant, then purchased. */
const spendOrder = (lots: Lot[]): Lot[] =>
  [...lots].sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || (a.expiresAt ?? Infinity) - (b.expiresAt ?? Infinity) || a.id - b.id);
