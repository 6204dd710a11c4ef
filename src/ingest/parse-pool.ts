/**
 * Where the poller parses feeds and extracts pages: a pool of INGEST_PARSE_THREADS worker
 * threads (started on first use, idle ones stopped), or, with 0 threads, inline on the event
 * loop. Either way a FeedError reaches the caller as a FeedError, and extraction never throws.
 * The parsers (feedsmith, linkedom, Readability) load in the workers, or here on the first
 * inline parse: never at start-up.
 */
import { Piscina } from 'piscina';
import { workerFile } from '../worker-file.js';
import type { ExtractedArticle } from './extract.js';
import type { ParsedFeed } from './feed.js';
import { FeedError } from './feed-error.js';
import type { IngestParseOutcome, IngestParseTask } from './parse-worker.js';

const IDLE_MS = 30_000;

export class IngestParsePool {
  readonly #pool: Piscina | null;

  constructor(threads: number) {
    this.#pool = threads > 0 ? new Piscina({ ...workerFile(import.meta.url, 'parse-worker'), minThreads: 0, maxThreads: threads, idleTimeout: IDLE_MS }) : null;
  }

  /** A fetched article page → its headline, text and dates (extract.ts). */
  async page(body: Uint8Array, contentType: string | null, url: string): Promise<ExtractedArticle> {
    if (!this.#pool) return (await import('./extract.js')).extractPage(body, contentType, url);
    return (await this.#run({ kind: 'page', body, contentType, url })) as ExtractedArticle;
  }

  /** A fetched feed → its items (feed.ts); throws FeedError as parseFeed does. */
  async feed(body: Uint8Array, opts: { url: string; contentType?: string | null; now: number }): Promise<ParsedFeed> {
    if (!this.#pool) return (await import('./feed.js')).parseFeed(body, opts);
    return (await this.#run({ kind: 'feed', body, contentType: opts.contentType ?? null, url: opts.url, now: opts.now })) as ParsedFeed;
  }

  async #run(task: IngestParseTask): Promise<ExtractedArticle | ParsedFeed> {
    const out: IngestParseOutcome = await this.#pool!.run(task);
    if (out.ok) return out.value;
    throw out.feedError ? new FeedError(out.message) : new Error(out.message);
  }

  async close(): Promise<void> {
    await this.#pool?.destroy();
  }
}
