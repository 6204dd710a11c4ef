/**
 * Keyword search keeps off the event loop, checked by where the work runs, never by timings:
 * better-sqlite3's Statement methods are wrapped on the main thread (worker threads load their
 * own copy of the module, so the wrapper sees only this thread's statements). A /v1/news or
 * /v1/jobs search must run no FTS statement here (its SQL runs on a reader thread), and the
 * catch-up it waits for must insert nothing here (it runs on the writer thread). An AppError
 * raised on a reader thread comes back as itself; while a large backlog is indexed the answer
 * says `partial: true`, and keywordLag() counts what is pending.
 */
import type { Statement } from 'better-sqlite3';
import { threadId } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AppError } from '../src/errors.js';
import type { JobInput } from '../src/jobs/index.js';
import { keywordLag } from '../src/keyword/index.js';
import type { RevisionInput } from '../src/store/index.js';
import { expectError, startHarness, type Harness } from './helpers/service.js';

let h: Harness;
const T0 = Date.parse('2026-04-01T00:00:00Z') / 1000;

const revision = (i: number, words: string): RevisionInput => ({
  url: `https://threads.example/${words.split(' ')[0]}/${i}`,
  source: ['Wire One', 'Daily Ledger'][i % 2],
  title: `${words} ${i}`,
  body: `Report ${i}: ${words}.`,
  text: `${'the dock workers say '.repeat(1 + (i % 5))}${words} goes on, day ${i}.`,
  publishedAt: T0 + i * 60,
  chunks: [],
});

const posting = (i: number, words: string): JobInput => ({
  url: `https://jobs.threads.example/${words.split(' ')[0]}/${i}`,
  title: `${words} engineer ${i}`,
  company: `Company ${i % 7}`,
  location: 'Berlin, Germany',
  remote: i % 2 === 0,
  employmentType: null,
  salaryMin: null,
  salaryMax: null,
  salaryCurrency: null,
  skills: ['Go'],
  unknownSkills: [],
  description: `Work on ${words} every day (${i}).`,
  postedAt: T0 + i * 60,
  source: 'Example Jobs',
});

const get = (url: string) => h.inject({ url });

/** SQL the main thread ran through better-sqlite3 while `watch` is on, by method. */
const ran: { method: string; sql: string }[] = [];
let restore: (() => void) | null = null;
function watch(): void {
  const proto = Object.getPrototypeOf(h.service.keyword.db.prepare('SELECT 1')) as Record<string, unknown>;
  const saved = (['run', 'get', 'all', 'iterate'] as const).map((m) => [m, proto[m]] as const);
  for (const [m, f] of saved) {
    proto[m] = function (this: Statement, ...args: unknown[]) {
      ran.push({ method: m, sql: this.source });
      return (f as (...a: unknown[]) => unknown).apply(this, args);
    };
  }
  restore = () => {
    for (const [m, f] of saved) proto[m] = f;
    restore = null;
  };
}
const ftsReads = () => ran.filter((r) => /news_fts|job_fts|job_rows|news_rows/.test(r.sql) && r.method !== 'run');
const ftsWrites = () => ran.filter((r) => /INSERT INTO (news|job)_/.test(r.sql));

beforeAll(async () => {
  h = await startHarness({ corpus: null });
  h.service.store.writeRevisions(Array.from({ length: 400 }, (_, i) => revision(i, 'port strike')));
  h.service.jobs.write(Array.from({ length: 50 }, (_, i) => posting(i, 'harbour logistics')));
  // Indexed before the tests watch (this first search waits for it).
  expect((await get('/v1/news?q=strike')).status).toBe(200);
  expect((await get('/v1/jobs?q=logistics')).status).toBe(200);
});

afterEach(() => {
  restore?.();
  ran.length = 0;
});

afterAll(async () => {
  await h?.close();
});

