/**
 * Keyword search over job postings (GET /v1/jobs, the market endpoints): title, company,
 * location, skills and description in FTS5, plus each posting's vocabulary skills in
 * `job_skills`, read from LMDB in ord order by `catchUp`. A new version of a posting replaces
 * the old one's rows. Rows are ordered newest-posted first by rowid, as news rows are.
 */
import type { Statement } from 'better-sqlite3';
import type { JobRecord, JobStore } from '../jobs/store.js';
import { nextRid, ridRange, type KeywordDb } from './db.js';
import { indexText } from './text.js';

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

const BATCH = 500;

export class JobsIndex {
  readonly #insertRow: Statement;
  readonly #insertFts: Statement;
  readonly #insertSkill: Statement;
  readonly #ridOf: Statement;
  readonly #maxRid: Statement;
  readonly #drop: Statement[];
  readonly #byMatch: Statement;
  readonly #byTime: Statement;
  readonly #times: Statement;
  readonly #co: Statement;

  constructor(
    readonly kdb: KeywordDb,
    readonly jobs: JobStore,
  ) {
    const db = kdb.db;
    this.#insertRow = db.prepare('INSERT INTO job_rows (rid, ord, posted_at, remote) VALUES (?, ?, ?, ?)');
    this.#insertFts = db.prepare('INSERT INTO job_fts (rowid, title, company, location, skills, description) VALUES (?, ?, ?, ?, ?, ?)');
    this.#insertSkill = db.prepare('INSERT OR IGNORE INTO job_skills (skill, rid) VALUES (?, ?)');
    this.#ridOf = db.prepare('SELECT rid FROM job_rows WHERE ord = ?').pluck();
    this.#maxRid = db.prepare('SELECT max(rid) FROM job_rows WHERE rid >= ? AND rid < ?').pluck();
    this.#drop = ['DELETE FROM job_rows WHERE rid = ?', 'DELETE FROM job_skills WHERE rid = ?', 'DELETE FROM job_fts WHERE rowid = ?'].map((s) => db.prepare(s));
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

  /** Posting times (Unix seconds) of the postings asking for `skill`. */
  postedTimes(skill: string, since = Number.MIN_SAFE_INTEGER, until = Number.MAX_SAFE_INTEGER): number[] {
    return this.#times.all(skill, since, until) as number[];
  }

  /** The skills most often asked for beside `skill`, with their posting counts. */
  coOccurring(skill: string, since = Number.MIN_SAFE_INTEGER, until = Number.MAX_SAFE_INTEGER, n = 10): { name: string; postings: number }[] {
    return this.#co.all(skill, since, until, n) as { name: string; postings: number }[];
  }

  behind(): number {
    return Math.max(0, this.jobs.nextOrd() - this.kdb.indexed('jobs'));
  }

  /** Indexes every posting version LMDB holds and the index lacks (in transactions of BATCH). */
  catchUp(): number {
    let done = 0;
    const to = this.jobs.nextOrd();
    for (;;) {
      const n = this.kdb.db
        .transaction(() => {
          const from = this.kdb.indexed('jobs');
          const end = Math.min(to, from + BATCH);
          for (let ord = from; ord < end; ord++) this.#add(this.jobs.get(ord)!);
          if (end > from) this.kdb.setIndexed('jobs', end);
          return end - from;
        })
        .immediate();
      if (n === 0) return done;
      done += n;
    }
  }

  #add(job: JobRecord): void {
    if (job.replaces !== null) {
      const old = this.#ridOf.get(job.replaces) as number | undefined;
      if (old !== undefined) for (const s of this.#drop) s.run(old);
    }
    const rid = nextRid(this.#maxRid, job.postedAt);
    this.#insertRow.run(rid, job.ord, job.postedAt, job.remote === null ? null : job.remote ? 1 : 0);
    this.#insertFts.run(rid, indexText(job.title), indexText(job.company), indexText(job.location ?? ''), indexText(job.skills.join(' ')), indexText(job.description));
    for (const skill of job.skills) this.#insertSkill.run(skill, rid);
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
}
