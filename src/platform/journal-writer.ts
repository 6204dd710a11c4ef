/**
 * The journal's writer in this process: every change appends its entries to one journal, in
 * arrival order.
 *
 * The request path (a charge, a refund) computes them from the account's state in memory and
 * resolves once they are committed (`changeEarly` also hands back the decision at once: the
 * metering path runs the handler meanwhile, and answers once its debit is on disk). Its commits
 * are grouped: while one is in flight, the calls that come meanwhile gather into the next, one
 * journal record. Appends land at the end of one B-tree, so a commit of many charges writes a
 * few pages, where keying each charge under its account dirtied pages of its own
 * (bench/metering.ts).
 *
 * Concurrency. The head says which record is the newest: its value is that record's position,
 * its version a random token drawn for it. A batch is first appended conditionally on the
 * token its writer last saw (`ifVersion`, checked by lmdb's writer thread, with no call back
 * into this one), so it lands only right after the record it was computed on. When another
 * process appended first (the CLI, a second server), that batch and every one in flight
 * behind it fail; their changes, and those made meanwhile, are then computed again and written
 * in one lmdb transaction callback, which runs on this thread while lmdb holds the store's
 * write lock: it applies what the others wrote, reads the accounts with changes in flight again
 * from LMDB, computes their changes again on them, in order, and appends, with nothing able to
 * land in between: that commit cannot miss, so no change is ever refused for contention. (Retrying the conditional append
 * instead starves: a script granting credits in a loop holds the lock most of the time, and
 * the server's charges lost twenty races in a row and failed with 503.) A change outside the
 * request path (the CLI) is one synchronous transaction that appends at the head (`exclusive`).
 */
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import type { Held, HeldState, Working } from './held-state.js';
import { HEAD, headOf, lastRecord, type BillingTables } from './journal.js';
import type { AccountState, JournalEntry, LedgerEntry } from './ledger.js';

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

/** Told of each group commit when it settles: its seconds and the entries that landed (none when it did not). */
export type CommitListener = (seconds: number, landed: readonly JournalEntry[]) => void;

export interface WriterOptions {
  log?: Logger;
  listeners: ReadonlySet<CommitListener>;
  /** Called with the number of entries each record this process appended that landed. */
  landed: (entries: number) => void;
}

/** Computes a change from an account's state: records its entries in `out`, or throws an AppError to refuse it. */
export type Decide<T> = (state: AccountState, now: number, out: LedgerEntry[], attempt: number) => T;

/** One request-path change in flight: what computes it, and what it came to last. */
export interface Change {
  readonly h: Held;
  readonly decide: Decide<unknown>;
  /** Times computed so far. */
  attempts: number;
  result: unknown;
  /** Its entries as last computed. */
  entries: LedgerEntry[];
  /** Refused when computed again (`decide` threw `refusal`): it stays refused. */
  refused: boolean;
  refusal: unknown;
  resolve: (result: unknown) => void;
  reject: (e: unknown) => void;
}

/** Changes committed together: one journal record, settled when its commit does. */
class Batch {
  readonly done: Promise<void>;
  settle!: () => void;

  constructor(readonly changes: Change[] = []) {
    this.done = new Promise<void>((resolve) => {
      this.settle = resolve;
    });
  }

  /** Its changes' entries, in order: the record it appends. */
  entries(): JournalEntry[] {
    const out: JournalEntry[] = [];
    for (const c of this.changes) for (const e of c.entries) out.push(e as JournalEntry);
    return out;
  }

  /** Its changes settled: each resolves with its result, or rejects with its refusal (or `error`: the commit failed). */
  finish(error?: unknown): void {
    for (const c of this.changes) {
      c.h.pending--;
      if (error !== undefined) c.reject(error);
      else if (c.refused) c.reject(c.refusal);
      else c.resolve(c.result);
    }
    this.settle();
  }
}

export class JournalWriter {
  readonly #t: BillingTables;
  readonly #held: HeldState;
  readonly #clock: () => number;
  readonly #options: WriterOptions;
  /** The newest record applied to the working states (position, token), and the newest sent. */
  #pos = 0;
  #token = 0;
  #tipPos = 0;
  #tipToken = 0;
  /** Batches committing (oldest first), and the one gathering the changes made meanwhile. */
  readonly #committing: Batch[] = [];
  #gathering: Batch | null = null;
  /**
   * A batch did not land: the next commits under the write lock (`#commitLocked`), once every
   * batch in flight has settled. `#redo`: the changes of the batches that did not land, in order.
   */
  #lock = false;
  readonly #redo: Change[] = [];
  /** A commit failed: the working states may count entries that never landed, so every one is read again. */
  #broken = false;

