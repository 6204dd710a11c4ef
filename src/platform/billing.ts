/**
 * Accounts, the one credit wallet, per-product subscriptions and the usage ledger (the tables
 * in LMDB: journal.ts).
 *
 * The ledger is the record of every change to a wallet or a plan's usage, and an account's
 * state is what its entries add up to (ledger.ts, `applyEntry`): a debit and its ledger entry
 * are one record, written in one transaction, so the ledger always sums to the balance.
 *
 * Every change appends its entries to one journal, in arrival order. The request path (a
 * charge, a refund) computes them from the account's state in memory and resolves once they
 * are committed: the handler runs after its debit is on disk. Its commits are grouped: while
 * one is in flight, the calls that come meanwhile gather into the next, one journal record.
 * Appends land at the end of one B-tree, so a commit of many charges writes a few pages,
 * where keying each charge under its account dirtied pages of its own (bench/metering.ts). A
 * worker thread folds the journal into the per-account view (its own LMDB environment, so the
 * fold never holds the lock every commit needs).
 *
 * Concurrency (optimistic). The head says which record is the newest: its value is that
 * record's position, its version a random token drawn for it. Every append is conditional on
 * the token its writer last saw (`ifVersion`), so a record lands only right after the one its
 * writer computed it from, and a batch computed on top of one that failed never lands. A
 * process that loses that race (another process appended: the CLI, a second server) reads
 * the accounts it had changes in flight for again from LMDB, applies the records it missed to
 * the others it holds in memory, and computes its changes again. A change outside the request
 * path (the CLI) is one synchronous transaction that appends at the head.
 *
 * The spending rules are spending.ts; what an account is shown, statements.ts.
 */
import { randomUUID } from 'node:crypto';
import { Piscina } from 'piscina';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import type { Store } from '../store/index.js';
import { workerFile } from '../worker-file.js';
import type { FoldTask } from './fold-worker.js';
import { HeldState, type Held, type HeldSub } from './held-state.js';
import { HEAD, headOf, lastRecord, LedgerView, OPERATOR, openBillingTables, type AccountRecord, type BillingTables, type Subscription } from './journal.js';
import { emptyState, live, periodOf, type AccountState, type JournalEntry, type LedgerEntry } from './ledger.js';
import { plansFor, PRODUCT_NAMES, type Plan, type Product } from './products.js';
import { addLot, debitCall, expire, FREE_CREDITS, operatorDebit, record, refundDebit, spendable } from './spending.js';
import { ledgerOf, summaryOf, type AccountSummary } from './statements.js';

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
/**
 * A request-path change computed again this often before 503: each time another process has
 * appended meanwhile, so a busy CLI script can take a few.
 */
const ATTEMPTS = 20;
/**
 * Batches in flight at once: the next one commits while the one before waits for its fsync.
 * Safe because each is conditional on the head the one before sets.
 */
const BATCHES_IN_FLIGHT = 2;

/**
 * A record's token: drawn at random, so that a batch waiting behind one that failed can never
 * take a record another process wrote at the same position for its predecessor.
 */
const newToken = (): number => Math.floor(Math.random() * 2 ** 52);

export class Billing {
  readonly #t: BillingTables;
  readonly #view: LedgerView;
  /** The newest record applied to the working states (position, token), and the newest sent. */
  #pos = 0;
  #token = 0;
  #tipPos = 0;
  #tipToken = 0;
  /** Moves on every conflict: a change computed before it is computed again. */
  #generation = 0;
  readonly #held: HeldState;
  readonly #refunded = new WeakSet<LedgerEntry>();
  /** Batches committing (oldest first), and the one gathering the changes made meanwhile. */
  readonly #committing: Batch[] = [];
  #gathering: Batch | null = null;
  #unfolded = 0;
  #folding: Promise<number> | null = null;
  /** The fold worker (started by the first background fold). */
  #pool: Piscina | null = null;
  /** Told of each group commit when it settles: its seconds and the entries that landed (none when it did not). Metrics listen (src/ops). */
  readonly commitListeners = new Set<(seconds: number, landed: readonly JournalEntry[]) => void>();

