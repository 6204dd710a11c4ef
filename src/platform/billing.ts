/**
 * Accounts, the one credit wallet, per-product subscriptions and the usage ledger, behind the
 * one class the service, the CLI and metering call. It composes:
 *
 *   journal.ts         the tables in LMDB, and the per-account view folded from the journal
 *   journal-writer.ts  the journal's writer: group commit, conditional appends, a locked commit after a lost race
 *   held-state.ts      what this process holds per account: working states, subscriptions, tail index
 *   spending.ts        the rules, pure: what a grant, a purchase, a call, a refund or an expiry records
 *   statements.ts      the balance, ledger and summary an account is shown
 *   slot-writer.ts     cluster mode's writer: each account's ledger a chain of slots in a replicated log
 *
 * The ledger is the record of every change to a wallet or a plan's usage, and an account's
 * state is what its entries add up to (ledger.ts, `applyEntry`): a debit and its ledger entry
 * are one record, written in one transaction, so the ledger always sums to the balance.
 *
 * A worker thread folds the journal into the per-account view (fold-worker.ts; its own LMDB
 * environment, so the fold never holds the lock every commit needs).
 *
 * Cluster mode (`slots` given): changes go to the accounts' chains in the replicated log
 * (SlotWriter), and the local journal is a copy of the log that the node's applier keeps
 * (`applyShared`). The changes outside the request path are then asynchronous: `*Shared`.
 */
import { randomUUID } from 'node:crypto';
import { Piscina } from 'piscina';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import type { Store } from '../store/index.js';
import { workerFile } from '../worker-file.js';
import type { FoldTask, LedgerTask } from './fold-worker.js';
import { HeldState, type Held, type HeldSub } from './held-state.js';
import { HEAD, headOf, LedgerView, OPERATOR, openBillingTables, type AccountRecord, type BillingTables, type Subscription } from './journal.js';
import { JournalWriter, type CommitListener } from './journal-writer.js';
import { emptyState, live, periodOf, type AccountState, type JournalEntry, type LedgerEntry } from './ledger.js';
import { creditsOf, plansFor, PRODUCT_NAMES, type Plan, type Product } from './products.js';
import { addLot, debitCall, expire, FREE_CREDITS, operatorDebit, record, refundDebit, refundPart, spendable } from './spending.js';
import { SlotWriter, type SlotRecord, type WalletSlots } from './slot-writer.js';
import { ledgerOf, summaryOf, type AccountSummary } from './statements.js';

/** Cluster mode: the log position the local journal holds the wallet log up to (in `billingHead`). */
const SHARED_POSITION = 'sharedPosition';

/** Keeps `subs` as the subscribe entries say (a plan: subscribed from the entry's time; none: unsubscribed). */
function applySubs(t: BillingTables, entries: readonly LedgerEntry[]): void {
  for (const e of entries as readonly JournalEntry[]) {
    if (e.kind !== 'subscribe') continue;
    const key: [string, string] = [e.account, e.product!];
    if (e.plan) t.subs.putSync(key, { product: e.product!, plan: e.plan, since: e.at });
    else t.subs.removeSync(key);
  }
}

/** What a charge did: shown in X-Credits-Charged / X-Credits-Remaining, reversed by `refund`. */
export interface Charge {
  account: string;
  seq: number | null;
  credits: number;
  /** Wallet total after the charge; null for the operator (no limit). */
  remaining: number | null;
  /** The debit entry, which a refund reverses. */
  readonly debit?: LedgerEntry;
}

/**
 * Entries the writer commits between background folds, and the most one fold takes: a fold
 * writes a page or two of the view for each account it touches, so the more entries each
 * account has in it, the fewer pages an entry costs.
 */
const FOLD_AFTER = 65_536;
const FOLD_MAX = 262_144;
/** Accounts whose state the writer keeps in memory; past this, a fold drops the idle ones. */
const WORKING_ACCOUNTS_MAX = 100_000;

