/**
 * What this process holds in memory about the accounts it has seen: each one's working state
 * (what its next change is computed from), the subscriptions read, its rate windows, and the
 * tail index (the journal records past the view's fold that hold its entries, so that a state
 * or a ledger read takes those, not a scan of the whole tail). The journal's writer keeps it
 * up to date with what lands; a fold lets go of what the view now holds.
 */
import { headOf, journalAfter, OPERATOR, type BillingTables, type LedgerView, type Subscription } from './journal.js';
import { applyEntry, periodOf, type AccountState, type JournalEntry, type PeriodView } from './ledger.js';
import type { Product } from './products.js';
import type { RateWindows } from './rate-limit.js';

export interface Working {
  /** The account's state with this process's changes in flight: what the next change is computed from. */
  state: AccountState;
  /** The journal position the state counts every committed record up to. */
  pos: number;
  /** This process's changes in flight for the account; while 0, `state` is what LMDB holds. */
  pending: number;
}

/** A subscription read, and the period a call of it counts in (computed again when it ends). */
export interface HeldSub extends PeriodView {
  sub: Subscription;
}

/**
 * What this process holds in memory about one account: found with one lookup a call, which
 * then reads everything it needs from here (with 2,000 accounts a call's data is out of the
 * CPU's caches, and a lookup in a map of them costs a few cache misses each).
 */
export class Held {
  /** The working state (see Working), once loaded by a serving process. */
  state: AccountState | null = null;
  pos = 0;
  pending = 0;
  /** Subscriptions read so far, by product (null: none). */
  subs: Partial<Record<Product, HeldSub | null>> = {};
  /**
   * The journal records past the view's fold that hold the account's entries, indexed up to
   * HeldState's `#tailTo`: a state or a ledger read takes those, not a scan of the whole tail.
   */
  tail: number[] | null = null;
  /** The account's rate windows (metering's), kept here so a call finds them with the rest. */
  windows: RateWindows | null = null;
  /** Forgotten by the process (an idle account, when it holds too many): a caller takes the new record. */
  dropped = false;

  constructor(readonly id: string) {}
}

/** Adds a journal position to an account's tail positions (records come in position order). */
function addTail(h: Held, pos: number): void {
  const at = h.tail;
  if (!at) h.tail = [pos];
  else if (at[at.length - 1] !== pos) at.push(pos);
}

export class HeldState {
  readonly #t: BillingTables;
  readonly #view: LedgerView;
  readonly #held = new Map<string, Held>();
  /** The journal position the accounts' `tail` positions are indexed up to. */
  #tailTo = 0;
  /** Set by this process's first request-path change: from then on it keeps working states (a process that only reads reads LMDB each time). */
  serving = false;

  constructor(
    t: BillingTables,
    view: LedgerView,
    readonly clock: () => number,
    /** Accounts held past which a fold forgets the idle ones. */
    readonly max: number,
  ) {
    this.#t = t;
    this.#view = view;
  }

  /** The tail index starts past `folded`: the view holds everything up to there. */
  startTail(folded: number): void {
    this.#tailTo = folded;
  }

  /** This process's record of an account (made on first sight; see Held). */
  held(account: string): Held {
    let h = this.#held.get(account);
    if (!h) this.#held.set(account, (h = new Held(account)));
    return h;
  }

  /** An account's subscription to `product` (null: none) with its period at `now`, read from LMDB once. */
  subOf(h: Held, product: Product, now: number): HeldSub | null {
    let hs = h.subs[product];
    if (hs === undefined) {
      const sub = this.#t.subs.get([h.id, product]);
      h.subs[product] = hs = sub ? { sub, ...periodOf(sub.since, now) } : null;
    } else if (hs !== null && !(hs.start <= now && now < hs.end)) {
      Object.assign(hs, periodOf(hs.sub.since, now));
    }
    return hs;
  }

