/**
 * The keyword index's writer thread (write-worker.ts): one, so that the server's own catch-ups
 * never wait for each other's write lock, kept until close (its handles are closed there, on it).
 */
import { Piscina } from 'piscina';
import { workerFile } from '../worker-file.js';

export type Corpus = 'news' | 'jobs';

/** A task for the writer thread (write-worker.ts). */
export interface WriteTask {
  /** The store's directory (Store.path). */
  store: string;
  /** The keyword index file. */
  file: string;
  corpus: Corpus;
  /** Records to index at most in this task (a task ends between transactions). */
  budget: number;
  /** Closes this thread's handles instead (before the pool stops). */
  close?: boolean;
}

/** How long a close waits for the writer's task in flight (a batch takes tens of milliseconds). */
const CLOSE_WAIT_MS = 10_000;

export class KeywordWriter {
  #pool: Piscina | null = null;
  readonly #inFlight = new Set<Promise<unknown>>();
  #closed = false;

  constructor(
    /** The store's directory (Store.path). */
    readonly store: string,
    readonly file: string,
  ) {}

  /** Indexes up to `budget` records of `corpus` on the writer thread; resolves with how many. */
  run(corpus: Corpus, budget: number): Promise<number> {
    if (this.#closed) return Promise.resolve(0);
    this.#pool ??= new Piscina({ ...workerFile(import.meta.url, 'write-worker'), minThreads: 0, maxThreads: 1, idleTimeout: Number.POSITIVE_INFINITY });
    const task: WriteTask = { store: this.store, file: this.file, corpus, budget };
    const p = (this.#pool.run(task) as Promise<{ done: number }>).then((r) => r.done);
    this.#inFlight.add(p);
    void p.catch(() => undefined).finally(() => this.#inFlight.delete(p));
    return p;
  }

  /**
   * Lets the task in flight finish (a task ends between transactions), then closes the thread's
   * handles. A task not done within CLOSE_WAIT_MS (a thread that never came up: seen in tests
   * with several services in one process, a thread started just before close) is given up and
   * the thread ended: the index is derived, and SQLite rolls back a transaction cut short.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const settled = Promise.all([...this.#inFlight].map((p) => p.catch(() => undefined))).then(() => true);
    const done = await Promise.race([settled, new Promise<false>((r) => setTimeout(() => r(false), CLOSE_WAIT_MS).unref())]);
    const pool = this.#pool;
    this.#pool = null;
    if (pool) {
      if (done && pool.threads.length > 0) await pool.run({ store: this.store, file: this.file, corpus: 'news', budget: 0, close: true } satisfies WriteTask);
      await pool.destroy();
    }
  }
}
