import { beforeAll, describe, expect, it } from 'vitest';
import { readFixture, scrapeError } from '../../../test/helpers/pages.js';
import { parseJobListing, type JobItem } from './parse.js';

/**
 * The real LinkedIn guest search fragment (test/fixtures/pages/job-board/, 10 `<li>` cards and
 * nothing around them). Every expected value was read by hand from the file at the line the
 * comment gives ("L12").
 */
const PAGE = 'job-board/linkedin_jobs_guest_search_fragment_2026-06.html';
const URL_ = 'https://www.linkedin.com/jobs-guest/jobs/api/seeMoreJobPostings/search?keywords=software%20engineer&location=United%20States&start=0';
// The fragment carries no timestamp: its newest card reads "1 day ago" beside
// datetime="2026-06-16" (L780, L815), so it was read on 2026-06-17, as the provenance says.
const CAPTURED = new Date('2026-06-17T12:00:00Z');

describe('parseJobListing (linkedin): the real guest search fragment', () => {
  let html: string;
  let jobs: JobItem[];
  beforeAll(() => {
    html = readFixture(PAGE);
    jobs = parseJobListing(html, URL_, CAPTURED, 'linkedin');
  });

  it('reads the 10 cards in order', () => {
    // 10 `<li>`, each with one div.base-search-card (data-row="1" … data-row="10")
    expect(jobs).toHaveLength(10);
    expect(jobs.map((j) => j.position)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    // no card shows pay, a description, "Promoted" or "Remote" (grep finds none of them)
    expect(jobs.every((j) => j.salary_text === null && j.snippet === null && !j.sponsored && !j.remote)).toBe(true);
  });

  it('the first card, whole', () => {
    expect(jobs[0]).toEqual({
      position: 1,
      id: '4411180329', // L12 data-entity-urn="urn:li:jobPosting:4411180329"
      title: 'Software Development Engineer II, Delivery Choice', // L37–L40 h3.base-search-card__title
      company: 'Amazon', // L43–L48 h4.base-search-card__subtitle a
      location: 'Minneapolis, MN', // L54–L56 span.job-search-card__location
      // L72 <time class="job-search-card__listdate" datetime="2026-06-04">: 13 days before the
      // capture, finer than the "1 week ago" it shows (L107)
      posted_at: '2026-06-04T00:00:00.000Z',
      posted_text: '1 week ago',
      salary_text: null,
      // L15 a.base-card__full-link href, without ?position=1&pageNum=0&refId=…&trackingId=…
      url: 'https://www.linkedin.com/jobs/view/software-development-engineer-ii-delivery-choice-at-amazon-4411180329',
      snippet: null,
      remote: false,
      sponsored: false,
    });
  });

  it('the last card, whole', () => {
    expect(jobs[9]).toEqual({
      position: 10,
      id: '4345859712', // L1071 data-entity-urn="urn:li:jobPosting:4345859712"
      title: 'Experienced Software Engineer Java / Python (Full Stack or Back End)', // L1096–L1098
      company: 'JPMorganChase', // L1102–L1104
      location: 'Tampa, FL', // L1113–L1115
      posted_at: '2026-06-13T00:00:00.000Z', // L1131 datetime="2026-06-13"
      posted_text: '4 days ago', // L1166
      salary_text: null,
      url: 'https://www.linkedin.com/jobs/view/experienced-software-engineer-java-python-full-stack-or-back-end-at-jpmorganchase-4345859712', // L1074
      snippet: null,
      remote: false,
      sponsored: false,
    });
  });

  it('relative dates: without the datetime attributes, the shown age resolves against the capture time', () => {
    const undated = parseJobListing(html.replace(/ datetime="[^"]*"/g, ''), URL_, CAPTURED, 'linkedin');
    expect(undated.map((j) => [j.posted_text, j.posted_at]).slice(0, 7)).toEqual([
      ['1 week ago', '2026-06-10T12:00:00.000Z'], // L107; the datetime said 2026-06-04
      ['1 week ago', '2026-06-10T12:00:00.000Z'], // L226
      ['5 days ago', '2026-06-12T12:00:00.000Z'], // card 3, datetime="2026-06-12"
      ['2 weeks ago', '2026-06-03T12:00:00.000Z'], // card 4, datetime="2026-05-30"
      ['2 weeks ago', '2026-06-03T12:00:00.000Z'], // card 5, datetime="2026-05-27"
      ['4 days ago', '2026-06-13T12:00:00.000Z'], // L702, card 6, datetime="2026-06-13"
      ['1 day ago', '2026-06-16T12:00:00.000Z'], // L815, card 7, datetime="2026-06-16"
    ]);
  });

  it('an empty body, the answer past the last page, is no jobs', () => {
    expect(parseJobListing('', URL_, CAPTURED, 'linkedin')).toEqual([]);
    expect(parseJobListing('<!DOCTYPE html>\n\n', URL_, CAPTURED, 'linkedin')).toEqual([]);
  });
});

describe('parseJobListing (linkedin): pages of another layout', () => {
  const detail =
    'no job cards on the page (no .base-search-card / .job-search-card element): the layout changed or the page is not a LinkedIn guest job search';

  it('an article page (AP) is a ScrapeError naming the card element', () => {
    const html = readFixture('publisher/apnews-article-presidential-campaigns-2024-09-03.html');
    expect(scrapeError(() => parseJobListing(html, URL_, CAPTURED, 'linkedin')).detail).toBe(detail);
  });

  it('cards without titles are a ScrapeError, not jobs with empty fields', () => {
    const html = '<li><div class="base-search-card" data-entity-urn="urn:li:jobPosting:1"><h3 class="base-search-card__title"> </h3></div></li>';
    expect(scrapeError(() => parseJobListing(html, URL_, CAPTURED, 'linkedin')).detail).toBe(
      'job cards without titles (no .base-search-card__title text): the layout changed',
    );
  });
});
