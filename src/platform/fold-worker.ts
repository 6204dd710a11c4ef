/**
 * A Piscina worker that folds the billing journal into the per-account view (journal.ts) off
 * the event loop: a fold decodes every entry it moves and rewrites the states they change,
 * which on the event loop cost more than the charges themselves (bench/metering.ts). lmdb-js
 * shares an environment between the threads of a process, so these are the same store and
 * view, not copies; the fold's transaction and its fsync run on this thread, under the view's
 * lock, never the store's.
 */
import { Store } from '../store/index.js';
import { LedgerView, openBillingTables, type BillingTables } from './journal.js';

export interface FoldTask {
  /** The store's directory (Store.path); the view is beside it. */
  store: string;
  max: number;
  /** Closes this thread's handles instead (before the pool stops). */
  close?: boolean;
}

let opened: { path: string; tables: BillingTables; view: LedgerView } | null = null;

export default async function fold({ store, max, close }: FoldTask): Promise<{ entries: number; folded: number }> {
  if (close) {
    await opened?.view.close();
    await opened?.tables.store.close();
    opened = null;
    return { entries: 0, folded: 0 };
  }
  if (opened?.path !== store) {
    const s = new Store(store);
    opened = { path: store, tables: openBillingTables(s), view: new LedgerView(LedgerView.beside(s)) };
  }
  try {
    return opened.view.fold(opened.tables, max);
  } finally {
    // Let go of the snapshots read: an idle thread's read transaction would keep LMDB from
    // reusing every page freed after it, and the store would grow by each commit's pages.
    opened.tables.store.refresh();
    opened.view.root.resetReadTxn();
  }
}
