/**
 * The journal's writer in cluster mode: one wallet across nodes. Each account's ledger is a
 * chain of records in a replicated log (src/cluster, `WalletSlots`), and its n-th entry can be
 * written only by the record that fills slot n: a record computed on the account's state up to
 * entry n - 1 goes to slot n, and lands only if that slot is empty. Two nodes deciding on the
 * same state race for the same slot; one wins, and the other reads what it wrote, computes its
 * changes again on it and tries the next slot. So no credit is spent twice, whichever node a
 * call reaches, and no change is refused for contention (a loss means the chain grew).
 *
 * Per account, one record is in flight at a time (a second, sent behind it, could land on a
 * slot after one this node lost, computed on a state that never was): calls made meanwhile
 * gather into the next record. Accounts do not wait on each other.
 *
 * A refusal (no credits left), or any change that records nothing (a monitor's events all
 * refused), is decided on the state this node knows, which may lack a grant another node just
 * wrote: it stands only once the chain is read to hold nothing past that state (or the record
 * it rode with won its slot); otherwise the call is decided again.
 *
 * The local journal is not written here: every node's applier copies the log into it, in log
 * order (Billing.applyShared), and statements are read from there.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import type { Held, HeldState } from './held-state.js';
import type { AccountRecord } from './journal.js';
import { type Change, computeAgain, type Decide, early } from './journal-writer.js';
import { applyEntry, type AccountState, type JournalEntry, type LedgerEntry } from './ledger.js';

/** One record of an account's chain: its entries (from the slot it fills on), and the account itself in its first. */
export interface SlotRecord {
  /** Drawn for each attempt: a writer whose answer was lost knows its record by it. */
  id: string;
  entries: JournalEntry[];
  account?: AccountRecord;
}

/** The replicated log of the accounts' chains (src/cluster implements it on JetStream). */
export interface WalletSlots {
  /**
   * Appends `record` as slot `seq` of `account`'s chain if no record holds that slot: resolves
   * with its position in the log, or null when another writer filled the slot first. Keeps
   * trying through lost servers for a while, then rejects.
   */
  append(account: string, seq: number, record: SlotRecord): Promise<number | null>;
  /** The record in slot `seq` of `account`'s chain, or null when the slot is empty. */
  read(account: string, seq: number): Promise<SlotRecord | null>;
}

/** An account with changes in flight. */
interface Lane {
  readonly h: Held;
  /** The account's state up to the newest slot known to be filled: what a lost record is computed again on. */
  confirmed: AccountState;
  /** The changes of the record in flight, and those made meanwhile (the next record). */
  flying: Change[];
  gathering: Change[];
  /**
   * The newest entry the local journal brought while the lane was open (the lane does not
   * count those): past the lane's state when it ends, the account's state is read again.
   */
  newest: number;
  readonly done: Promise<void>;
  settle: () => void;
}

const clone = (s: AccountState): AccountState => structuredClone(s);

export class SlotWriter {
  readonly #held: HeldState;
  readonly #slots: WalletSlots;
  readonly #clock: () => number;
  readonly #log: Logger | undefined;
  readonly #lanes = new Map<string, Lane>();
  /** The highest log position this writer's records landed at: what a read of its own writes waits for. */
  lastPosition = 0;

  constructor(held: HeldState, slots: WalletSlots, clock: () => number, log?: Logger) {
    this.#held = held;
    this.#slots = slots;
    this.#clock = clock;
    this.#log = log;
  }

