/**
 * Where billing lives in LMDB: the journal, the ledger of record, in the store (DATA_DIR/lmdb),
 * and the per-account view folded from it in an environment of its own (DATA_DIR/ledger), so
 * that folding never holds the store's write lock, which every charge's commit needs.
 *
 * DATA_DIR/lmdb (the source of truth):
 *   accounts       id → AccountRecord                  (the built-in `operator` account is implicit)
 *   subs           [account id, product] → Subscription
 *   billingJournal position → JournalEntry[]           every ledger entry, a record per commit, kept
 *   billingHead    'head' → position of the newest record; its version, a token drawn for that record
 *   ledger, accountState                               the ledger and states of the first layout:
 *                                                      read as each account's history before its
 *                                                      first journal entry, never written
 * DATA_DIR/ledger (derived: rebuilt from the journal when missing):
 *   entries        [account id, seq] → [position, index, position, index, …]: where in the journal
 *                                                      the account's entries from that seq on are,
 *                                                      a row per account per fold (at most
 *                                                      ENTRIES_PER_ROW entries)
 *   states         id → FoldedState                    an account's state up to journal position `pos`
 *   meta           'folded' → position                 the journal is folded up to here
 */
import fs from 'node:fs';
import path from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { Store } from '../store/index.js';
import { journalEncoder } from './journal-codec.js';
import { applyEntry, emptyState, type AccountState, type JournalEntry, type LedgerEntry } from './ledger.js';
import type { Plan, Product } from './products.js';

/** The built-in account of the service's own keys: no wallet and no plans, its calls recorded at price 0. */
export const OPERATOR = 'operator';

export interface AccountRecord {
  id: string;
  name: string | null;
  /** Unix ms. Credit periods (what `credits grant` lasts) are months from here. */
  createdAt: number;
}

export interface Subscription {
  product: Product;
  plan: Plan;
  /** Unix ms the plan started: its periods are months from here. */
  since: number;
}

/** A state as folded: up to journal position `pos`. */
export interface FoldedState extends AccountState {
  pos: number;
}

export const HEAD = 'head';

/** The billing tables of the store. */
export interface BillingTables {
  store: Store;
  accounts: Database<AccountRecord, string>;
  subs: Database<Subscription, [string, string]>;
  journal: Database<JournalEntry[], number>;
  heads: Database<number, string>;
  legacyLedger: Database<LedgerEntry, [string, number]>;
  legacyStates: Database<AccountState, string>;
}

export function openBillingTables(store: Store): BillingTables {
  const { root } = store;
  return {
    store,
    accounts: root.openDB({ name: 'accounts' }),
    subs: root.openDB({ name: 'subs' }),
    // lmdb takes a database's own encoder (open.js), though its types list one for the root only.
    journal: root.openDB({ name: 'billingJournal', encoder: journalEncoder } as { name: string }),
    heads: root.openDB({ name: 'billingHead', useVersions: true }),
    legacyLedger: root.openDB({ name: 'ledger' }),
    legacyStates: root.openDB({ name: 'accountState', useVersions: true }),
  };
}

/**
 * Entries of one account in one row of the view at most. With a row per entry, the puts were
 * half of a fold's ~3 µs an entry; a row per account per fold is a few thousand puts a fold.
 */
const ENTRIES_PER_ROW = 4096;

/** A row of the view's `entries`: an account's entries from `seq` on, as [position, index] pairs. */
interface Row {
  account: string;
  seq: number;
  at: number[];
}

/** The per-account view of the journal, in DATA_DIR/ledger beside the store. */
export class LedgerView {
  readonly root: RootDatabase;
  readonly entries: Database<number[], [string, number]>;
  readonly states: Database<FoldedState, string>;
  readonly #meta: Database<number, string>;

  constructor(readonly path: string) {
    fs.mkdirSync(path, { recursive: true });
    this.root = open({ path, maxDbs: 4, mapSize: 2 ** 34 });
    this.entries = this.root.openDB({ name: 'entries' });
    this.states = this.root.openDB({ name: 'states' });
    this.#meta = this.root.openDB({ name: 'meta' });
  }

  /** DATA_DIR/ledger for the store at DATA_DIR/lmdb. */
  static beside(store: Store): string {
    return path.join(path.dirname(store.path), 'ledger');
  }

  /** The journal is folded up to this position. */
  folded(): number {
    return this.#meta.get('folded') ?? 0;
  }

  /** The state of `id` as folded, on its first-layout state (or nothing) when the view has none yet. */
  stateOf(t: BillingTables, id: string): FoldedState {
    const s = this.states.get(id);
    if (s) return s;
    const legacy = t.legacyStates.get(id);
    return legacy ? { lots: legacy.lots, seq: legacy.seq, usage: legacy.usage, pos: 0 } : { ...emptyState(), pos: 0 };
  }

  /**
   * Folds journal records past `folded()` (at least one, then up to `max` entries) into the view,
   * in one transaction of the view's own environment: the journal entries' positions by account
   * and seq, and the states they change. Records are read from the store after everything
   * committed so far; the view's lock keeps two folds from overlapping.
   */
  fold(t: BillingTables, max: number): { entries: number; folded: number } {
    return this.root.transactionSync(() => {
      const from = this.folded();
      t.store.refresh();
      const states = new Map<string, FoldedState>();
      const rows: Row[] = [];
      const current = new Map<string, Row>();
      let moved = 0;
      let last = from;
      for (const { key: pos, value } of t.journal.getRange({ start: from + 1, end: Number.MAX_SAFE_INTEGER })) {
        if (moved >= max) break;
        for (let i = 0; i < value.length; i++) {
          const e = value[i];
          let s = states.get(e.account);
          if (!s) states.set(e.account, (s = this.stateOf(t, e.account)));
          if (pos > s.pos) applyEntry(s, e);
          let row = current.get(e.account);
          if (!row || row.at.length >= 2 * ENTRIES_PER_ROW) {
            rows.push((row = { account: e.account, seq: e.seq, at: [] }));
            current.set(e.account, row);
          }
          row.at.push(pos, i);
          moved++;
        }
        last = pos;
      }
      if (last === from) return { entries: 0, folded: from };
      // In key order: each put lands beside the last one's pages.
      rows.sort((a, b) => (a.account < b.account ? -1 : a.account > b.account ? 1 : a.seq - b.seq));
      for (const { account, seq, at } of rows) this.entries.putSync([account, seq], at);
      for (const [id, s] of states) this.states.putSync(id, { lots: s.lots, seq: s.seq, usage: s.usage, pos: last });
      this.#meta.putSync('folded', last);
      return { entries: moved, folded: last };
    });
  }

  async close(): Promise<void> {
    await this.root.close();
  }
}

/** The newest journal record, as the head says: its position and token (the head's version). */
export function headOf(t: BillingTables): { pos: number; token: number } {
  const e = t.heads.getEntry(HEAD);
  return { pos: (e?.value as number | undefined) ?? 0, token: e?.version ?? 0 };
}

/** The position of the newest journal record (0: none). */
export function lastRecord(t: BillingTables): number {
  for (const key of t.journal.getKeys({ reverse: true, limit: 1 })) return key;
  return 0;
}

/** Journal entries past `after`, oldest first, with the position of their record. */
export function* journalAfter(t: BillingTables, after: number): Generator<{ pos: number; entry: JournalEntry }> {
  for (const { key, value } of t.journal.getRange({ start: after + 1, end: Number.MAX_SAFE_INTEGER })) {
    for (const entry of value) yield { pos: key, entry };
  }
}
