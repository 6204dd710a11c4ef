/**
 * Where live parsers run: a pool of LIVE_PARSE_THREADS worker threads (started on first use,
 * idle ones stopped), or, with 0 threads, inline on the event loop. Either way a parser's
 * ScrapeError reaches the caller as a ScrapeError. The parsers (linkedom, libphonenumber) load
 * in the workers, or here on the first inline parse: never at start-up.
 */
import { Piscina } from 'piscina';
import { workerFile } from '../worker-file.js';
import { ScrapeError } from './scrape-error.js';
import type { ParseOutcome, ParseTask } from './parse-worker.js';
import type { ParserArgs, ParserName, ParserResult } from './parsers.js';

const IDLE_MS = 30_000;

export class ParsePool {
  readonly #pool: Piscina | null;

  constructor(threads: number) {
    this.#pool = threads > 0 ? new Piscina({ ...workerFile(import.meta.url, 'parse-worker'), minThreads: 0, maxThreads: threads, idleTimeout: IDLE_MS }) : null;
  }

  async run<K extends ParserName>(name: K, ...args: ParserArgs<K>): Promise<ParserResult<K>> {
    if (!this.#pool) {
      const { PARSERS } = await import('./parsers.js');
      return (PARSERS[name] as unknown as (...a: ParserArgs<K>) => ParserResult<K>)(...args);
    }
    const out: ParseOutcome = await this.#pool.run({ name, args } satisfies ParseTask);
    if (out.ok) return out.value as ParserResult<K>;
    if (out.scrape) throw new ScrapeError(out.message);
    throw new Error(out.message);
  }

  async close(): Promise<void> {
    await this.#pool?.destroy();
  }
}