  /** Opens on the head of `t` (made at the newest record if the store has none yet). */
  constructor(t: BillingTables, held: HeldState, clock: () => number, options: WriterOptions) {
    this.#t = t;
    this.#held = held;
    this.#clock = clock;
    this.#options = options;
    t.store.root.transactionSync(() => {
      if (typeof t.heads.get(HEAD) !== 'number') t.heads.putSync(HEAD, lastRecord(t), newToken());
    });
    ({ pos: this.#pos, token: this.#token } = headOf(t));
    this.#tipPos = this.#pos;
    this.#tipToken = this.#token;
  }

  /**
   * The request path: computes a change from the account's state in memory (`decide` records
   * its entries, or throws an AppError to refuse the call with nothing recorded), appends the
   * entries to the journal and resolves once they are committed. When another process appended
   * first, the change is computed again on what it wrote, under the write lock, and resolves
   * with what that returned (or rejects with its refusal).
   */
  change<T>(h: Held, decide: Decide<T>): Promise<T> {
    this.#held.serving = true;
    const entries: LedgerEntry[] = [];
    let w: Working | undefined;
    let result: T;
    try {
      w = this.#held.workingOf(h);
      if (!w) throw new AppError('not_found', `no account ${h.id}`);
      result = decide(w.state, this.#clock(), entries, 0);
    } catch (e) {
      return Promise.reject(e);
    }
    if (entries.length === 0) return Promise.resolve(result);
    w.pending++;
    return new Promise<T>((resolve, reject) => {
      const b = (this.#gathering ??= new Batch());
      b.changes.push({ h, decide, attempts: 1, result, entries, refused: false, refusal: undefined, resolve: resolve as (r: unknown) => void, reject });
      // A new batch with room in flight commits at the end of this turn of the event loop, with
      // whatever else the turn charges; otherwise it gathers until a commit in flight settles.
      if (b.changes.length === 1 && this.#committing.length < BATCHES_IN_FLIGHT) setImmediate(() => this.#flush());
    });
  }

  /**
   * `change`, with its decision handed back at once: `decided` is what `decide` returned for
   * the change now committing (undefined when it refused, by throwing), and `landed` resolves
   * with the result once it is committed. What lands is what counts: when another process
   * appended first, the change is computed again, and may come out otherwise or be refused.
   */
  changeEarly<T>(h: Held, decide: Decide<T>): { decided: T | undefined; landed: Promise<T> } {
    return early((d) => this.change(h, d), decide);
  }

  /**
   * A change outside the request path: `f` runs in one synchronous transaction of the store and
   * records its entries in `out`, appended as one record at the head.
   */
  exclusive<T>(f: (out: LedgerEntry[]) => T): T {
    return this.#t.store.root.transactionSync(() => {
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

  /** Notices a change made elsewhere (the head is not the newest record this process knows). */
  fresh(): void {
    // With changes in flight, the commit that settles them catches up, under the write lock.
    if (this.#committing.length > 0 || this.#gathering || this.#redo.length > 0) return;
    if (this.#broken || headOf(this.#t).token !== this.#token) this.#catchUp();
  }

  /** What a close waits for: the oldest batch committing, or the one gathering; null when none. */
  inFlight(): Promise<void> | null {
    return (this.#committing[0] ?? this.#gathering)?.done ?? null;
  }

  /**
   * Group commit: at most BATCHES_IN_FLIGHT batches committing, and the changes made meanwhile
   * are the next batch, one journal record conditional on the token of the record before it.
   * Many calls share one commit and one fsync instead of queueing one each. After a batch
   * that did not land, the next commit is the locked one, alone.
   */
  #flush(): void {
    if (this.#lock) {
      if (this.#committing.length === 0) this.#commitLocked();
      return;
    }
    const b = this.#gathering;
    if (!b || this.#committing.length >= BATCHES_IN_FLIGHT) return;
    this.#gathering = null;
    const after = this.#tipToken;
    const pos = (this.#tipPos += 1);
    const token = (this.#tipToken = newToken());
    const entries = b.entries();
    this.#committing.push(b);
    const t0 = performance.now();
    const missed = (e?: unknown) => {
      // Its changes (and those of the batches behind it, which expect its token and fail too)
      // are computed again under the lock, in order; a commit that failed outright may have
      // left anything in memory, so every state is read again.
      if (e !== undefined) {
        this.#options.log?.error({ err: e }, 'billing: a journal commit failed; computing its changes again');
        this.#broken = true;
      }
      for (const c of b.changes) this.#redo.push(c);
      this.#lock = true;
      // The batch is done with (a close waiting on it goes on to the locked one).
      b.settle();
      this.#settled(b, t0, []);
    };
    this.#t.heads
      .ifVersion(HEAD, after, () => {
        this.#t.journal.put(pos, entries);
        this.#t.heads.put(HEAD, pos, token);
      })
      .then((ok) => {
        if (!ok) return missed();
        this.#held.landed(
          pos,
          this.#pos,
          b.changes.map((c) => c.h),
        );
        this.#pos = pos;
        this.#token = token;
        b.finish();
        this.#options.landed(entries.length);
        this.#settled(b, t0, entries);
      }, missed);
  }

  /**
   * The commit after a batch that did not land: the changes still to land (those of the
   * batches that did not, then those made meanwhile) in one lmdb transaction callback, which
   * catches up and computes them again under the store's write lock (`#write`), so it cannot
   * miss. Runs alone: no conditional batch is in flight before or beside it.
   */
  #commitLocked(): void {
    const b = new Batch(this.#redo.splice(0));
    if (this.#gathering) b.changes.push(...this.#gathering.changes);
    this.#gathering = null;
    if (b.changes.length === 0) {
      this.#lock = false;
      return;
    }
    this.#committing.push(b);
    const t0 = performance.now();
    this.#t.store.root
      .transaction(() => this.#write(b))
      .then(
        (entries) => {
          this.#lock = false;
          b.finish();
          if (entries.length > 0) this.#options.landed(entries.length);
          this.#settled(b, t0, entries);
        },
        (e: unknown) => {
          // Under the lock it cannot lose a race: the commit itself failed (a full disk). Its
          // calls fail; every state is read again before the next change is written.
          this.#broken = true;
          b.finish(e);
          this.#settled(b, t0, []);
        },
      );
  }

  /** Inside the locked commit's callback: catches up, computes its changes again, appends them. */
  #write(b: Batch): JournalEntry[] {
    this.#catchUp();
    const now = this.#clock();
    this.#recompute(b, now);
    // Changes made since this batch was formed were computed on states just read again.
    if (this.#gathering) this.#recompute(this.#gathering, now);
    const entries = b.entries();
    if (entries.length === 0) return entries;
    const pos = this.#pos + 1;
    const token = newToken();
    this.#t.journal.put(pos, entries);
    this.#t.heads.put(HEAD, pos, token);
    this.#held.landed(
      pos,
      this.#pos,
      b.changes.filter((c) => !c.refused).map((c) => c.h),
    );
    this.#pos = this.#tipPos = pos;
    this.#token = this.#tipToken = token;
    return entries;
  }

  #settled(b: Batch, t0: number, landed: readonly JournalEntry[]): void {
    this.#committing.splice(this.#committing.indexOf(b), 1);
    const seconds = (performance.now() - t0) / 1000;
    for (const f of this.#options.listeners) {
      try {
        f(seconds, landed);
      } catch (e) {
        // A listener never stops the commits behind this one.
        this.#options.log?.error({ err: e }, 'billing: a commit listener failed');
      }
    }
    this.#flush();
  }

  /**
   * Brings the working states up to the head: the records other processes appended are applied
   * to the accounts without changes in flight; an account with changes in flight is read again
   * from LMDB, which holds every record that landed and none that did not (its changes are then
   * computed again). After a failed commit, every state is read again.
   */
  #catchUp(): void {
    const head = headOf(this.#t);
    if (this.#broken) {
      this.#held.dropStates();
      this.#broken = false;
    } else if (head.pos > this.#pos) {
      let applied = this.#pos;
      for (const { key: pos, value } of this.#t.journal.getRange({ start: applied + 1, end: head.pos + 1 })) {
        this.#held.apply(pos, value, applied);
        applied = pos;
      }
    }
    this.#pos = this.#tipPos = head.pos;
    this.#token = this.#tipToken = head.token;
    this.#held.rereadInFlight();
  }

  /** Computes a batch's changes again, on the states read again (a refusal stays refused). */
  #recompute(b: Batch, now: number): void {
    for (const c of b.changes) {
      if (c.refused) continue;
      const w = this.#held.workingOf(c.h);
      if (w) computeAgain(c, w.state, now);
      else {
        c.refused = true;
        c.refusal = new AppError('not_found', `no account ${c.h.id}`);
        c.entries = [];
      }
    }
  }
}

/**
 * A writer's `change` with its decision handed back at once: `decided` is what `decide`
 * returned when first computed (undefined when it refused, by throwing), `landed` the result
 * once committed (computed again after a conflict, it may come out otherwise or be refused).
 */
export function early<T>(change: (d: Decide<T>) => Promise<T>, decide: Decide<T>): { decided: T | undefined; landed: Promise<T> } {
  let decided: T | undefined;
  let first = true;
  const landed = change((state, now, out, attempt) => {
    const r = decide(state, now, out, attempt);
    if (first) decided = r;
    return r;
  });
  first = false;
  return { decided, landed };
}

/** Computes a change again on `state` (in place): its result and entries, or its refusal. */
export function computeAgain(c: Change, state: AccountState, now: number): void {
  const out: LedgerEntry[] = [];
  c.refused = false;
  try {
    c.result = c.decide(state, now, out, c.attempts++);
  } catch (e) {
    c.refused = true;
    c.refusal = e;
    out.length = 0;
  }
  c.entries = out;
}
