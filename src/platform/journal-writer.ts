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
 * Concurrency (optimistic). The head says which record is the newest: its value is that
 * record's position, its version a random token drawn for it. Every append is conditional on
 * the token its writer last saw (`ifVersion`), so a record lands only right after the one its
 * writer computed it from, and a batch computed on top of one that failed never lands. A
 * process that loses that race (another process appended: the CLI, a second server) reads
 * the accounts it had changes in flight for again from LMDB, applies the records it missed to
 * the others it holds in memory, and computes its changes again. A change outside the request
 * path (the CLI) is one synchronous transaction that appends at the head (`exclusive`).
 */
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import type { Held, HeldState } from './held-state.js';
import { HEAD, headOf, lastRecord, type BillingTables } from './journal.js';
import type { AccountState, JournalEntry, LedgerEntry } from './ledger.js';

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

/** Told of each group commit when it settles: its seconds and the entries that landed (none when it did not). */
export type CommitListener = (seconds: number, landed: readonly JournalEntry[]) => void;

export interface WriterOptions {
  log?: Logger;
  listeners: ReadonlySet<CommitListener>;
  /** Called with the number of entries each record this process appended that landed. */
  landed: (entries: number) => void;
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
  /** Moves on every conflict: a change computed before it is computed again. */
  #generation = 0;
  /** Batches committing (oldest first), and the one gathering the changes made meanwhile. */
  readonly #committing: Batch[] = [];
  #gathering: Batch | null = null;

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
   * meanwhile, the change is computed again on what it wrote.
   */
  async change<T>(h: Held, decide: (state: AccountState, now: number, out: LedgerEntry[], attempt: number) => T): Promise<T> {
    this.#held.serving = true;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const generation = this.#generation;
      // Serving: the working state is the held record's.
      const w = this.#held.workingOf(h);
      if (!w) throw new AppError('not_found', `no account ${h.id}`);
      const out: LedgerEntry[] = [];
      const result = decide(w.state, this.#clock(), out, attempt);
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

  /**
   * `change`, with its decision handed back at once: `decided` is what `decide` returned for
   * the change now committing (undefined when it refused, by throwing), and `landed` resolves
   * with the result once it is committed. What lands is what counts: after a conflict the
   * change is computed again, and may come out otherwise or be refused.
   */
  changeEarly<T>(
    h: Held,
    decide: (state: AccountState, now: number, out: LedgerEntry[], attempt: number) => T,
  ): { decided: T | undefined; landed: Promise<T> } {
    let decided: T | undefined;
    let early = true;
    const landed = this.change(h, (state, now, out, attempt) => {
      // A throw leaves nothing decided; only the attempts made before `change` first waits count.
      if (early) decided = undefined;
      const r = decide(state, now, out, attempt);
      if (early) decided = r;
      return r;
    });
    early = false;
    return { decided, landed };
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
    // With changes in flight, the conflict they meet applies what others wrote, in order.
    if (this.#committing.length > 0 || this.#gathering) return;
    if (headOf(this.#t).token !== this.#token) this.#catchUp();
  }

  /** What a close waits for: the oldest batch committing, or the one gathering; null when none. */
  inFlight(): Promise<boolean> | null {
    return (this.#committing[0] ?? this.#gathering)?.done ?? null;
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
    for (const f of this.#options.listeners) {
      try {
        f(seconds, landed);
      } catch (e) {
        // A listener never stops the commits behind this one.
        this.#options.log?.error({ err: e }, 'billing: a commit listener failed');
      }
    }
  }

  /** A record this process appended is committed: its entries are in the working states already. */
  #landed(pos: number, token: number, b: Batch): void {
    this.#held.landed(pos, this.#pos, b.held);
    this.#pos = pos;
    this.#token = token;
    this.#options.landed(b.entries.length);
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
}