  /**
   * The state a change is computed from: a serving process's in memory (the held record,
   * loaded once), otherwise read anew.
   */
  workingOf(h: Held): Working | undefined {
    if (h.state) return h as Working;
    if (h.id !== OPERATOR && !this.#t.accounts.get(h.id)) return undefined;
    const { state, pos } = this.read(h.id);
    if (!this.serving) return { state, pos, pending: 0 };
    h.state = state;
    h.pos = pos;
    return h as Working;
  }

  /** An account's state from LMDB: as folded in the view, plus its journal entries since; and the position it is at. */
  read(id: string): { state: AccountState; pos: number } {
    const head = headOf(this.#t);
    const s = this.#view.stateOf(this.#t, id);
    const state: AccountState = { lots: s.lots, seq: s.seq, usage: s.usage };
    for (const { pos, entry } of this.tailOf(id, head.pos)) if (pos > s.pos) applyEntry(state, entry);
    return { state, pos: head.pos };
  }

  /** An account's journal entries past the view's fold, up to `head`, oldest first. */
  *tailOf(id: string, head = headOf(this.#t).pos): Generator<{ pos: number; entry: JournalEntry }> {
    const folded = this.#view.folded();
    if (head > this.#tailTo) {
      this.pruneTail(folded);
      for (const { pos, entry } of journalAfter(this.#t, Math.max(this.#tailTo, folded))) {
        if (pos > head) break;
        addTail(this.held(entry.account), pos);
      }
      this.#tailTo = head;
    }
    const at = this.#held.get(id)?.tail;
    if (!at) return;
    for (const pos of at) if (pos > folded && pos <= head) for (const entry of this.#t.journal.get(pos) ?? []) if (entry.account === id) yield { pos, entry };
  }

  /**
   * A record this process appended landed at `pos` (`applied`: the newest record applied before
   * it): its entries are in the working states already, and go into the accounts' tail
   * positions (through the batch's records: no lookup).
   */
  landed(pos: number, applied: number, held: readonly Held[]): void {
    if (this.#tailTo !== applied) return;
    for (const h of held) addTail(h, pos);
    this.#tailTo = pos;
  }

  /**
   * Counts a record another process appended in the working states and the tail positions
   * (`applied`: as `landed`). `skip`: an account whose working state must not take it (cluster
   * mode: it has a record in flight, which settles its state).
   */
  apply(pos: number, entries: JournalEntry[], applied: number, skip?: (account: string, seq: number) => boolean): void {
    // The records go into the tail positions as they are applied, so a state read later takes
    // them from there, not from a scan of the journal.
    const index = this.#tailTo === applied;
    for (const e of entries) {
      const h = index ? this.held(e.account) : this.#held.get(e.account);
      if (!h) continue;
      // A state read from LMDB after this record was written has it already; one with changes
      // in flight is read again after the catch-up.
      // By seq too: in cluster mode a record this node appended reaches the journal after its state counted it.
      if (h.state && !skip?.(e.account, e.seq) && pos > h.pos && h.pending === 0 && e.seq > h.state.seq) applyEntry(h.state, e);
      if (e.kind === 'subscribe') h.subs = {};
      if (index) addTail(h, pos);
    }
    for (const e of entries) {
      const h = this.#held.get(e.account);
      if (h?.state && pos > h.pos) h.pos = pos;
    }
    if (index) this.#tailTo = pos;
  }

  /** Reads the accounts with changes in flight again from LMDB (after a conflict, which drops those changes). */
  rereadInFlight(): void {
    for (const h of this.#held.values()) {
      if (h.pending === 0 || !h.state) continue;
      const read = this.read(h.id);
      h.state = read.state;
      h.pos = read.pos;
    }
  }

  /**
   * Forgets every working state, subscription and tail position (a commit failed: they may
   * count a record that never landed): each is read again from LMDB when next needed.
   */
  dropStates(): void {
    this.#tailTo = this.#view.folded();
    for (const h of this.#held.values()) {
      h.state = null;
      h.subs = {};
      h.tail = null;
    }
  }

  /** Drops the tail index's positions the view has folded (they are read from the view now). */
  pruneTail(folded: number): void {
    for (const h of this.#held.values()) {
      const at = h.tail;
      if (!at) continue;
      let k = 0;
      while (k < at.length && at[k] <= folded) k++;
      if (k === at.length) h.tail = null;
      else if (k > 0) at.splice(0, k);
    }
  }

  /**
   * Past `max` held records, forgets the idle accounts' (nothing in flight, rate windows
   * empty): their states and subscriptions are read again when next needed. A record whose
   * tail positions are still needed keeps them.
   */
  forgetIdle(): void {
    if (this.#held.size <= this.max) return;
    const now = this.clock();
    for (const [id, h] of this.#held) {
      if (h.pending > 0 || (h.windows && !h.windows.idle(now))) continue;
      h.state = null;
      h.subs = {};
      if (h.tail) continue;
      h.dropped = true;
      this.#held.delete(id);
    }
  }
}
