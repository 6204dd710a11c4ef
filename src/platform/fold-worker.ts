/**
 * A Piscina worker that folds the billing journal into the per-account view (journal.ts) off
 * the event loop: a fold decodes every entry it moves and rewrites the states they change,
 * which on the event loop cost more than the charges themselves (bench/metering.ts). lmdb-js
 * shares an environment between the threads of a process, so these are the same store and
 * view, not copies; the fold's transaction and its fsync run on this thread, under the view's
 * lock, never the store's.
 */
import { Store } from '../store/index.js';
import { journalAfter, LedgerView, openBillingTables, type BillingTables } from './journal.js';
import type { LedgerEntry } from './ledger.js';
import { ledgerOf } from './statements.js';

export interface FoldTask {
  /** The store's directory (Store.path); the view is beside it. */
  store: string;
  max: number;
  /** Closes this thread's handles instead (before the pool stops). */
  close?: boolean;
}

/**
 * Reads an account's ledger here instead (Billing.ledger): an account's whole ledger may be
 * millions of entries, too many to read on the event loop. The view as folded, plus the journal
 * after the fold, both read in this thread's one snapshot, so nothing is missed or counted twice.
 */
export interface LedgerTask {
  store: string;
  ledger: { account: string; since: number; until: number };
}

let opened: { path: string; tables: BillingTables; view: LedgerView } | null = null;

export default async function fold(task: FoldTask | LedgerTask): Promise<{ entries: number; folded: number } | LedgerEntry[]> {
  if ('close' in task && task.close) {
    await opened?.view.close();
    await opened?.tables.store.close();
    opened = null;
    return { entries: 0, folded: 0 };
  }
  const { store } = task;
  if (opened?.path !== store) {
    const s = new Store(store);
    opened = { path: store, tables: openBillingTables(s), view: new LedgerView(LedgerView.beside(s)) };
  }
  const { tables, view } = opened;
  try {
    if ('ledger' in task) {
      const { account, since, until } = task.ledger;
      const folded = view.folded();
      const tail = function* () {
        for (const x of journalAfter(tables, folded)) if (x.entry.account === account) yield x;
      };
      return ledgerOf(tables, view, account, tail, since, until);
    }
    return view.fold(tables, task.max);
  } finally {
    // Let go of the snapshots read: an idle thread's read transaction would keep LMDB from
    // reusing every page freed after it, and the store would grow by each commit's pages.
    opened.tables.store.refresh();
    opened.view.root.resetReadTxn();
  }
}
