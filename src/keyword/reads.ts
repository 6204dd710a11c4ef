/**
 * One keyword read as data, so that it can run on a reader thread (read-worker.ts) or, with
 * KEYWORD_READ_THREADS=0, on the event loop, and answer the same either way, errors included:
 * an AppError crosses the thread boundary as its catalogue entry and message (an Error loses
 * its class and fields on the way), and so a 400 stays a 400.
 */
import type Database from 'better-sqlite3';
import { AppError, type ErrorName } from '../errors.js';
import { JobsQueries, type JobFilter } from './jobs-queries.js';
import { NewsQueries, type NewsAfter, type NewsFilter, type NewsSort } from './news-queries.js';

export type ReadTask =
  | { op: 'news'; filter: NewsFilter; sort: NewsSort; limit: number; after?: NewsAfter }
  | { op: 'news-volume'; filter: NewsFilter }
  | { op: 'jobs'; filter: JobFilter; limit: number; afterRid?: number }
  | { op: 'skill-times'; skill: string; since?: number; until?: number }
  | { op: 'skill-co'; skill: string; since?: number; until?: number; n?: number };

/** An error as it crosses threads: a catalogue entry, or a bug (a 500) with its message. */
export type CarriedError =
  | { entry: ErrorName; message: string; extra: Record<string, unknown>; headers: Record<string, string> }
  | { entry: null; message: string; stack?: string };

export type ReadOutcome = { ok: true; rows: unknown[]; threadId: number } | { ok: false; error: CarriedError };

/** The statements of both corpora over one connection, prepared on first use. */
export class Readers {
  #news: NewsQueries | null = null;
  #jobs: JobsQueries | null = null;

  constructor(readonly db: Database.Database) {}

  get news(): NewsQueries {
    return (this.#news ??= new NewsQueries(this.db));
  }

  get jobs(): JobsQueries {
    return (this.#jobs ??= new JobsQueries(this.db));
  }
}

export function runRead(readers: Readers, task: ReadTask): unknown[] {
  try {
    switch (task.op) {
      case 'news':
        return readers.news.search(task.filter, task.sort, task.limit, task.after);
      case 'news-volume':
        return readers.news.volume(task.filter);
      case 'jobs':
        return readers.jobs.search(task.filter, task.limit, task.afterRid);
      case 'skill-times':
        return readers.jobs.postedTimes(task.skill, task.since, task.until);
      case 'skill-co':
        return readers.jobs.coOccurring(task.skill, task.since, task.until, task.n);
    }
  } catch (e) {
    // A MATCH expression SQLite refuses is the query's fault, never a 500. query.ts quotes every
    // token, so this is a guard, but it is the one that keeps a parser gap a 400.
    if ((e as { name?: string; code?: string }).name === 'SqliteError' && (e as { code?: string }).code === 'SQLITE_ERROR') {
      throw new AppError('bad_parameter', `q: the keyword index cannot read this query (${(e as Error).message})`, { cause: e });
    }
    throw e;
  }
}

export function carry(e: unknown): CarriedError {
  if (e instanceof AppError) return { entry: e.entry, message: e.message, extra: e.extra, headers: e.headers };
  return { entry: null, message: String((e as Error)?.message ?? e), stack: (e as Error)?.stack };
}

export function uncarry(c: CarriedError): Error {
  if (c.entry !== null) return new AppError(c.entry, c.message, { extra: c.extra, headers: c.headers });
  const e = new Error(`keyword reader thread: ${c.message}`);
  if (c.stack) e.stack = `${e.message}\n${c.stack}`;
  return e;
}
