/** What every job board layout's reader gives (parse.ts picks the reader). */
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
