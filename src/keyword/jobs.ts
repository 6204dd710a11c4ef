/**
 * Keyword search over job postings (GET /v1/jobs, the market endpoints): title, company,
 * location, skills and description in FTS5, plus each posting's vocabulary skills in
 * `job_skills`, read from LMDB in ord order by `catchUp`. A new version of a posting replaces
 * the old one's rows. Rows are ordered newest-posted first by rowid, as news rows are.
 *
 * As with news (news.ts), the server searches on the reader threads (`query`) and catches up
 * on the writer thread (`fresh`); the synchronous methods are for the CLI, the writer thread
 * and the market endpoints.
 */
import type { Statement } from 'better-sqlite3';
import type { JobRecord, JobStore } from '../jobs/index.js';
import { CatchUp } from './catch-up.js';
import type { KeywordDb } from './db.js';
import type { JobFilter, JobHit } from './jobs-queries.js';
import { nextRid } from './rid.js';
import { indexText } from './text.js';

export type { JobFilter, JobHit } from './jobs-queries.js';

const BATCH = 500;
const INLINE_STEP = 100;

export class JobsIndex {
  readonly #insertRow: Statement;
  readonly #insertFts: Statement;
  readonly #insertSkill: Statement;
  readonly #ridOf: Statement;
  readonly #maxRid: Statement;
  readonly #drop: Statement[];
  readonly #catchUp: CatchUp;

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
    this.#drop = ['DELETE FROM job_rows WHERE rid = ?', 'DELETE FROM job_skills WHERE rid = ?', 'DELETE FROM job_fts WHERE rowid = ?'].map((s) =>
      db.prepare(s),
    );
    const writer = kdb.writer;
    this.#catchUp = new CatchUp({
      noun: 'job posting versions',
      behind: () => this.behind(),
      step: writer ? (n) => writer.run('jobs', n) : async (n) => this.catchUp(n),
      stepSize: writer ? BATCH : INLINE_STEP,
      yields: !writer,
    });
  }

  /** Posting times (Unix seconds) of the postings asking for `skill` (on this thread's connection). */
  postedTimes(skill: string, since?: number, until?: number): number[] {
    return this.kdb.readers.jobs.postedTimes(skill, since, until);
  }

  /** The skills most often asked for beside `skill`, with their posting counts (on this thread's connection). */
  coOccurring(skill: string, since?: number, until?: number, n?: number): { name: string; postings: number }[] {
    return this.kdb.readers.jobs.coOccurring(skill, since, until, n);
  }

  /** `postedTimes` on a reader thread. */
  queryPostedTimes(skill: string, since?: number, until?: number): Promise<number[]> {
    return this.kdb.reads.skillTimes(skill, since, until);
  }

  /** `coOccurring` on a reader thread. */
  queryCoOccurring(skill: string, since?: number, until?: number, n?: number): Promise<{ name: string; postings: number }[]> {
    return this.kdb.reads.skillCoOccurring(skill, since, until, n);
  }

  behind(): number {
    return Math.max(0, this.jobs.nextOrd() - this.kdb.indexed('jobs'));
  }

  /** Indexes up to `budget` posting versions LMDB holds and the index lacks, on this thread (in transactions of BATCH). */
  catchUp(budget = Infinity): number {
    let done = 0;
    const to = this.jobs.nextOrd();
    while (done < budget) {
      const n = this.kdb.db
        .transaction(() => {
          const from = this.kdb.indexed('jobs');
          const end = Math.min(to, from + BATCH, from + (budget - done));
          for (let ord = from; ord < end; ord++) this.#add(this.jobs.get(ord)!);
          if (end > from) this.kdb.setIndexed('jobs', end);
          return end - from;
        })
        .immediate();
      if (n === 0) return done;
      done += n;
    }
    return done;
  }

  #add(job: JobRecord): void {
    if (job.replaces !== null) {
      const old = this.#ridOf.get(job.replaces) as number | undefined;
      if (old !== undefined) for (const s of this.#drop) s.run(old);
    }
    const rid = nextRid(this.#maxRid, job.postedAt);
    this.#insertRow.run(rid, job.ord, job.postedAt, job.remote === null ? null : job.remote ? 1 : 0);
    this.#insertFts.run(
      rid,
      indexText(job.title),
      indexText(job.company),
      indexText(job.location ?? ''),
      indexText(job.skills.join(' ')),
      indexText(job.description),
    );
    for (const skill of job.skills) this.#insertSkill.run(skill, rid);
  }

  /** Before a search, off the event loop (see NewsIndex.fresh); resolves with the versions the search cannot see. */
  fresh(): Promise<number> {
    return this.#catchUp.fresh();
  }

  /** Whether a background catch-up is under way. */
  get catchingUp(): boolean {
    return this.#catchUp.background;
  }

  /** Postings newest first, after the row `afterRid` when given, read on a reader thread. */
  query(f: JobFilter, limit: number, afterRid?: number): Promise<JobHit[]> {
    return this.kdb.reads.jobs(f, limit, afterRid);
  }

  /** `query` on this thread's connection. */
  search(f: JobFilter, limit: number, afterRid?: number): JobHit[] {
    return this.kdb.readers.jobs.search(f, limit, afterRid);
  }

  close(): void {
    this.#catchUp.close();
  }
}