export class Billing {
  readonly #t: BillingTables;
  readonly #view: LedgerView;
  readonly #held: HeldState;
  readonly #writer: JournalWriter | SlotWriter;
  /** Cluster mode's writer (the same as #writer), and the log it writes to. */
  readonly #shared: SlotWriter | null;
  readonly #slots: WalletSlots | null;
  readonly #refunded = new WeakSet<LedgerEntry>();
  /** Entries landed since the last background fold, the fold running, and its worker (started by the first). */
  #unfolded = 0;
  #folding: Promise<number> | null = null;
  #pool: Piscina | null = null;
  /** Told of each group commit when it settles: its seconds and the entries that landed (none when it did not). Metrics listen (src/ops). */
  readonly commitListeners = new Set<CommitListener>();

  constructor(
    readonly store: Store,
    readonly clock: () => number = Date.now,
    readonly log?: Logger,
    /** Accounts held in memory past which a fold forgets the idle ones (lowered by tests). */
    readonly heldMax = WORKING_ACCOUNTS_MAX,
    /** Cluster mode: the replicated wallet log (src/cluster). */
    slots?: WalletSlots,
  ) {
    this.#t = openBillingTables(store);
    this.#view = new LedgerView(LedgerView.beside(store));
    this.#held = new HeldState(this.#t, this.#view, clock, heldMax);
    this.#slots = slots ?? null;
    this.#shared = slots ? new SlotWriter(this.#held, slots, clock, log) : null;
    this.#writer = this.#shared ?? new JournalWriter(this.#t, this.#held, clock, { log, listeners: this.commitListeners, landed: (n) => this.#landed(n) });
    // What the view lacks (a crash, a view deleted to be rebuilt) is folded now.
    const { entries, folded } = this.#view.fold(this.#t, Number.POSITIVE_INFINITY);
    if (entries > 1000) log?.info(`billing: folded ${entries} journal entries into ${this.#view.path}`);
    this.#held.startTail(folded);
  }

