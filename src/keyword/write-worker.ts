/**
 * A Piscina worker (one thread) that catches the keyword index up with LMDB off the event loop:
 * indexing tokenizes every headline, snippet and text, tens of milliseconds a batch, and waits
 * for SQLite's write lock while another process (an import beside the server) holds it.
 * lmdb-js shares an environment between the threads of a process, so this is the server's
 * store, not a copy; the index connection is this thread's own.
 */
import { threadId } from 'node:worker_threads';
import { JobStore } from '../jobs/index.js';
import { Store } from '../store/index.js';
import { KeywordDb } from './db.js';
import { JobsIndex } from './jobs.js';
import { NewsIndex } from './news.js';
import type { WriteTask } from './write-pool.js';

let opened: { key: string; store: Store; kdb: KeywordDb; news: NewsIndex; jobs: JobsIndex } | null = null;

export default async function write(task: WriteTask): Promise<{ done: number; threadId: number }> {
  if (task.close) {
    await opened?.kdb.close();
    await opened?.store.close();
    opened = null;
    return { done: 0, threadId };
  }
  const key = `${task.store}\0${task.file}`;
  if (opened?.key !== key) {
    const store = new Store(task.store);
    const kdb = new KeywordDb(task.file, store.storeId());
    opened = { key, store, kdb, news: new NewsIndex(kdb, store), jobs: new JobsIndex(kdb, new JobStore(store)) };
  }
  // Read what was committed since the last task (by the main thread or another process).
  opened.store.refresh();
  try {
    return { done: task.corpus === 'news' ? opened.news.catchUp(task.budget) : opened.jobs.catchUp(task.budget), threadId };
  } finally {
    // An idle thread's read snapshot would keep LMDB from reusing the pages freed after it.
    opened.store.refresh();
  }
}
