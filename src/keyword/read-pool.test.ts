import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../errors.js';
import { JobStore, type JobInput } from '../jobs/store.js';
import { Store } from '../store/index.js';
import { KeywordDb } from './db.js';
import { JobsIndex } from './jobs.js';
import { NewsIndex } from './news.js';
import { parseQuery } from './query.js';

const T0 = Date.parse('2026-03-02T09:00:00Z') / 1000;
let dir: string;
let store: Store;
let kdb: KeywordDb;
let news: NewsIndex;
let jobs: JobsIndex;

const posting = (i: number): JobInput => ({
  url: `https://jobs.example/${i}`,
  title: `${i % 2 ? 'Backend' : 'Data'} engineer ${i}`,
  company: 'Acme',
  location: 'Berlin',
  remote: null,
  employmentType: null,
  salaryMin: null,
  salaryMax: null,
  salaryCurrency: null,
  skills: i % 3 ? ['Go', 'PostgreSQL'] : ['Go', 'Kubernetes'],
  unknownSkills: [],
  description: 'We build things.',
  postedAt: T0 + i * 3600,
  source: 'Board',
});

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'newsmatch-read-pool-'));
  store = new Store(join(dir, 'lmdb'));
  // Reader threads only: the writer is never asked (catch-ups below run on this thread).
  kdb = new KeywordDb(join(dir, 'keyword.sqlite'), store.storeId(), { readThreads: 2, store: store.path });
  news = new NewsIndex(kdb, store);
  const jobStore = new JobStore(store);
  jobs = new JobsIndex(kdb, jobStore);
  store.writeRevisions(
    Array.from({ length: 120 }, (_, i) => ({
      url: `https://news.example/${i}`,
      source: ['Wire', 'Daily'][i % 2],
      title: `Port strike day ${i}`,
      body: `Update ${i}`,
      text: `${'strike '.repeat(1 + (i % 4))}at the port.`,
      publishedAt: T0 + i * 7200,
      chunks: [],
    })),
  );
  jobStore.write(Array.from({ length: 40 }, (_, i) => posting(i)));
  news.catchUp();
  jobs.catchUp();
});

afterAll(async () => {
  await kdb?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('KeywordReads on reader threads', () => {
  const filter = { match: parseQuery('strike').match, includeEdits: false, sources: new Set([1]) };

  it('answers every read as the main connection does, on another thread', async () => {
    for (const sort of ['time', 'relevance'] as const) {
      expect(await news.query(filter, sort, 17)).toEqual(news.search(filter, sort, 17));
      expect(kdb.reads.lastThread).not.toBe(threadId);
    }
    const page = await news.query(filter, 'relevance', 5);
    expect(await news.query(filter, 'relevance', 5, { rid: page[4].rid, score: page[4].score })).toEqual(
      news.search(filter, 'relevance', 5, { rid: page[4].rid, score: page[4].score }),
    );
    expect(await news.queryVolume(filter)).toEqual(news.volume(filter));
    const jf = { match: parseQuery('backend').match, skills: ['Go'] };
    expect((await jobs.query(jf, 10)).length).toBe(10);
    expect(await jobs.query(jf, 10)).toEqual(jobs.search(jf, 10));
    expect(await jobs.queryPostedTimes('Kubernetes', T0, T0 + 20 * 3600)).toEqual(jobs.postedTimes('Kubernetes', T0, T0 + 20 * 3600));
    expect(await jobs.queryCoOccurring('Go')).toEqual(jobs.coOccurring('Go'));
    expect(kdb.reads.lastThread).not.toBe(threadId);
  });

  it('runs reads side by side', async () => {
    const all = await Promise.all(Array.from({ length: 8 }, (_, i) => news.query(filter, 'time', i + 1)));
    expect(all.map((r) => r.length)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('a MATCH expression SQLite refuses is an AppError 400, as on the main connection', async () => {
    for (const match of ['"open', 'a AND', 'nocolumn : x']) {
      const e = await news.query({ ...filter, match }, 'time', 5).catch((x: unknown) => x);
      expect(e, match).toBeInstanceOf(AppError);
      expect([(e as AppError).status, (e as AppError).code]).toEqual([400, 'bad_request']);
    }
  });
});
