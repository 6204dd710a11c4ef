/**
 * The reads of the news corpus, over any connection to the keyword index: the reader threads'
 * read-only ones (read-worker.ts) and, for the market endpoints, the main thread's.
 *
 * Rows come back newest-first by walking FTS5's doclists in rowid order (a rowid is the
 * event time, shifted, plus a slot), so a time-ordered page stops after `limit` hits however
 * many documents match; `sort=relevance` ranks every match by BM25 (headline weighted over
 * snippet over text), which costs in proportion to the matches.
 */
import type Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import { ridRange } from './rid.js';

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

export type NewsSort = 'time' | 'relevance';

/** Headline, snippet, text. */
const WEIGHTS = '4.0, 2.0, 1.0';

export class NewsQueries {
  readonly #byTime: Statement;
  readonly #byScore: Statement;
  readonly #volume: Statement;

  constructor(db: Database.Database) {
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

  /** One page of hits, newest first or by BM25; up to `limit` rows. */
  search(f: NewsFilter, sort: NewsSort, limit: number, after?: NewsAfter): NewsHit[] {
    const params = { ...paramsOf(f), limit };
    if (sort === 'time' && after) params.hi = Math.min(params.hi, after.rid - 1);
    if (sort === 'time') return this.#byTime.all(params) as NewsHit[];
    const rows = this.#byScore.all({ ...params, score: after ? -after.score! : null, after: after?.rid ?? 0 }) as { rid: number; ord: number; bm: number }[];
    return rows.map((r) => ({ rid: r.rid, ord: r.ord, score: -r.bm }));
  }

  /** Matching rows per UTC day and source. */
  volume(f: NewsFilter): { day: string; sourceId: number; n: number }[] {
    return this.#volume.all(paramsOf(f)) as { day: string; sourceId: number; n: number }[];
  }
}

function paramsOf(f: NewsFilter) {
  return {
    match: f.match,
    ...ridRange(f.since, f.until),
    first: f.includeEdits ? 0 : 1,
    since: f.since ?? Number.MIN_SAFE_INTEGER,
    until: f.until ?? Number.MAX_SAFE_INTEGER,
    sources: f.sources ? JSON.stringify([...f.sources]) : null,
  };
}
