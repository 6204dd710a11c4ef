/**
 * The reads of the jobs corpus, over any connection to the keyword index: the reader threads'
 * read-only ones (read-worker.ts) and, for the market endpoints, the main thread's.
 */
import type Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import { ridRange } from './rid.js';

export interface JobFilter {
  /** FTS5 MATCH expression (q and location), or null for none. */
  match: string | null;
  /** Canonical skill names, all required. */
  skills: string[];
  remote?: boolean;
  since?: number;
  until?: number;
}

export interface JobHit {
  rid: number;
  ord: number;
}

export class JobsQueries {
  readonly #byMatch: Statement;
  readonly #byTime: Statement;
  readonly #times: Statement;
  readonly #co: Statement;

  constructor(db: Database.Database) {
    const filters = `r.rid BETWEEN @lo AND @hi AND r.posted_at BETWEEN @since AND @until
      AND (@remote IS NULL OR r.remote = @remote)
      AND (@nskills = 0 OR (SELECT count(*) FROM job_skills s WHERE s.rid = r.rid AND s.skill IN (SELECT value FROM json_each(@skills))) = @nskills)`;
    this.#byMatch = db.prepare(`SELECT r.rid, r.ord FROM job_fts CROSS JOIN job_rows r ON r.rid = job_fts.rowid
      WHERE job_fts MATCH @match AND job_fts.rowid BETWEEN @lo AND @hi AND ${filters} ORDER BY job_fts.rowid DESC LIMIT @limit`);
    this.#byTime = db.prepare(`SELECT r.rid, r.ord FROM job_rows r WHERE ${filters} ORDER BY r.rid DESC LIMIT @limit`);
    this.#times = db.prepare('SELECT r.posted_at FROM job_skills s JOIN job_rows r ON r.rid = s.rid WHERE s.skill = ? AND r.posted_at BETWEEN ? AND ?').pluck();
    this.#co = db.prepare(`SELECT o.skill AS name, count(*) AS postings FROM job_skills s
      JOIN job_rows r ON r.rid = s.rid JOIN job_skills o ON o.rid = s.rid AND o.skill <> s.skill
      WHERE s.skill = ? AND r.posted_at BETWEEN ? AND ? GROUP BY o.skill ORDER BY postings DESC, o.skill LIMIT ?`);
  }

  /** Postings newest first, after the row `afterRid` when given. */
  search(f: JobFilter, limit: number, afterRid?: number): JobHit[] {
    const { lo, hi } = ridRange(f.since, f.until);
    const params = {
      lo,
      hi: afterRid === undefined ? hi : Math.min(hi, afterRid - 1),
      since: f.since ?? Number.MIN_SAFE_INTEGER,
      until: f.until ?? Number.MAX_SAFE_INTEGER,
      remote: f.remote === undefined ? null : f.remote ? 1 : 0,
      skills: JSON.stringify(f.skills),
      nskills: f.skills.length,
      limit,
    };
    return (f.match === null ? this.#byTime.all(params) : this.#byMatch.all({ ...params, match: f.match })) as JobHit[];
  }

  /** Posting times (Unix seconds) of the postings asking for `skill`. */
  postedTimes(skill: string, since = Number.MIN_SAFE_INTEGER, until = Number.MAX_SAFE_INTEGER): number[] {
    return this.#times.all(skill, since, until) as number[];
  }

  /** The skills most often asked for beside `skill`, with their posting counts. */
  coOccurring(skill: string, since = Number.MIN_SAFE_INTEGER, until = Number.MAX_SAFE_INTEGER, n = 10): { name: string; postings: number }[] {
    return this.#co.all(skill, since, until, n) as { name: string; postings: number }[];
  }
}
