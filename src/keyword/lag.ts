/** How far the keyword index is behind LMDB, for readiness checks and the `partial` flag. */
import type { JobsIndex } from './jobs.js';
import type { NewsIndex } from './news.js';

export interface KeywordLag {
  /** Records LMDB holds that keyword search cannot see yet (news revisions + job posting versions). */
  pending: number;
  news: number;
  jobs: number;
  /** A large backlog is being indexed in the background (searches answer `partial: true` meanwhile). */
  catchingUp: boolean;
}

/**
 * The keyword index's lag, from the service's indexes (`keywordLag(service)`). Cheap (two
 * LMDB reads, two SQLite meta reads); counts what the caller's LMDB snapshot sees.
 */
export function keywordLag(s: { news: NewsIndex; jobsIndex: JobsIndex }): KeywordLag {
  const news = s.news.behind();
  const jobs = s.jobsIndex.behind();
  return { pending: news + jobs, news, jobs, catchingUp: s.news.catchingUp || s.jobsIndex.catchingUp };
}