describe('keyword search runs its SQL on a reader thread', () => {
  it('a relevance ranking of every match and a time page: 200, and no FTS statement on the main thread', async () => {
    watch();
    const relevance = await get('/v1/news?q=strike&sort=relevance&limit=100');
    expect(relevance.status, relevance.raw.slice(0, 300)).toBe(200);
    expect(relevance.body.count).toBe(100);
    expect(relevance.body.results[0].score).toBeGreaterThan(0);
    const time = await get('/v1/news?q=dock%20strike&limit=10');
    expect(time.status).toBe(200);
    expect(time.body.count).toBe(10);
    expect(ftsReads()).toEqual([]);
    expect(ran.length, "the wrapper saw this thread's statements (the meta reads of the catch-up check)").toBeGreaterThan(0);
    const reader = h.service.keyword.reads.lastThread;
    expect(reader).toBeGreaterThan(0);
    expect(reader).not.toBe(threadId);
  });

  it('/v1/jobs: the same', async () => {
    watch();
    const res = await get('/v1/jobs?q=logistics&remote=true&limit=5');
    expect(res.status, res.raw.slice(0, 300)).toBe(200);
    expect(res.body.count).toBe(5);
    expect(ftsReads()).toEqual([]);
    expect(h.service.keyword.reads.lastThread).not.toBe(threadId);
    expect(res.body.partial).toBe(false);
  });

  it('an AppError thrown on the reader thread comes back as itself (400 bad_request, not a 500)', async () => {
    // query.ts never lets FTS5 syntax through; the reader thread's own guard is tested directly.
    const e = await h.service.news.query({ match: '"unterminated', includeEdits: true, sources: null }, 'relevance', 10).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AppError);
    expect([(e as AppError).code, (e as AppError).status]).toEqual(['bad_request', 400]);
    expect(h.service.keyword.reads.lastThread).not.toBe(threadId);
    const j = await h.service.jobsIndex.query({ match: 'nocolumn : x', skills: [] }, 10).catch((x: unknown) => x);
    expect([(j as AppError).code, (j as AppError).status]).toEqual(['bad_request', 400]);
    // And the query language's own 400s keep their codes and bodies.
    expectError(await get('/v1/news?q=-strike'), 400, 'empty_query');
    expectError(await get('/v1/jobs?q=a*'), 400, 'bad_request');
  });
});

describe('the catch-up a search waits for runs on the writer thread', () => {
  it('revisions and postings stored just now are found, and the main thread inserted nothing', async () => {
    h.service.store.writeRevisions(Array.from({ length: 300 }, (_, i) => revision(1000 + i, 'ferry delay')));
    h.service.jobs.write(Array.from({ length: 30 }, (_, i) => posting(1000 + i, 'ferry scheduling')));
    expect([h.service.news.behind(), h.service.jobsIndex.behind()]).toEqual([300, 30]);
    watch();
    const news = await get('/v1/news?q=ferry&limit=100');
    const jobs = await get('/v1/jobs?q=ferry&limit=100');
    expect(ftsWrites()).toEqual([]);
    expect(news.status).toBe(200);
    expect(news.body.count).toBe(100);
    expect(jobs.body.count).toBe(30);
    expect(keywordLag(h.service)).toEqual({ pending: 0, news: 0, jobs: 0, catchingUp: false });
  });
});

describe('partial results while a large backlog is indexed', () => {
  it('news: partial: true while the backlog is indexed in the background, then false with every match', async () => {
    const n = 2_500; // past the 2,000 a search waits for
    h.service.store.writeRevisions(Array.from({ length: n }, (_, i) => revision(10_000 + i, 'meteor shower')));
    expect(keywordLag(h.service)).toMatchObject({ news: n, pending: n });
    const first = await get('/v1/news?q=meteor&limit=5');
    expect(first.status).toBe(200);
    expect(first.body.partial).toBe(true);
    await vi.waitFor(() => expect(keywordLag(h.service)).toEqual({ pending: 0, news: 0, jobs: 0, catchingUp: false }), { timeout: 60_000, interval: 50 });
    const after = await get('/v1/news?q=meteor&limit=5&sort=relevance');
    expect([after.body.count, after.body.partial]).toEqual([5, false]);
    const all = await h.service.news.query({ match: '"meteor"', includeEdits: true, sources: null }, 'time', 3_000);
    expect(all.length).toBe(n);
  });

  it('jobs: the same', async () => {
    const n = 2_100;
    h.service.jobs.write(Array.from({ length: n }, (_, i) => posting(10_000 + i, 'comet tracking')));
    const first = await get('/v1/jobs?q=comet&limit=5');
    expect(first.status).toBe(200);
    expect(first.body.partial).toBe(true);
    await vi.waitFor(() => expect(keywordLag(h.service).pending).toBe(0), { timeout: 60_000, interval: 50 });
    const after = await get('/v1/jobs?q=comet&limit=5');
    expect([after.body.count, after.body.partial]).toEqual([5, false]);
  });
});
