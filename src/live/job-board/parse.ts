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

export interface JobItem {
  /** 1-based, in the returned list. */
  position: number;
  /** The board's job key: Indeed's `jobkey` / `data-jk`, LinkedIn's `urn:li:jobPosting:<id>` number. */
  id: string | null;
  title: string;
  company: string | null;
  /** As shown: "Remote in Austin, TX", "Hybrid work in Denver, CO 80202", "New York, NY". */
  location: string | null;
  /**
   * ISO: the board's own timestamp where the page carries one (Indeed's mosaic `createDate`,
   * LinkedIn's `<time datetime>`, JSON-LD `datePosted`), else the shown age resolved against
   * the fetch time ("30+ days ago" is an upper bound). Null for "Active 3 days ago", which
   * dates the employer, not the job.
   */
  posted_at: string | null;
  /** The age as the board shows it: "15 days ago", "Posted 3 days ago", "1 week ago". */
  posted_text: string | null;
  salary_text: string | null;
  /** The job's own page: `{origin}/viewjob?jk=<id>` on Indeed, `/jobs/view/<slug>-<id>` on LinkedIn. */
  url: string;
  snippet: string | null;
  /** "Remote" in the location or attributes (not "Hybrid"), Indeed's remote work model, or JSON-LD `jobLocationType` TELECOMMUTE. */
  remote: boolean;
  sponsored: boolean;
}

export type JobBoardLayout = 'indeed' | 'linkedin';

/**
 * The page's jobs in the board's layout. Throws ScrapeError on a robot check or bot challenge,
 * and on a page without the elements the layout must have; a page that says no job matched
 * (or LinkedIn's empty fragment past the last page) gives [].
 */
export function parseJobListing(html: string, pageUrl: string, fetchedAt: Date, layout: JobBoardLayout = 'indeed'): JobItem[] {
  return layout === 'linkedin' ? parseLinkedIn(html, pageUrl, fetchedAt) : parseIndeed(html, pageUrl, fetchedAt);
}
