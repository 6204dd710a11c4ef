/**
 * Where keyword reads run: a pool of KEYWORD_READ_THREADS worker threads, each with a
 * read-only connection (started on first use, idle ones stopped), or, with 0 threads, on the
 * event loop over the main connection. Either way an AppError reaches the caller as itself.
 */
import { Piscina } from 'piscina';
import { workerFile } from '../worker-file.js';
import type { JobFilter, JobHit } from './jobs-queries.js';
import type { NewsAfter, NewsFilter, NewsHit, NewsSort } from './news-queries.js';
import type { WorkerReadTask } from './read-worker.js';
import { runRead, uncarry, type Readers, type ReadOutcome, type ReadTask } from './reads.js';

const IDLE_MS = 30_000;

export class KeywordReads {
  readonly #pool: Piscina | null;
  /** The thread that ran the last read (0: the event loop), for tests to check where reads go. */
  lastThread = -1;

  constructor(
    readonly file: string,
    threads: number,
    /** The main connection's statements, for threads = 0. */
    readonly inline: () => Readers,
  ) {
    this.#pool = threads > 0 ? new Piscina({ ...workerFile(import.meta.url, 'read-worker'), minThreads: 0, maxThreads: threads, idleTimeout: IDLE_MS }) : null;
  }

  news(filter: NewsFilter, sort: NewsSort, limit: number, after?: NewsAfter): Promise<NewsHit[]> {
    return this.#run({ op: 'news', filter, sort, limit, after }) as Promise<NewsHit[]>;
  }

  newsVolume(filter: NewsFilter): Promise<{ day: string; sourceId: number; n: number }[]> {
    return this.#run({ op: 'news-volume', filter }) as Promise<{ day: string; sourceId: number; n: number }[]>;
  }

  jobs(filter: JobFilter, limit: number, afterRid?: number): Promise<JobHit[]> {
    return this.#run({ op: 'jobs', filter, limit, afterRid }) as Promise<JobHit[]>;
  }

  skillTimes(skill: string, since?: number, until?: number): Promise<number[]> {
    return this.#run({ op: 'skill-times', skill, since, until }) as Promise<number[]>;
  }

  skillCoOccurring(skill: string, since?: number, until?: number, n?: number): Promise<{ name: string; postings: number }[]> {
    return this.#run({ op: 'skill-co', skill, since, until, n }) as Promise<{ name: string; postings: number }[]>;
  }

  async #run(task: ReadTask): Promise<unknown[]> {
    if (!this.#pool) {
      this.lastThread = 0;
      return runRead(this.inline(), task);
    }
    const out: ReadOutcome = await this.#pool.run({ ...task, file: this.file } satisfies WorkerReadTask);
    if (!out.ok) throw uncarry(out.error);
    this.lastThread = out.threadId;
    return out.rows;
  }

  async close(): Promise<void> {
    await this.#pool?.destroy();
  }
}