  /** As JournalWriter.change: resolves once the record holding the change is in the replicated log. */
  change<T>(h: Held, decide: Decide<T>): Promise<T> {
    this.#held.serving = true;
    const w = this.#held.workingOf(h);
    if (!w) return Promise.reject(new AppError('not_found', `no account ${h.id}`));
    let lane = this.#lanes.get(h.id);
    const before = lane ? null : clone(w.state);
    const entries: LedgerEntry[] = [];
    let result: T | undefined;
    let refusal: AppError | undefined;
    try {
      result = decide(w.state, this.#clock(), entries, 0);
    } catch (e) {
      if (!(e instanceof AppError)) return Promise.reject(e);
      refusal = e;
    }
    if (!lane) {
      let settle!: () => void;
      const done = new Promise<void>((r) => (settle = r));
      lane = { h, confirmed: before!, flying: [], gathering: [], newest: 0, done, settle };
      this.#lanes.set(h.id, lane);
    }
    w.pending++;
    const l = lane;
    return new Promise<T>((resolve, reject) => {
      l.gathering.push({ h, decide, attempts: 1, result, entries, refused: !!refusal, refusal, resolve: resolve as (r: unknown) => void, reject });
      // Sent at the end of this turn of the event loop, with whatever else the turn charges.
      if (l.flying.length === 0 && l.gathering.length === 1) setImmediate(() => this.#flush(l));
    });
  }

  /** As JournalWriter.changeEarly. */
  changeEarly<T>(h: Held, decide: Decide<T>): { decided: T | undefined; landed: Promise<T> } {
    return early((d) => this.change(h, d), decide);
  }

  /**
   * A change outside the request path (the CLI): computed on `state` (as this node's journal
   * holds it; the chain may have grown since), appended at its slot, and computed again on
   * what the chain holds when another writer filled the slot first. `account`: a new
   * account's record, which its first record carries.
   */
  async exclusive<T>(accountId: string, state: AccountState, decide: Decide<T>, account?: AccountRecord): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const working = clone(state);
      const out: LedgerEntry[] = [];
      const result = decide(working, this.#clock(), out, attempt);
      if (out.length === 0) return result;
      const record: SlotRecord = { id: randomUUID(), entries: out as JournalEntry[], ...(account && state.seq === 0 ? { account } : {}) };
      const at = await this.#slots.append(accountId, state.seq + 1, record);
      if (at !== null) {
        this.lastPosition = Math.max(this.lastPosition, at);
        return result;
      }
      // Another writer filled the slot: what the chain holds now is what this is computed on.
      if ((await this.#catchUp(accountId, state, record.id)) === 'mine') return result;
    }
  }

  /** Nothing to notice: the applier brings other nodes' records in (Billing.applyShared). */
  fresh(): void {}

  /** What a close waits for: an account's record in flight; null when none. */
  inFlight(): Promise<void> | null {
    for (const lane of this.#lanes.values()) return lane.done;
    return null;
  }

  /**
   * A record of `account` reached the local journal: true when its working state must not
   * take it (a record of it is in flight here: it is either this node's, or one the lane
   * finds when its slot is taken).
   */
  holds(account: string, seq: number): boolean {
    const lane = this.#lanes.get(account);
    if (!lane) return false;
    lane.newest = Math.max(lane.newest, seq);
    return true;
  }

  #flush(lane: Lane): void {
    if (lane.flying.length > 0) return;
    if (lane.gathering.length === 0) {
      this.#lanes.delete(lane.h.id);
      // A record counted by neither this lane nor the working state: read it again from the journal.
      if (lane.newest > lane.confirmed.seq) lane.h.state = null;
      lane.settle();
      return;
    }
    lane.flying = lane.gathering;
    lane.gathering = [];
    void this.#send(lane);
  }

  async #send(lane: Lane): Promise<void> {
    const id = lane.h.id;
    try {
      for (;;) {
        const entries: JournalEntry[] = [];
        for (const c of lane.flying) if (!c.refused) for (const e of c.entries) entries.push(e as JournalEntry);
        if (entries.length === 0) {
          // Refusals (or changes that record nothing) alone: they stand if the chain holds nothing past the state they were decided on.
          if ((await this.#catchUp(id, lane.confirmed)) === 'none') break;
        } else {
          const record: SlotRecord = { id: randomUUID(), entries };
          const at = await this.#slots.append(id, lane.confirmed.seq + 1, record);
          if (at !== null) this.lastPosition = Math.max(this.lastPosition, at);
          const found = at !== null ? 'mine' : await this.#catchUp(id, lane.confirmed, record.id);
          if (found === 'none') throw new Error(`billing: slot ${lane.confirmed.seq + 1} of ${id} was taken, then read empty`);
          if (found === 'mine') {
            for (const e of entries) applyEntry(lane.confirmed, e);
            break;
          }
        }
        // Lost the slot (or the chain grew past a refusal): the lane's state is the chain's
        // now; every change in flight or gathering is computed again on it, in order.
        const w = this.#held.workingOf(lane.h);
        if (!w) throw new AppError('not_found', `no account ${id}`);
        w.state = clone(lane.confirmed);
        const now = this.#clock();
        for (const c of [...lane.flying, ...lane.gathering]) computeAgain(c, w.state, now);
      }
      this.#settle(lane, lane.flying);
    } catch (e) {
      // The log could not be reached for the writer's whole retry time: the calls fail, and the
      // account's state is read again (from the journal, then the chain) before its next change.
      this.#log?.error({ err: e, account: id }, 'billing: the wallet log could not be reached');
      this.#settle(lane, lane.flying, e);
      this.#settle(lane, lane.gathering, e);
      lane.gathering = [];
      lane.newest = Number.POSITIVE_INFINITY;
    }
    lane.flying = [];
    this.#flush(lane);
  }

  /** The changes settled: each resolves with its result, or rejects with its refusal (or `error`: its record could not be appended). */
  #settle(lane: Lane, changes: Change[], error?: unknown): void {
    for (const c of changes) {
      lane.h.pending--;
      if (error !== undefined) c.reject(error);
      else if (c.refused) c.reject(c.refusal);
      else c.resolve(c.result);
    }
  }

  /**
   * Applies to `state` the records the chain holds past it: 'grew' when there were any,
   * 'none' when there were none, 'mine' when the first is the record `mine` (its append
   * landed, and only the answer was lost; nothing is applied).
   */
  async #catchUp(account: string, state: AccountState, mine?: string): Promise<'mine' | 'grew' | 'none'> {
    let found: 'grew' | 'none' = 'none';
    for (let r = await this.#slots.read(account, state.seq + 1); r; r = await this.#slots.read(account, state.seq + 1)) {
      if (found === 'none' && r.id === mine) return 'mine';
      found = 'grew';
      for (const e of r.entries) applyEntry(state, e);
    }
    return found;
  }
}
