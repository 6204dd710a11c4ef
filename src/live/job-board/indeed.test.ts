import { beforeAll, describe, expect, it } from 'vitest';
import { readFixture, scrapeError } from '../../../test/helpers/pages.js';
import { shownDate } from '../dates.js';
import { parseJobListing, type JobItem } from './parse.js';

/**
 * The real Indeed page (test/fixtures/pages/job-board/, captured 2026-04-10): "Python" jobs in
 * "Remote", page 1. Every expected value below was read by hand from the HTML, where each
 * comment says. "L557" is the line `window.mosaic.providerData["mosaic-provider-jobcards"]=…`,
 * one result object per job in its `results` array.
 */
const PAGE = 'job-board/indeed_search_python_remote_2026-04-10.html';
const URL_ = 'https://www.indeed.com/jobs?q=Python&l=Remote';
// The capture time, from the page itself: `"searchTimestamp":1775837444547` (L557, twice), in
// the <title> "(April 10, 2026)".
const CAPTURED = new Date(1775837444547);

describe('parseJobListing (indeed): the real search page, from its mosaic JSON', () => {
  let html: string;
  let jobs: JobItem[];
  beforeAll(() => {
    html = readFixture(PAGE);
    jobs = parseJobListing(html, URL_, CAPTURED, 'indeed');
  });

  it('reads the 15 jobs of the mosaic results, in page order', () => {
    // L557 `results` holds 15 objects ("jobkey":… 15 times); the markup has 16 div.job_seen_beacon,
    // one of them the aria-hidden placeholder 123456789abcdef0 (L351), in no JSON.
    expect(jobs).toHaveLength(15);
    expect(jobs.map((j) => j.position)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    expect(jobs.map((j) => j.id)).not.toContain('123456789abcdef0');
    // every result has "sponsored":false; the query was Remote, and every card location reads
    // "Remote" or "Remote in …" (L329–L364 [data-testid="text-location"])
    expect(jobs.every((j) => !j.sponsored && j.remote)).toBe(true);
  });

  it('the first job, whole', () => {
    expect(jobs[0]).toEqual({
      position: 1,
      id: '4c819be57353b91d', // L557 "jobkey":"4c819be57353b91d"; L329 data-jk="4c819be57353b91d"
      title: 'Research Scientist', // L557 "displayTitle":"Research Scientist"; L329 span[title="Research Scientist"]
      company: 'Humana', // L557 "company":"Humana"; L329 <span data-testid="company-name">Humana</span>
      location: 'Remote', // L557 "formattedLocation":"Remote"; L329 text-location <span>Remote</span>
      posted_at: '2026-03-25T23:51:10.373Z', // L557 "createDate":1774482670373
      posted_text: '15 days ago', // L557 "formattedRelativeTime":"15 days ago"
      salary_text: '$78,400 - $107,800 a year', // L557 "salarySnippet":{…,"text":"$78,400 - $107,800 a year"}
      url: 'https://www.indeed.com/viewjob?jk=4c819be57353b91d', // the job key on the board's view page
      // L557 "snippet":"\u003Cul …\u003E\n \u003Cli\u003EUtilizing advanced … clinical priorities.\u003C/li\u003E…"
      snippet: 'Utilizing advanced analytics and strategic insights, we inform decision-making and support the execution of clinical priorities.',
      remote: true, // L557 "remoteLocation":true
      sponsored: false, // L557 "sponsored":false
    });
  });

  it('the last job, whole: the work model written before the place, as the card shows it', () => {
    expect(jobs[14]).toEqual({
      position: 15,
      id: 'a41e5fd8d4039af6', // L557 "jobkey":"a41e5fd8d4039af6"; L364 data-jk
      title: 'Claims Data Analytics Engineer', // L557 "displayTitle"
      company: 'GEICO', // L557 "company":"GEICO"
      // L557 "formattedLocation":"Bethesda, MD 20814", "remoteWorkModel":{"inlineText":true,"text":"Remote",…};
      // L364 text-location "Remote in Bethesda, MD 20814"
      location: 'Remote in Bethesda, MD 20814',
      posted_at: '2026-03-12T18:59:06.288Z', // L557 "createDate":1773341946288
      posted_text: '28 days ago', // L557 "formattedRelativeTime":"28 days ago"
      salary_text: '$91,225 - $189,625 a year', // L557 "salarySnippet":{…"text":"$91,225 - $189,625 a year"}
      url: 'https://www.indeed.com/viewjob?jk=a41e5fd8d4039af6',
      snippet: 'You will diagnose complex business challenges, recommend strategic solutions, and collaborate across workstreams to drive innovation.', // L557 "snippet" <li>
      remote: true, // L557 "remoteLocation":false, but "remoteWorkModel":{…"type":"REMOTE_ALWAYS"}
      sponsored: false,
    });
  });

  it('a salary range with cents, a job without pay, and a "30+ days ago" dated by createDate', () => {
    // L557 "jobkey":"adf347957a17a782" … "text":"$76,540.00 - $116,747.50 a year"
    expect(jobs[3]).toMatchObject({ id: 'adf347957a17a782', salary_text: '$76,540.00 - $116,747.50 a year', location: 'Remote in Cleveland, OH 44195' });
    // L557 "jobkey":"b6b61283fcb9f344": "salarySnippet":{"currency":"","salaryTextFormatted":false}, no text
    expect(jobs[5]).toMatchObject({
      id: 'b6b61283fcb9f344',
      title: 'Principal AI Agent Engineer (REMOTE / US)',
      salary_text: null,
      posted_text: '1 day ago',
      posted_at: '2026-04-08T19:14:22.314Z',
    }); // "createDate":1775675662314
    // L557 "jobkey":"537b0c9fc7fb7ffa": "formattedRelativeTime":"30+ days ago", "createDate":1767901356747
    expect(jobs[1]).toMatchObject({
      id: '537b0c9fc7fb7ffa',
      salary_text: '$125 - $140 an hour',
      posted_text: '30+ days ago',
      posted_at: '2026-01-08T19:42:36.747Z',
    });
  });

  it('each shown age is the whole days from createDate to the capture time ("30+" a lower bound)', () => {
    for (const j of jobs) {
      const shown = Date.parse(shownDate(j.posted_text, CAPTURED)!);
      const posted = Date.parse(j.posted_at!);
      if (j.posted_text === '30+ days ago') {
        expect(posted).toBeLessThan(shown);
      } else {
        expect(shown - posted, `${j.id} ${j.posted_text}`).toBeGreaterThanOrEqual(0);
        expect(shown - posted, `${j.id} ${j.posted_text}`).toBeLessThan(86_400_000);
      }
    }
  });

  it('without the mosaic JSON, the same jobs from the cards: no age and no pay, which these cards do not show', () => {
    const cardsOnly = parseJobListing(html.replace('window.mosaic.providerData["mosaic-provider-jobcards"]=', 'window.mosaicRemoved='), URL_, CAPTURED);
    expect(cardsOnly.map((j) => j.id)).toEqual(jobs.map((j) => j.id));
    expect(cardsOnly[0]).toEqual({
      ...jobs[0],
      // L329: the card's metadata list holds benefits only ("Paid parental leave", …), its pay
      // row (div.css-1wcu7u6) is empty, and no element carries a date
      posted_at: null,
      posted_text: null,
      salary_text: null,
      // snippet: L330, the <li> in L329's [data-testid="belowJobSnippet"], the same text as the JSON's
    });
    expect(cardsOnly[14]!.location).toBe('Remote in Bethesda, MD 20814'); // L364 text-location
    expect(cardsOnly.every((j) => j.posted_at === null && j.salary_text === null && j.snippet)).toBe(true);
  });
});

describe('parseJobListing (indeed): pages of another layout', () => {
  it('an article page (Reuters) is a ScrapeError naming what an Indeed page must have', () => {
    const html = readFixture('publisher/reuters-article-israeli-tank-2024-03-07.html');
    expect(scrapeError(() => parseJobListing(html, URL_, CAPTURED, 'indeed')).detail).toBe(
      'no job cards on the page (no mosaic-provider-jobcards data, div.job_seen_beacon card or JobPosting JSON-LD): the layout changed or the page is not an Indeed search page',
    );
  });

  it("LinkedIn's fragment read as Indeed is a ScrapeError too, not jobs read by the wrong rules", () => {
    const html = readFixture('job-board/linkedin_jobs_guest_search_fragment_2026-06.html');
    expect(scrapeError(() => parseJobListing(html, URL_, CAPTURED)).detail).toMatch(/^no job cards on the page \(no mosaic-provider-jobcards data/);
  });
});