  /** A new account: 250 free credits (never expiring), every credit product on the free plan, the marketplace on Free. */
  createAccount(name: string | null = null): AccountRecord {
    const account = newAccount(name, this.clock());
    return this.#local().exclusive((out) => {
      this.#t.accounts.putSync(account.id, account);
      const r = opening(account)(emptyState(), account.createdAt, out);
      applySubs(this.#t, out);
      return r;
    });
  }

  /** `createAccount`, in cluster mode too: resolves once the account's first record is in the wallet log. */
  async createAccountShared(name: string | null = null): Promise<AccountRecord> {
    if (!this.#shared) return this.createAccount(name);
    const account = newAccount(name, this.clock());
    return this.#shared.exclusive(account.id, emptyState(), opening(account), account);
  }

  /** The single node's writer: the changes outside the request path that are synchronous there. */
  #local(): JournalWriter {
    if (this.#shared) throw new Error('billing: in cluster mode, change accounts with the *Shared methods');
    return this.#writer as JournalWriter;
  }

  /** A customer account (never the operator's). */
  account(id: string): AccountRecord | undefined {
    return id === OPERATOR ? undefined : this.#t.accounts.get(id);
  }

  #mustAccount(id: string): AccountRecord {
    const a = this.account(id);
    if (!a) throw new AppError('not_found', id === OPERATOR ? 'the operator account has no wallet or plans' : `no account ${id}`);
    return a;
  }

  /** This process's record of an account (made on first sight; see Held). */
  held(account: string): Held {
    return this.#held.held(account);
  }

  subscription(account: string | Held, product: Product): Subscription | undefined {
    return this.#subOf(typeof account === 'string' ? this.held(account) : account, product, this.clock())?.sub;
  }

  /**
   * An account's subscription to `product` (null: none) with its period at `now`, read from LMDB
   * once. `fresh`: notice changes made elsewhere first (a subscribe empties `h.subs`).
   */
  #subOf(h: Held, product: Product, now: number, fresh = true): HeldSub | null {
    if (fresh) this.#writer.fresh();
    return this.#held.subOf(h, product, now);
  }

  /** Puts an account on a plan of a product (a new period starts now), or `none` to unsubscribe. */
  subscribe(accountId: string, product: Product, plan: Plan | 'none'): Subscription | null {
    return this.#sync(accountId, subscribing(product, plan));
  }

  /** Subscription credits: spent first, gone at the end of the account's current month. */
  grant(accountId: string, credits: number): LedgerEntry {
    return this.#sync(accountId, granting(credits));
  }

  /** Purchased credits: never expire, spent last. */
  buy(accountId: string, credits: number): LedgerEntry {
    return this.#sync(accountId, buying(credits));
  }

  /** `subscribe`, `grant` and `buy`, in cluster mode too: resolve once the record is in the wallet log. */
  subscribeShared(accountId: string, product: Product, plan: Plan | 'none'): Promise<Subscription | null> {
    return this.#changeShared(accountId, subscribing(product, plan));
  }

  grantShared(accountId: string, credits: number): Promise<LedgerEntry> {
    return this.#changeShared(accountId, granting(credits));
  }

  buyShared(accountId: string, credits: number): Promise<LedgerEntry> {
    return this.#changeShared(accountId, buying(credits));
  }

  /**
   * Debits one call of `product` before its handler runs: its price in credits, or one request
   * of the marketplace plan (spending.ts, `debitCall`). Rejects with 429 `quota_exceeded` (with
   * Retry-After where waiting for the next period helps) when the wallet cannot pay or the plan
   * is past its stop. The operator account has no wallet and no plans: its calls are recorded
   * at price 0. The metering path passes the account's record it has authorised with, which
   * saves a lookup.
   */
  charge(account: string | Held, product: Product, ctx: { requestId: string; keyId: string }, units = 1): Promise<Charge> {
    return this.chargeEarly(account, product, ctx, units).landed;
  }

  /**
   * `charge`, with the debit as decided handed back at once (undefined when refused: `landed`
   * then rejects with why) beside the promise of the debit committed, which is what counts (see
   * JournalWriter.changeEarly). The metering path runs the handler meanwhile.
   */
  chargeEarly(
    account: string | Held,
    product: Product,
    ctx: { requestId: string; keyId: string },
    units = 1,
  ): { decided: Charge | undefined; landed: Promise<Charge> } {
    // A record dropped since the caller took it (fold): the account's current one.
    const h = typeof account === 'string' ? this.held(account) : account.dropped ? this.held(account.id) : account;
    // Authorised with a record a moment ago: its subscription was read fresh then.
    const authorised = typeof account !== 'string';
    const accountId = h.id;
    if (accountId === OPERATOR) {
      return this.#writer.changeEarly(h, (state, now, out) => {
        const debit = operatorDebit(state, product, ctx, now, out);
        return { account: OPERATOR, seq: debit.seq, credits: 0, remaining: null, debit };
      });
    }
    return this.#writer.changeEarly(h, (state, now, out, attempt) => {
      // The subscription and its period, read from one object.
      const subscribed = this.#subOf(h, product, now, attempt > 0 || !authorised);
      if (!subscribed) throw new AppError('not_subscribed', `this account does not subscribe to ${product}`);
      const debit = debitCall(accountId, state, product, subscribed, ctx, now, out, units);
      return { account: accountId, seq: debit.seq, credits: 0 - debit.credits, remaining: debit.balance, debit };
    });
  }

  /**
   * Debits several calls of `product` to one account in one journal change: a debit entry each
   * (a monitor's event: one `units` a match), refused one by one. Each result is the debit's
   * Charge, or the AppError that refused it (429 quota_exceeded, 403 not_subscribed) with the
   * wallet as it was, so a window's events are paid as far as the wallet goes.
   */
  chargeMany(account: string, product: Product, calls: { requestId: string; keyId: string; units: number }[]): Promise<(Charge | AppError)[]> {
    const h = this.held(account);
    return this.#writer.change(h, (state, now, out) => {
      if (account === OPERATOR) {
        return calls.map((ctx): Charge => {
          const debit = operatorDebit(state, product, ctx, now, out);
          return { account: OPERATOR, seq: debit.seq, credits: 0, remaining: null, debit };
        });
      }
      const subscribed = this.#subOf(h, product, now);
      return calls.map((ctx): Charge | AppError => {
        if (!subscribed) return new AppError('not_subscribed', `this account does not subscribe to ${product}`);
        try {
          // debitCall refuses before it records anything: the entries so far stand.
          const debit = debitCall(account, state, product, subscribed, ctx, now, out, ctx.units);
          return { account, seq: debit.seq, credits: 0 - debit.credits, remaining: debit.balance, debit };
        } catch (e) {
          if (e instanceof AppError) return e;
          throw e;
        }
      });
    });
  }

  /**
   * Gives back `units` of the debit with request id `requestId` (a monitor window's: the matches
   * of one given-up webhook event), a credit of the product's price each; what was given back
   * of it before counts against what it took. `since`: no earlier than the debit (unix ms).
   * Resolves with the refund entry, or null when there is nothing (left) to give back.
   */
  async refundUnits(account: string, requestId: string, units: number, reason: string, since: number): Promise<LedgerEntry | null> {
    const entries = this.entries(account, since);
    const d = entries.find((e) => e.kind === 'debit' && e.requestId === requestId);
    if (!d || d.product === undefined || account === OPERATOR) return null;
    const returnedBefore = entries.filter((e) => e.kind === 'refund' && e.refundOf === d.seq).reduce((n, e) => n + e.credits, 0);
    const product = d.product;
    return this.#writer.change(this.held(account), (state, now, out) =>
      refundPart(account, state, d, { credits: units * creditsOf(product), units, returnedBefore }, reason, now, out),
    );
  }

  /** Reverses a charge (a 5xx, or a request refused after it was charged). A charge is refunded once. */
  async refund(charge: Charge, reason: string): Promise<Charge> {
    const id = charge.account;
    const d = charge.debit;
    if (charge.seq === null || !d) return { ...charge, credits: 0 };
    if (this.#refunded.has(d)) return { ...charge, credits: 0, remaining: id === OPERATOR ? null : this.balance(id) };
    this.#refunded.add(d);
    try {
      return await this.#writer.change(this.held(id), (state, now, out) => {
        refundDebit(id, state, d, reason, now, out);
        return { account: id, seq: charge.seq, credits: 0, remaining: id === OPERATOR ? null : spendable(state.lots, now) };
      });
    } catch (e) {
      this.#refunded.delete(d);
      throw e;
    }
  }

  /** A change to one account outside the request path (CLI, admin), computed from LMDB. */
  #sync<T>(accountId: string, f: AdminChange<T>): T {
    const now = this.clock();
    return this.#local().exclusive((out) => {
      const account = this.#mustAccount(accountId);
      const r = f(account, this.#held.read(account.id).state, now, out);
      applySubs(this.#t, out);
      return r;
    });
  }

  /** `#sync` in cluster mode: computed on the account's state as this node's journal holds it, and again on the chain's where it has grown. */
  async #changeShared<T>(accountId: string, f: AdminChange<T>): Promise<T> {
    if (!this.#shared) return this.#sync(accountId, f);
    const account = await this.#sharedAccount(accountId);
    return this.#shared.exclusive(account.id, this.#held.read(account.id).state, (state, now, out) => f(account, state, now, out));
  }

  /** An account this node's journal may not hold yet: its record is in its chain's first slot. */
  async #sharedAccount(id: string): Promise<AccountRecord> {
    const a = await this.accountShared(id);
    return a ?? this.#mustAccount(id);
  }

  /** `account`, in cluster mode too: one this node's journal does not hold yet is read from its chain. */
  async accountShared(id: string): Promise<AccountRecord | undefined> {
    const local = this.account(id);
    if (local || !this.#slots || id === OPERATOR) return local;
    return (await this.#slots.read(id, 1))?.account;
  }

  /**
   * Cluster mode: copies records of the wallet log (oldest first, `position` its log sequence)
   * into the local journal, with the accounts and subscriptions they make, and the position, in
   * one transaction; then counts them in the working states. The applier calls it.
   */
  applyShared(records: readonly { position: number; record: SlotRecord }[]): void {
    if (records.length === 0) return;
    const t = this.#t;
    const applied = headOf(t).pos;
    t.store.root.transactionSync(() => {
      for (const { position, record } of records) {
        if (record.account) t.accounts.putSync(record.account.id, record.account);
        t.journal.putSync(position, record.entries);
        applySubs(t, record.entries);
      }
      const last = records[records.length - 1].position;
      t.heads.putSync(HEAD, last, Math.floor(Math.random() * 2 ** 52));
      t.heads.putSync(SHARED_POSITION, last);
    });
    let before = applied;
    let entries = 0;
    for (const { position, record } of records) {
      this.#held.apply(position, record.entries, before, (account, seq) => this.#shared?.holds(account, seq) ?? false);
      before = position;
      entries += record.entries.length;
    }
    this.#landed(entries);
  }

  /** Cluster mode: the wallet log position the local journal holds everything up to. */
  sharedPosition(): number {
    return this.#t.heads.get(SHARED_POSITION) ?? 0;
  }

  /** Cluster mode: the newest log position this process's own changes landed at (0: none, or a single node). */
  lastSharedPosition(): number {
    return this.#shared?.lastPosition ?? 0;
  }

  /** Counts what the writer commits; every FOLD_AFTER entries, folds in the background. */
  #landed(entries: number): void {
    this.#unfolded += entries;
    if (this.#unfolded >= FOLD_AFTER && !this.#folding)
      void this.fold().catch((e) => this.log?.warn({ err: e }, 'billing: fold failed; the journal is folded later'));
  }

  /**
   * Folds the journal into the per-account view on the fold worker (off the event loop, under
   * the view's own lock); resolves with the entries folded. The writer calls it every
   * FOLD_AFTER entries it commits.
   */
  fold(): Promise<number> {
    if (this.#folding) return this.#folding;
    this.#unfolded = 0;
    const task: FoldTask = { store: this.store.path, max: FOLD_MAX };
    const folding = (this.#foldPool().run(task) as Promise<{ entries: number; folded: number }>)
      .then(({ entries, folded }) => {
        // Read past the worker's commit: a state loaded from here on includes what it folded.
        this.#view.root.resetReadTxn();
        this.#held.pruneTail(folded);
        this.#held.forgetIdle();
        return entries;
      })
      .finally(() => {
        this.#folding = null;
      });
    this.#folding = folding;
    return folding;
  }

  /** Waits for the changes in flight to land (cluster mode: before the wallet log's connection closes). */
  async drain(): Promise<void> {
    for (let b = this.#writer.inFlight(); b; b = this.#writer.inFlight()) await b.catch(() => undefined);
  }

  /** Waits for the commits in flight and folds what is left, so the next start has nothing to fold. */
  async close(): Promise<void> {
    await this.drain();
    await this.#folding?.catch(() => undefined);
    const pool = this.#pool;
    this.#pool = null;
    if (pool) {
      if (pool.threads.length > 0) await pool.run({ store: this.store.path, max: 0, close: true } satisfies FoldTask);
      await pool.destroy();
    }
    this.#view.fold(this.#t, Number.POSITIVE_INFINITY);
    await this.#view.close();
  }

  /** The credits an account can spend now (expired lots left out), charges still committing included. */
  balance(account: string): number {
    this.#writer.fresh();
    const now = this.clock();
    return spendable(this.#held.workingOf(this.held(account))?.state.lots ?? [], now);
  }

  /** Ledger entries of an account, oldest first, optionally those at or after `since` (unix ms) and before `until`. */
  entries(account: string, since = 0, until = Number.POSITIVE_INFINITY): LedgerEntry[] {
    return ledgerOf(this.#t, this.#view, account, () => this.#held.tailOf(account), since, until);
  }

  /**
   * The same entries, read on the fold worker: a server's pages read an account's whole ledger,
   * which for a busy account is too long a read for the event loop. What was committed when the
   * worker reads (a charge still committing is not in it yet).
   */
  async ledger(account: string, since = 0, until = Number.POSITIVE_INFINITY): Promise<LedgerEntry[]> {
    const task: LedgerTask = { store: this.store.path, ledger: { account, since, until } };
    return (await this.#foldPool().run(task)) as LedgerEntry[];
  }

  #foldPool(): Piscina {
    this.#pool ??= new Piscina({ ...workerFile(import.meta.url, 'fold-worker'), minThreads: 0, maxThreads: 1, idleTimeout: Number.POSITIVE_INFINITY });
    return this.#pool;
  }

  /** What GET /v1/account and `newsmatch usage` show. */
  summary(accountId: string): AccountSummary {
    const now = this.clock();
    const account = this.#mustAccount(accountId);
    this.#writer.fresh();
    let state = this.#held.workingOf(this.held(account.id))!.state;
    // Credits that expired since the account's last change are written off now, so the ledger
    // shown beside this summary sums to the balance it shows (rare: once a period at most).
    if (state.lots.some((l) => !live(l, now) && l.credits > 0)) {
      if (this.#shared) {
        // Written off in the working state at once, and in the wallet log by the time the record lands.
        void this.#shared
          .change(this.held(account.id), (s, at, out) => expire(account.id, s, at, out))
          .catch((e) => this.log?.warn({ err: e }, 'billing: writing off expired credits failed'));
        state = this.#held.workingOf(this.held(account.id))!.state;
      } else {
        this.#sync(account.id, (_a, s, at, out) => expire(account.id, s, at, out));
        this.#writer.fresh();
        state = this.#held.read(account.id).state;
      }
    }
    const subs = this.#t.subs.getRange({ start: [account.id, ''], end: [account.id, '\uffff'] }).map(({ value }) => value);
    return summaryOf(account, state, subs, now);
  }
}

/** A change outside the request path, computed on the account's record and state. */
type AdminChange<T> = (account: AccountRecord, state: AccountState, now: number, out: LedgerEntry[]) => T;

const newAccount = (name: string | null, now: number): AccountRecord => ({ id: `acct_${randomUUID().replace(/-/g, '').slice(0, 20)}`, name, createdAt: now });

/** A new account's first entries: every credit product on the free plan, the marketplace on Free, and FREE_CREDITS never expiring. */
const opening =
  (account: AccountRecord) =>
  (state: AccountState, now: number, out: LedgerEntry[]): AccountRecord => {
    for (const product of PRODUCT_NAMES) record(account.id, state, { kind: 'subscribe', credits: 0, product, plan: 'free' }, now, out);
    addLot(account.id, state, 'free', FREE_CREDITS, null, now, 'grant', out, 'new account');
    return account;
  };

function subscribing(product: Product, plan: Plan | 'none'): AdminChange<Subscription | null> {
  if (plan !== 'none' && !plansFor(product).includes(plan)) {
    throw new AppError('invalid_request', `${product} has no plan "${plan}"; plans: ${plansFor(product).join(', ')}, none`);
  }
  return (account, state, now, out) => {
    if (plan === 'none') {
      record(account.id, state, { kind: 'subscribe', credits: 0, product, note: 'unsubscribed' }, now, out);
      return null;
    }
    record(account.id, state, { kind: 'subscribe', credits: 0, product, plan }, now, out);
    return { product, plan, since: now };
  };
}

const granting =
  (credits: number): AdminChange<LedgerEntry> =>
  (account, state, now, out) =>
    addLot(account.id, state, 'subscription', credits, periodOf(account.createdAt, now).end, now, 'grant', out);

const buying =
  (credits: number): AdminChange<LedgerEntry> =>
  (account, state, now, out) =>
    addLot(account.id, state, 'purchased', credits, null, now, 'buy', out);
