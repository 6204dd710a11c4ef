/**
 * Keyword search over the news corpus (GET /v1/news): every revision's headline, snippet and
 * full text in FTS5, read from LMDB in store order and kept in step by `catchUp`.
 *
 * Rows come back newest-first by walking FTS5's doclists in rowid order (a rowid is the
 * event time, shifted, plus a slot), so a time-ordered page stops after `limit` hits however
 * many documents match; `sort=relevance` ranks every match by BM25 (headline weighted over
 * snippet over text).
 */
import type { Statement } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { Store } from '../store/index.js';
import { nextRid, ridRange, type KeywordDb } from './db.js';
import { indexText } from './text.js';

export interface NewsFilter {
  /** FTS5 MATCH expression (query.ts). */
  match: string;
  since?: number;
  until?: number;
  includeEdits: boolean;
  /** Source ids allowed, or null for all. */
  sources: Set<number> | null;
}

/** A position to continue after: `rid` for time order, `score` and `rid` for relevance. */
export interface NewsAfter {
  rid: number;
  score?: number;
}

export interface NewsHit {
  rid: number;
  ord: number;
  /** BM25 turned positive (higher is better); only under relevance. */
  score?: number;
}

/** Revisions a request indexes itself before answering; a larger backlog goes to the background. */
const SYNC_BUDGET = 2_000;
const BATCH = 500;
/** Revisions a background step indexes: tens of milliseconds, so requests keep being served meanwhile. */
const BACKGROUND_STEP = 100;
/** Headline, snippet, text. */
const WEIGHTS = '4.0, 2.0, 1.0';

export class NewsIndex {
  readonly #insertRow: Statement;
  readonly #insertFts: Statement;
  readonly #maxRid: Statement;
  readonly #byTime: Statement;
  readonly #byScore: Statement;
  readonly #volume: Statement;
  #background: NodeJS.Immediate | null = null;
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
    const filters = `news_fts MATCH @match AND news_fts.rowid BETWEEN @lo AND @hi
      AND r.first >= @first AND r.event_time BETWEEN @since AND @until
      AND (@sources IS NULL OR r.source_id IN (SELECT value FROM json_each(@sources)))`;
    this.#byTime = db.prepare(`SELECT r.rid, r.ord FROM news_fts CROSS JOIN news_rows r ON r.rid = news_fts.rowid
      WHERE ${filters} ORDER BY news_fts.rowid DESC LIMIT @limit`);
    this.#byScore = db.prepare(`SELECT r.rid, r.ord, bm25(news_fts, ${WEIGHTS}) AS bm FROM news_fts CROSS JOIN news_rows r ON r.rid = news_fts.rowid
      WHERE ${filters} AND (@score IS NULL OR bm25(news_fts, ${WEIGHTS}) > @score OR (bm25(news_fts, ${WEIGHTS}) = @score AND r.rid < @after))
      ORDER BY bm, r.rid DESC LIMIT @limit`);
    this.#volume = db.prepare(`SELECT date(r.event_time, 'unixepoch') AS day, r.source_id AS sourceId, count(*) AS n
      FROM news_fts CROSS JOIN news_rows r ON r.rid = news_fts.rowid WHERE ${filters} GROUP BY day, r.source_id ORDER BY day`);
  }

  /** Revisions LMDB holds that the index has not read yet. */
  behind(): number {
    return Math.max(0, this.store.nextOrd() - this.kdb.indexed('news'));
  }

  /**
   * Indexes up to `budget` of LMDB's new revisions now, in transactions of BATCH. Another
   * process indexing meanwhile is harmless: each batch starts where the index says it is.
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
   * Before a search: small backlogs are indexed at once (an import just done is searchable);
   * a large one (a big import beside the server) is indexed in the background meanwhile.
   */
  refresh(): void {
    const behind = this.behind();
    if (behind === 0) return;
    if (behind <= SYNC_BUDGET) this.catchUp(SYNC_BUDGET);
    else this.startBackground();
  }

  /** Indexes the backlog a batch per event-loop turn, logging progress. */
  startBackground(): void {
    if (this.#background || this.#closed) return;
    const total = this.behind();
    if (total === 0) return;
    this.log?.info(`keyword index: indexing ${total} revisions from LMDB in the background`);
    let done = 0;
    let reported = 0;
    const step = () => {
      this.#background = null;
      if (this.#closed) return;
      const n = this.catchUp(BACKGROUND_STEP);
      done += n;
      if (done - reported >= 10_000) {
        reported = done;
        this.log?.info(`keyword index: ${done} of ${total} revisions indexed`);
      }
      if (n > 0 && this.behind() > 0) this.#background = setImmediate(step);
      else this.log?.info(`keyword index: caught up (${done} revisions)`);
    };
    this.#background = setImmediate(step);
  }

  /** One page of hits, newest first or by BM25; up to `limit` rows. */
  search(f: NewsFilter, sort: 'time' | 'relevance', limit: number, after?: NewsAfter): NewsHit[] {
    const params = { ...this.#params(f), limit };
    if (sort === 'time' && after) params.hi = Math.min(params.hi, after.rid - 1);
    if (sort === 'time') return this.#byTime.all(params) as NewsHit[];
    const rows = this.#byScore.all({ ...params, score: after ? -after.score! : null, after: after?.rid ?? 0 }) as { rid: number; ord: number; bm: number }[];
    return rows.map((r) => ({ rid: r.rid, ord: r.ord, score: -r.bm }));
  }

  /** Matching rows per UTC day and source. */
  volume(f: NewsFilter): { day: string; sourceId: number; n: number }[] {
    return this.#volume.all(this.#params(f)) as { day: string; sourceId: number; n: number }[];
  }

  #params(f: NewsFilter) {
    return {
      match: f.match,
      ...ridRange(f.since, f.until),
      first: f.includeEdits ? 0 : 1,
      since: f.since ?? Number.MIN_SAFE_INTEGER,
      until: f.until ?? Number.MAX_SAFE_INTEGER,
      sources: f.sources ? JSON.stringify([...f.sources]) : null,
    };
  }

  close(): void {
    this.#closed = true;
    if (this.#background) clearImmediate(this.#background);
    this.#background = null;
  }
}