  constructor(
    readonly store: Store,
    readonly clock: () => number = Date.now,
    readonly log?: Logger,
    /** Accounts held in memory past which a fold forgets the idle ones (lowered by tests). */
    readonly heldMax = WORKING_ACCOUNTS_MAX,
  ) {
    this.#t = openBillingTables(store);
    this.#view = new LedgerView(LedgerView.beside(store));
    this.#held = new HeldState(this.#t, this.#view, clock, heldMax);
    store.root.transactionSync(() => {
      if (typeof this.#t.heads.get(HEAD) !== 'number') this.#t.heads.putSync(HEAD, lastRecord(this.#t), newToken());
    });
    ({ pos: this.#pos, token: this.#token } = headOf(this.#t));
    this.#tipPos = this.#pos;
    this.#tipToken = this.#token;
    // What the view lacks (a crash, a view deleted to be rebuilt) is folded now.
    const { entries, folded } = this.#view.fold(this.#t, Number.POSITIVE_INFINITY);
    if (entries > 1000) log?.info(`billing: folded ${entries} journal entries into ${this.#view.path}`);
    this.#held.startTail(folded);
  }

  /** A new account: 250 free credits (never expiring), every credit product on the free plan, the marketplace on Free. */
  createAccount(name: string | null = null): AccountRecord {
    const now = this.clock();
    const account: AccountRecord = { id: `acct_${randomUUID().replace(/-/g, '').slice(0, 20)}`, name, createdAt: now };
    return this.#exclusive((out) => {
      this.#t.accounts.putSync(account.id, account);
      const state = emptyState();
      for (const product of PRODUCT_NAMES) this.#subscribe(account.id, state, product, 'free', now, out);
      addLot(account.id, state, 'free', FREE_CREDITS, null, now, 'grant', out, 'new account');
      return account;
    });
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
    if (fresh) this.#fresh();
    return this.#held.subOf(h, product, now);
  }

  /** Puts an account on a plan of a product (a new period starts now), or `none` to unsubscribe. */
  subscribe(accountId: string, product: Product, plan: Plan | 'none'): Subscription | null {
    if (plan !== 'none' && !plansFor(product).includes(plan)) {
      throw new AppError('invalid_request', `${product} has no plan "${plan}"; plans: ${plansFor(product).join(', ')}, none`);
    }
    return this.#sync(accountId, (account, state, now, out) => {
      if (plan !== 'none') return this.#subscribe(account.id, state, product, plan, now, out);
      this.#t.subs.removeSync([account.id, product]);
      record(account.id, state, { kind: 'subscribe', credits: 0, product, note: 'unsubscribed' }, now, out);
      return null;
    });
  }

  #subscribe(account: string, state: AccountState, product: Product, plan: Plan, now: number, out: LedgerEntry[]): Subscription {
    const sub: Subscription = { product, plan, since: now };
    this.#t.subs.putSync([account, product], sub);
    record(account, state, { kind: 'subscribe', credits: 0, product, plan }, now, out);
    return sub;
  }

  /** Subscription credits: spent first, gone at the end of the account's current month. */
  grant(accountId: string, credits: number): LedgerEntry {
    return this.#sync(accountId, (account, state, now, out) => addLot(account.id, state, 'subscription', credits, periodOf(account.createdAt, now).end, now, 'grant', out));
  }

  /** Purchased credits: never expire, spent last. */
  buy(accountId: string, credits: number): LedgerEntry {
    return this.#sync(accountId, (account, state, now, out) => addLot(account.id, state, 'purchased', credits, null, now, 'buy', out));
  }

  /**
   * Debits one call of `product` before its handler runs: its price in credits, or one request
   * of the marketplace plan (spending.ts, `debitCall`). Rejects with 429 `quota_exceeded` (with
   * Retry-After where waiting for the next period helps) when the wallet cannot pay or the plan
   * is past its stop. The operator account has no wallet and no plans: its calls are recorded
   * at price 0. The metering path passes the account's record it has authorised with, which
   * saves a lookup.
   */
  charge(account: string | Held, product: Product, ctx: { requestId: string; keyId: string }): Promise<Charge> {
    // A record dropped since the caller took it (fold): the account's current one.
    const h = typeof account === 'string' ? this.held(account) : account.dropped ? this.held(account.id) : account;
    // Authorised with a record a moment ago: its subscription was read fresh then.
    const authorised = typeof account !== 'string';
    const accountId = h.id;
    if (accountId === OPERATOR) {
      return this.#change(h, (state, now, out) => {
        const debit = operatorDebit(state, product, ctx, now, out);
        return { account: OPERATOR, seq: debit.seq, credits: 0, remaining: null, debit };
      });
    }
    return this.#change(h, (state, now, out, attempt) => {
      // The subscription and its period, read from one object.
      const subscribed = this.#subOf(h, product, now, attempt > 0 || !authorised);
      if (!subscribed) throw new AppError('not_subscribed', `this account does not subscribe to ${product}`);
      const debit = debitCall(accountId, state, product, subscribed, ctx, now, out);
      return { account: accountId, seq: debit.seq, credits: 0 - debit.credits, remaining: debit.balance, debit };
    });
  }

  /** Reverses a charge (a 5xx, or a request refused after it was charged). A charge is refunded once. */
  async refund(charge: Charge, reason: string): Promise<Charge> {
    const id = charge.account;
    const d = charge.debit;
    if (charge.seq === null || !d) return { ...charge, credits: 0 };
    if (this.#refunded.has(d)) return { ...charge, credits: 0, remaining: id === OPERATOR ? null : this.balance(id) };
    this.#refunded.add(d);
    try {
      return await this.#change(this.held(id), (state, now, out) => {
        refundDebit(id, state, d, reason, now, out);
        return { account: id, seq: charge.seq, credits: 0, remaining: id === OPERATOR ? null : spendable(state.lots, now) };
      });
    } catch (e) {
      this.#refunded.delete(d);
      throw e;
    }
  }

  /**
   * The request path: computes a change from the account's state in memory (`decide` records
   * its entries, or throws an AppError to refuse the call with nothing recorded), appends the
   * entries to the journal and resolves once they are committed. When another process appended
   * meanwhile, the change is computed again on what it wrote.
   */
  async #change<T>(h: Held, decide: (state: AccountState, now: number, out: LedgerEntry[], attempt: number) => T): Promise<T> {
    this.#held.serving = true;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const generation = this.#generation;
      // Serving: the working state is the held record's.
      const w = this.#held.workingOf(h);
      if (!w) throw new AppError('not_found', `no account ${h.id}`);
      const out: LedgerEntry[] = [];
      const result = decide(w.state, this.clock(), out, attempt);
      if (out.length === 0) return result;
      // `decide` read a subscription, which can catch up: then `w` may have been rolled back.
      if (generation !== this.#generation) continue;
      w.pending++;
      try {
        if (await this.#enqueue(h, out)) return result;
      } finally {
        w.pending--;
      }
    }
    throw new AppError('product_unavailable', 'credits could not be reached: the ledger kept changing under this call');
  }

  /** Adds a change's entries to the batch being gathered; resolves with whether its commit landed. */
  #enqueue(h: Held, entries: LedgerEntry[]): Promise<boolean> {
    const b = (this.#gathering ??= new Batch(this.#generation));
    for (const e of entries) b.entries.push(e as JournalEntry);
    b.held.push(h);
    // A new batch with room in flight commits at the end of this turn of the event loop, with
    // whatever else the turn charges; otherwise it gathers until a commit in flight lands.
    if (b.entries.length === entries.length && this.#committing.length < BATCHES_IN_FLIGHT) setImmediate(() => this.#flush());
    return b.done;
  }

  /**
   * Group commit: at most BATCHES_IN_FLIGHT batches committing, and the changes made meanwhile
   * are the next batch, one journal record conditional on the token of the record before it.
   * Many calls share one commit and one fsync instead of queueing one each.
   */
  #flush(): void {
    const b = this.#gathering;
    if (!b || this.#committing.length >= BATCHES_IN_FLIGHT) return;
    this.#gathering = null;
    // Computed on states rolled back since (a conflict): computed again.
    if (b.generation !== this.#generation) return b.settle(false);
    const after = this.#tipToken;
    const pos = (this.#tipPos += 1);
    const token = (this.#tipToken = newToken());
    this.#committing.push(b);
    const t0 = performance.now();
    const next = () => {
      this.#committing.splice(this.#committing.indexOf(b), 1);
      this.#flush();
    };
    this.#t.heads
      .ifVersion(HEAD, after, () => {
        this.#t.journal.put(pos, b.entries);
        this.#t.heads.put(HEAD, pos, token);
      })
      .then(
        (ok) => {
          if (ok) this.#landed(pos, token, b);
          else this.#conflict(b);
          b.settle(ok);
          this.#tell(t0, ok ? b.entries : []);
          next();
        },
        (e: unknown) => {
          // The commit failed: nothing of it is in LMDB.
          this.#conflict(b);
          b.fail(e);
          this.#tell(t0, []);
          next();
        },
      );
  }

  #tell(t0: number, landed: readonly JournalEntry[]): void {
    const seconds = (performance.now() - t0) / 1000;
    for (const f of this.commitListeners) {
      try {
        f(seconds, landed);
      } catch (e) {
        // A listener never stops the commits behind this one.
        this.log?.error({ err: e }, 'billing: a commit listener failed');
      }
    }
  }

  /**
   * A record this process appended is committed: its entries are in the working states already,
   * and go into the accounts' tail positions (through the batch's records: no lookup).
   */
  #landed(pos: number, token: number, b: Batch): void {
    this.#held.landed(pos, this.#pos, b.held);
    this.#pos = pos;
    this.#token = token;
    this.#unfolded += b.entries.length;
    if (this.#unfolded >= FOLD_AFTER && !this.#folding) void this.fold().catch((e) => this.log?.warn({ err: e }, 'billing: fold failed; the journal is folded later'));
  }

  /**
   * A batch did not land: another process appended first (or the commit failed). Everything
   * computed on top of it is dropped (the batches behind it in flight cannot land either: they
   * expect its token) and the working states catch up with LMDB.
   */
  #conflict(b: Batch): void {
    if (b.generation !== this.#generation) return;
    this.#generation++;
    if (this.#gathering?.generation === b.generation) {
      this.#gathering.settle(false);
      this.#gathering = null;
    }
    this.#catchUp();
  }

  /**
   * Brings the working states up to the head after a conflict (or a change made elsewhere): an
   * account with changes in flight is read again from LMDB, which holds every record that
   * landed and none that did not; the others get the records other processes appended.
   */
  #catchUp(): void {
    const head = headOf(this.#t);
    if (head.token !== this.#token && head.pos > this.#pos) {
      for (const { key: pos, value } of this.#t.journal.getRange({ start: this.#pos + 1, end: head.pos + 1 })) this.#held.apply(pos, value, this.#pos);
    }
    this.#pos = this.#tipPos = head.pos;
    this.#token = this.#tipToken = head.token;
    this.#held.rereadInFlight();
  }

  /** Notices a change made elsewhere (the head is not the newest record this process knows). */
  #fresh(): void {
    // With changes in flight, the conflict they meet applies what others wrote, in order.
    if (this.#committing.length > 0 || this.#gathering) return;
    if (headOf(this.#t).token !== this.#token) this.#catchUp();
  }

  /**
   * A change outside the request path: `f` runs in one synchronous transaction of the store and
   * records its entries in `out`, appended as one record at the head.
   */
  #exclusive<T>(f: (out: LedgerEntry[]) => T): T {
    return this.store.root.transactionSync(() => {
      const out: LedgerEntry[] = [];
      const r = f(out);
      if (out.length > 0) {
        const head = headOf(this.#t);
        this.#t.journal.putSync(head.pos + 1, out as JournalEntry[]);
        this.#t.heads.putSync(HEAD, head.pos + 1, newToken());
      }
      return r;
    });
  }

  /** A change to one account outside the request path (CLI, admin), computed from LMDB. */
  #sync<T>(accountId: string, f: (account: AccountRecord, state: AccountState, now: number, out: LedgerEntry[]) => T): T {
    const now = this.clock();
    return this.#exclusive((out) => {
      const account = this.#mustAccount(accountId);
      return f(account, this.#held.read(account.id).state, now, out);
    });
  }

  /**
   * Folds the journal into the per-account view on the fold worker (off the event loop, under
   * the view's own lock); resolves with the entries folded. The writer calls it every
   * FOLD_AFTER entries it commits.
   */
  fold(): Promise<number> {
    if (this.#folding) return this.#folding;
    this.#unfolded = 0;
    this.#pool ??= new Piscina({ ...workerFile(import.meta.url, 'fold-worker'), minThreads: 0, maxThreads: 1, idleTimeout: Number.POSITIVE_INFINITY });
    const task: FoldTask = { store: this.store.path, max: FOLD_MAX };
    const folding = (this.#pool.run(task) as Promise<{ entries: number; folded: number }>)
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

  /** Waits for the commits in flight and folds what is left, so the next start has nothing to fold. */
  async close(): Promise<void> {
    while (this.#committing.length > 0 || this.#gathering) await (this.#committing[0] ?? this.#gathering)!.done.catch(() => undefined);
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
    this.#fresh();
    const now = this.clock();
    return spendable(this.#held.workingOf(this.held(account))?.state.lots ?? [], now);
  }

  /** Ledger entries of an account, oldest first, optionally those at or after `since` (unix ms) and before `until`. */
  entries(account: string, since = 0, until = Number.POSITIVE_INFINITY): LedgerEntry[] {
    return ledgerOf(this.#t, this.#view, account, () => this.#held.tailOf(account), since, until);
  }

  /** What GET /v1/account and `newsmatch usage` show. */
  summary(accountId: string): AccountSummary {
    const now = this.clock();
    const account = this.#mustAccount(accountId);
    this.#fresh();
    let state = this.#held.workingOf(this.held(account.id))!.state;
    // Credits that expired since the account's last change are written off now, so the ledger
    // shown beside this summary sums to the balance it shows (rare: once a period at most).
    if (state.lots.some((l) => !live(l, now) && l.credits > 0)) {
      this.#sync(account.id, (_a, s, at, out) => expire(account.id, s, at, out));
      this.#fresh();
      state = this.#held.read(account.id).state;
    }
    const subs = this.#t.subs.getRange({ start: [account.id, ''], end: [account.id, '\uffff'] }).map(({ value }) => value);
    return summaryOf(account, state, subs, now);
  }
}

/** Changes committed together: one journal record, one promise the calls in it wait on. */
class Batch {
  readonly entries: JournalEntry[] = [];
  /** The account of each change in it. */
  readonly held: Held[] = [];
  readonly done: Promise<boolean>;
  settle!: (ok: boolean) => void;
  fail!: (e: unknown) => void;

  constructor(readonly generation: number) {
    this.done = new Promise<boolean>((resolve, reject) => {
      this.settle = resolve;
      this.fail = reject;
    });
  }
}
