/**
 * Keyword search over the news corpus (GET /v1/news): every revision's headline, snippet and
 * full text in FTS5, read from LMDB in store order and kept in step by `catchUp`.
 *
 * In the server the event loop does neither: searches (`query`) run on the reader threads
 * (read-pool.ts) and catch-ups on the writer thread (write-pool.ts); `fresh` says what a
 * search cannot see yet. The synchronous `catchUp`, `refresh`, `search` and `volume` are for
 * the CLI, the writer thread itself and the market endpoints.
 */
import type { Statement } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { Store } from '../store/index.js';
import { CatchUp } from './catch-up.js';
import type { KeywordDb } from './db.js';
import type { NewsAfter, NewsFilter, NewsHit, NewsSort } from './news-queries.js';
import { nextRid } from './rid.js';
import { indexText } from './text.js';

export type { NewsAfter, NewsFilter, NewsHit, NewsSort } from './news-queries.js';

const BATCH = 500;
/** Revisions a step indexes on the event loop (no writer thread): milliseconds, so requests keep being served. */
const INLINE_STEP = 100;

export class NewsIndex {
  readonly #insertRow: Statement;
  readonly #insertFts: Statement;
  readonly #maxRid: Statement;
  readonly #catchUp: CatchUp;
  #closed = false;

  constructor(
    readonly kdb: KeywordDb,
    readonly store: Store,
    readonly log?: Logger,
  ) {
    const db = kdb.db;
    this.#insertRow = db.prepare('INSERT INTO news_rows (rid, ord, event_time, source_id, first) VALUES (?, ?, ?, ?, ?)');
    this.#insertFts = db.prepare('INSERT INTO news_fts (rowid, title, body, text) VALUES (?, ?, ?, ?)');
    this.#maxRid = db.prepare('SELECT max(rid) AS m FROM news_rows WHERE rid >= ? AND rid < ?').pluck();
    const writer = kdb.writer;
    this.#catchUp = new CatchUp({
      noun: 'revisions',
      behind: () => this.behind(),
      step: writer ? (n) => writer.run('news', n) : async (n) => this.catchUp(n),
      stepSize: writer ? BATCH : INLINE_STEP,
      yields: !writer,
      log,
    });
  }

  /** Revisions LMDB holds that the index has not read yet. */
  behind(): number {
    return Math.max(0, this.store.nextOrd() - this.kdb.indexed('news'));
  }

  /**
   * Indexes up to `budget` of LMDB's new revisions now, on this thread, in transactions of
   * BATCH. Another thread or process indexing meanwhile is harmless: each batch starts where
   * the index says it is.
   */
  catchUp(budget = Infinity): number {
    let done = 0;
    const to = this.store.nextOrd();
    while (done < budget && !this.#closed) {
      const n = this.kdb.db
        .transaction(() => {
          const from = this.kdb.indexed('news');
          const end = Math.min(to, from + BATCH, from + (budget - done));
          for (let ord = from; ord < end; ord++) this.#add(ord);
          if (end > from) this.kdb.setIndexed('news', end);
          return end - from;
        })
        .immediate();
      if (n === 0) break;
      done += n;
    }
    return done;
  }

  #add(ord: number): void {
    const rev = this.store.revisions.get(ord);
    if (!rev) throw new Error(`LMDB has no revision ${ord} below nextOrd: the store is damaged`);
    const rid = nextRid(this.#maxRid, rev.eventTime);
    this.#insertRow.run(rid, ord, rev.eventTime, rev.sourceId, rev.first ? 1 : 0);
    this.#insertFts.run(rid, indexText(rev.title), indexText(rev.body), indexText(this.store.texts.get(ord) ?? ''));
  }

  /**
   * Before a search, off the event loop: a small backlog is indexed first (an import just done
   * is searchable), a large one in the background. Resolves with the revisions the search
   * cannot see (0: none).
   */
  fresh(): Promise<number> {
    return this.#catchUp.fresh();
  }

  /** `fresh` without waiting (after a poll wrote revisions): never holds the caller. */
  catchUpSoon(): void {
    if (!this.#closed) this.#catchUp.fresh().catch(() => undefined);
  }

  /** Indexes the backlog in the background (on the writer thread where there is one), logging progress. */
  startBackground(): void {
    if (!this.#closed) this.#catchUp.start();
  }

  /** Whether a background catch-up is under way. */
  get catchingUp(): boolean {
    return this.#catchUp.background;
  }

  /** One page of hits, newest first or by BM25, read on a reader thread. */
  query(f: NewsFilter, sort: NewsSort, limit: number, after?: NewsAfter): Promise<NewsHit[]> {
    return this.kdb.reads.news(f, sort, limit, after);
  }

  /** `query` on this thread's connection. */
  search(f: NewsFilter, sort: NewsSort, limit: number, after?: NewsAfter): NewsHit[] {
    return this.kdb.readers.news.search(f, sort, limit, after);
  }

  /** Matching rows per UTC day and source, counted on a reader thread. */
  queryVolume(f: NewsFilter): Promise<{ day: string; sourceId: number; n: number }[]> {
    return this.kdb.reads.newsVolume(f);
  }

  /** `queryVolume` on this thread's connection. */
  volume(f: NewsFilter): { day: string; sourceId: number; n: number }[] {
    return this.kdb.readers.news.volume(f);
  }

  close(): void {
    this.#closed = true;
    this.#catchUp.close();
  }
}
