/**
 * A job board's search results page, one page of jobs in page order, read in the layout
 * JOB_BOARD_LAYOUT names: every board gives the same `JobItem`s.
 * - `indeed` (indeed.ts): Indeed's `/jobs?q=&l=&start=` page, its embedded mosaic JSON first
 *   and the job cards second (proven on test/fixtures/pages/job-board/indeed_search_…html);
 * - `linkedin` (linkedin.ts): LinkedIn's guest search fragment
 *   (`/jobs-guest/jobs/api/seeMoreJobPostings/search`), a list of `<li>` cards and no page
 *   around them (proven on test/fixtures/pages/job-board/linkedin_jobs_guest_…html).
 *
 * The layout is configured, not guessed from the page: it belongs to the upstream
 * JOB_BOARD_URL names, so a page of another layout (the upstream changed, or a mirror serves
 * something else) is a ScrapeError naming what the configured layout lacks, never jobs read
 * by the wrong rules.
 */
import { parseIndeed } from './indeed.js';
import { parseLinkedIn } from './linkedin.js';
import type { JobBoardLayout, JobItem } from './types.js';

export type { JobBoardLayout, JobItem };

/**
 * The page's jobs in the board's layout. Throws ScrapeError on a robot check or bot challenge,
 * and on a page without the elements the layout must have; a page that says no job matched
 * (or LinkedIn's empty fragment past the last page) gives [].
 */
export function parseJobListing(html: string, pageUrl: string, fetchedAt: Date, layout: JobBoardLayout = 'indeed'): JobItem[] {
  return layout === 'linkedin' ? parseLinkedIn(html, pageUrl, fetchedAt) : parseIndeed(html, pageUrl, fetchedAt);
}
