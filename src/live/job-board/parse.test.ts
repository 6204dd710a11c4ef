import { beforeAll, describe, expect, it } from 'vitest';
import { readFixture, scrapeError } from '../../../test/helpers/pages.js';
import { parseJobListing, type JobItem } from './parse.js';

/**
 * The Indeed layout's corners on hand-written pages (test/fixtures/pages/PROVENANCE.md, "Job board"):
 * JSON-LD postings, sponsored cards, shown pay and ages, no-results and robot-check pages, which
 * the real capture (indeed.test.ts) does not have.
 */
const at = new Date('2026-03-01T12:00:00Z');
const AUSTIN = 'https://www.indeed.com/jobs?q=data+engineer&l=Austin%2C+TX&start=10';
const DENVER = 'https://www.indeed.com/jobs?q=registered+nurse&l=Denver%2C+CO';

const byId = (jobs: JobItem[], id: string) => {
  const j = jobs.find((x) => x.id === id);
  if (!j) throw new Error(`no job ${id}`);
  return j;
};

describe('parseJobListing: listing page ("data engineer", Austin, TX, page 2)', () => {
  let jobs: JobItem[];
  beforeAll(() => {
    jobs = parseJobListing(readFixture('synthetic/job-board-listing-data-engineer-austin.html'), AUSTIN, at);
  });

  it('reads the 12 cards in page order (the mosaic spacer items are no jobs)', () => {
    expect(jobs).toHaveLength(12);
    expect(jobs.map((j) => j.position)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    for (const j of jobs) {
      expect(j.id).toMatch(/^[0-9a-f]{16}$/);
      expect(j.url).toBe(`https://www.indeed.com/viewjob?jk=${j.id}`);
      expect(j.company).not.toBeNull();
      expect(j.snippet).not.toBeNull();
    }
  });

  it('the first and last cards, whole', () => {
    expect(jobs[0]).toEqual({
      position: 1,
      id: 'a1b2c3d4e5f60718',
      title: 'Data Engineer',
      company: 'Lone Star Analytics',
      location: 'Austin, TX 78701',
      posted_at: '2026-02-26T12:00:00.000Z',
      // the screen-reader "Posted" before it is left out
      posted_text: 'Posted 3 days ago',
      salary_text: '$115,000 - $140,000 a year',
      url: 'https://www.indeed.com/viewjob?jk=a1b2c3d4e5f60718',
      snippet: 'Build and maintain batch pipelines in Python and SQL. Experience with Airflow or Dagster is a plus.',
      remote: false,
      sponsored: false,
    });
    expect(jobs[11]).toEqual({
      position: 12,
      id: '5c6d7e8f90011223',
      title: 'Staff Data Engineer',
      company: 'Armadillo Payments',
      location: 'Austin, TX',
      posted_at: '2026-02-21T12:00:00.000Z',
      posted_text: 'Posted 8 days ago',
      salary_text: null,
      url: 'https://www.indeed.com/viewjob?jk=5c6d7e8f90011223',
      snippet: 'Set technical direction for the payments data platform.',
      remote: false,
      sponsored: false,
    });
  });

  it('one sponsored card (kept, in place), one remote (not the hybrid one)', () => {
    expect(jobs.filter((j) => j.sponsored).map((j) => [j.position, j.id])).toEqual([[3, 'c3d4e5f60718293a']]);
    // its link is an ad redirect; the url is still the job's own page
    expect(byId(jobs, 'c3d4e5f60718293a').url).toBe('https://www.indeed.com/viewjob?jk=c3d4e5f60718293a');
    expect(jobs.filter((j) => j.remote).map((j) => j.location)).toEqual(['Remote in Austin, TX']);
    expect(byId(jobs, 'd4e5f60718293a4b')).toMatchObject({ location: 'Hybrid work in Austin, TX 78758', remote: false });
  });

  it('pay: 7 cards show it, one outside the salary container; "Full-time" and "Contract" are no pay', () => {
    expect(jobs.filter((j) => j.salary_text).length).toBe(7);
    expect(byId(jobs, 'f60718293a4b5c6d').salary_text).toBe('$45 - $55 an hour');
    expect(byId(jobs, '18293a4b5c6d7e8f').salary_text).toBe('From $105,000 a year');
    expect(byId(jobs, '4b5c6d7e8f900112').salary_text).toBe('$22 an hour');
  });

  it('dates: "Just posted", "Today", "30+ days ago"; "Active 5 days ago" dates the employer, so no posted_at', () => {
    expect(jobs.map((j) => [j.posted_text, j.posted_at]).slice(2, 8)).toEqual([
      ['Just posted', '2026-03-01T12:00:00.000Z'],
      ['Posted 6 days ago', '2026-02-23T12:00:00.000Z'],
      ['Posted 30+ days ago', '2026-01-30T12:00:00.000Z'],
      ['Posted 2 days ago', '2026-02-27T12:00:00.000Z'],
      ['Active 5 days ago', null],
      ['Today', '2026-03-01T12:00:00.000Z'],
    ]);
  });
});

describe('parseJobListing: JSON-LD ItemList beside the cards ("registered nurse", Denver, CO)', () => {
  let jobs: JobItem[];
  beforeAll(() => {
    jobs = parseJobListing(readFixture('synthetic/job-board-jsonld-registered-nurse-denver.html'), DENVER, at);
  });

  it('cards in page order joined with their postings, then the posting no card shows', () => {
    expect(jobs.map((j) => [j.position, j.id, j.sponsored])).toEqual([
      [1, '6a7b8c9d0e1f2a3b', false],
      [2, '9d0e1f2a3b4c5d6e', true],
      [3, '7b8c9d0e1f2a3b4c', false],
      [4, '8c9d0e1f2a3b4c5d', false],
    ]);
  });

  it("a joined job: the posting's location and date, the card's shown pay and age", () => {
    expect(jobs[0]).toEqual({
      position: 1,
      id: '6a7b8c9d0e1f2a3b',
      title: 'Registered Nurse - Med/Surg',
      company: 'St. Example Medical Center',
      location: 'Denver, CO',
      posted_at: '2026-02-26T00:00:00.000Z',
      posted_text: 'Posted 3 days ago',
      salary_text: '$38 - $45 an hour',
      url: 'https://www.indeed.com/viewjob?jk=6a7b8c9d0e1f2a3b',
      snippet: 'Provide direct patient care on a 32-bed medical-surgical unit.',
      remote: false,
      sponsored: false,
    });
    // a bare-string identifier and a hiringOrganization given as a string
    expect(jobs[2]).toMatchObject({
      company: 'Front Range Health',
      location: 'Aurora, CO',
      posted_at: '2026-02-20T09:00:00.000Z',
      salary_text: '$95,000 - $118,000 a year',
    });
  });

  it('a posting alone: TELECOMMUTE is remote, pay written from baseSalary, the description cut to a snippet', () => {
    const j = jobs[3]!;
    expect(j).toMatchObject({
      title: 'Telehealth Nurse (RN)',
      company: 'Summit Virtual Care',
      location: 'Remote',
      posted_at: '2026-02-28T15:30:00.000Z',
      posted_text: null,
      salary_text: '$41 an hour',
      url: 'https://www.indeed.com/viewjob?jk=8c9d0e1f2a3b4c5d',
      remote: true,
      sponsored: false,
    });
    expect(j.snippet).toMatch(/^Summit Virtual Care is hiring a Colorado-licensed RN .* paid continuing education…$/);
    expect(j.snippet!.length).toBeLessThanOrEqual(301);
  });
});

describe('parseJobListing: other pages', () => {
  it('"did not match any jobs" gives []', () => {
    expect(
      parseJobListing(
        readFixture('synthetic/job-board-no-results.html'),
        'https://www.indeed.com/jobs?q=underwater+basket+weaving+engineer&l=Austin%2C+TX',
        at,
      ),
    ).toEqual([]);
  });

  it('robot checks and Cloudflare challenges are ScrapeErrors', () => {
    const captcha = '<html><head><title>hCaptcha solve page</title></head><body><div class="h-captcha" data-sitekey="x"></div></body></html>';
    expect(scrapeError(() => parseJobListing(captcha, AUSTIN, at)).detail).toBe('the site answered with a robot check (captcha) instead of the page');
    for (const title of ['Just a moment...', 'Additional Verification Required']) {
      const html = `<html><head><title>${title}</title></head><body><p>Checking your browser before accessing the site.</p></body></html>`;
      expect(scrapeError(() => parseJobListing(html, AUSTIN, at)).detail).toBe('the site answered with a bot challenge instead of the page');
    }
  });

  it('a page with neither jobs nor a no-results message is a ScrapeError', () => {
    const detail =
      'no job cards on the page (no mosaic-provider-jobcards data, div.job_seen_beacon card or JobPosting JSON-LD): the layout changed or the page is not an Indeed search page';
    expect(
      scrapeError(() => parseJobListing('<html><head><title>Example Domain</title></head><body><h1>Example Domain</h1></body></html>', AUSTIN, at)).detail,
    ).toBe(detail);
    expect(scrapeError(() => parseJobListing(readFixture('synthetic/company-reviews-acmeoutdoor-markup.html'), AUSTIN, at)).detail).toBe(detail);
    const untitled = '<html><body><ul><li><div class="job_seen_beacon"><h2 class="jobTitle"></h2></div></li></ul></body></html>';
    expect(scrapeError(() => parseJobListing(untitled, AUSTIN, at)).detail).toBe('job cards without titles (no h2.jobTitle text): the layout changed');
  });

  it('the older layout: td.resultContent in an li, .companyName, .companyLocation, .job-snippet, span.date, a sponsored label', () => {
    const html = `<html><body><ul id="mosaic">
      <li><a class="tapItem" data-jk="00aa11bb22cc33dd" href="/rc/clk?jk=00aa11bb22cc33dd"><table><tr><td class="resultContent">
        <h2 class="jobTitle"><span class="label">new</span><span title="Warehouse Associate">Warehouse Associate</span></h2>
        <span class="companyName">Depot Co</span><div class="companyLocation">Remote</div>
        <div class="metadata salary-snippet-container"><div class="attribute_snippet">£11.50 an hour</div></div>
      </td></tr></table>
      <div class="job-snippet"><ul><li>Pick and pack orders.</li><li>Night shifts.</li></ul></div>
      <span class="date"><span class="visually-hidden">Posted</span>Posted 2 days ago</span></a></li>
      <li><table><tr><td class="resultContent"><h2 class="jobTitle"><a href="/company/Acme/jobs/Driver-abc"><span title="Driver">Driver</span></a></h2>
        <div><span class="sponsoredGray">Sponsored</span></div></td></tr></table></li>
    </ul></body></html>`;
    const jobs = parseJobListing(html, 'https://uk.indeed.com/jobs?q=warehouse', at);
    expect(jobs).toEqual([
      {
        position: 1,
        id: '00aa11bb22cc33dd',
        title: 'Warehouse Associate',
        company: 'Depot Co',
        location: 'Remote',
        posted_at: '2026-02-27T12:00:00.000Z',
        posted_text: 'Posted 2 days ago',
        salary_text: '£11.50 an hour',
        url: 'https://uk.indeed.com/viewjob?jk=00aa11bb22cc33dd',
        snippet: 'Pick and pack orders. Night shifts.',
        remote: true,
        sponsored: false,
      },
      {
        position: 2,
        id: null,
        title: 'Driver',
        company: null,
        location: null,
        posted_at: null,
        posted_text: null,
        salary_text: null,
        url: 'https://uk.indeed.com/company/Acme/jobs/Driver-abc',
        snippet: null,
        remote: false,
        sponsored: true,
      },
    ]);
  });

  it('JSON-LD alone (a bare array, no cards): the postings in their order', () => {
    const postings = [
      {
        '@type': 'JobPosting',
        title: 'Barista',
        hiringOrganization: { name: 'Bean Bar' },
        jobLocation: { address: { addressCountry: 'IE' } },
        datePosted: '2026-02-27',
        baseSalary: { currency: 'EUR', value: { value: 14.5, unitText: 'HOUR' } },
      },
      { '@type': 'JobPosting', title: 'Head Chef', url: '/jobs/view/42', identifier: 42, description: '<p>Run a <b>busy</b> kitchen.</p>' },
    ];
    const html = `<html><head><script type="application/ld+json">${JSON.stringify(postings)}</script></head><body><div id="app"></div></body></html>`;
    expect(parseJobListing(html, 'https://jobs.example/search?q=food', at)).toEqual([
      {
        position: 1,
        id: null,
        title: 'Barista',
        company: 'Bean Bar',
        location: 'IE',
        posted_at: '2026-02-27T00:00:00.000Z',
        posted_text: null,
        salary_text: '€14.50 an hour',
        url: 'https://jobs.example/search?q=food',
        snippet: null,
        remote: false,
        sponsored: false,
      },
      {
        position: 2,
        id: '42',
        title: 'Head Chef',
        company: null,
        location: null,
        posted_at: null,
        posted_text: null,
        salary_text: null,
        url: 'https://jobs.example/jobs/view/42',
        snippet: 'Run a busy kitchen.',
        remote: false,
        sponsored: false,
      },
    ]);
  });
});
