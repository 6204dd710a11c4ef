import { describe, expect, it } from 'vitest';
import { readFixture } from '../../../test/helpers/pages.js';
import { ConfigError, loadConfig } from '../../config.js';
import { CookieJar } from '../../net/index.js';
import type { LiveCall } from '../scraper.js';
import { PARSERS } from '../parsers.js';
import { jobBoardEndpoints } from './endpoints.js';
import type { JobItem } from './parse.js';

const LINKEDIN = 'https://www.linkedin.com/jobs-guest/jobs/api/seeMoreJobPostings/search?keywords={q}&location={location}&start={start}';

/** A call that serves `html` for every URL, records them, and parses in-process. */
function fakeCall(html: string) {
  const urls: string[] = [];
  const call = {
    jar: new CookieJar(),
    get: async (url: string) => {
      urls.push(url);
      return { url, status: 200, html };
    },
    parse: async (name: keyof typeof PARSERS, ...args: unknown[]) => (PARSERS[name] as (...a: unknown[]) => unknown)(...args),
  } as unknown as LiveCall;
  return { call, urls };
}

describe('job_boards: the layout setting', () => {
  it('JOB_BOARD_LAYOUT picks the parser; page N asks for start (N-1)*10', async () => {
    const { call, urls } = fakeCall(readFixture('job-board/linkedin_jobs_guest_search_fragment_2026-06.html'));
    const { listing } = jobBoardEndpoints(LINKEDIN, 'linkedin', () => Date.parse('2026-06-17T12:00:00Z'));
    const jobs = (await listing.run({ q: 'software engineer', location: 'United States', page: 3 }, call)) as JobItem[];
    expect(urls).toEqual([
      'https://www.linkedin.com/jobs-guest/jobs/api/seeMoreJobPostings/search?keywords=software%20engineer&location=United%20States&start=20',
    ]);
    expect(jobs).toHaveLength(10);
    expect(jobs[0]!.company).toBe('Amazon');
  });

  it('the same page under the default layout is a scrape failure, not jobs', async () => {
    const { call } = fakeCall(readFixture('job-board/linkedin_jobs_guest_search_fragment_2026-06.html'));
    const { listing } = jobBoardEndpoints(LINKEDIN, 'indeed', () => 0);
    await expect(listing.run({ q: 'x', location: null, page: 1 }, call)).rejects.toThrow(/no mosaic-provider-jobcards data/);
  });

  it('config: indeed by default; linkedin needs its own JOB_BOARD_URL; nothing else is a layout', () => {
    expect(loadConfig({}).jobBoardLayout).toBe('indeed');
    expect(loadConfig({ JOB_BOARD_LAYOUT: 'linkedin', JOB_BOARD_URL: LINKEDIN })).toMatchObject({ jobBoardLayout: 'linkedin', jobBoardUrl: LINKEDIN });
    expect(loadConfig({}, { JOB_BOARD_LAYOUT: 'linkedin', JOB_BOARD_URL: LINKEDIN }).jobBoardLayout).toBe('linkedin'); // as flags
    expect(() => loadConfig({ JOB_BOARD_LAYOUT: 'linkedin' })).toThrow(
      new ConfigError("JOB_BOARD_LAYOUT=linkedin needs JOB_BOARD_URL set to that board's search page (the default is Indeed's)"),
    );
    expect(() => loadConfig({ JOB_BOARD_LAYOUT: 'glassdoor' })).toThrow('JOB_BOARD_LAYOUT must be one of indeed, linkedin, got "glassdoor"');
  });
});
