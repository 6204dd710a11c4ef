/**
 * LinkedIn's guest job search fragment (`/jobs-guest/jobs/api/seeMoreJobPostings/search?
 * keywords=&location=&start=`, 10 jobs a call): a bare list of `<li>` cards, no page around them.
 * Each card is `div.base-search-card.job-search-card[data-entity-urn="urn:li:jobPosting:<id>"]`
 * with
 * - `a.base-card__full-link` to `/jobs/view/<slug>-<id>?position=…&refId=…&trackingId=…`;
 * - `h3.base-search-card__title`, `h4.base-search-card__subtitle` (the company),
 *   `span.job-search-card__location`;
 * - `time.job-search-card__listdate[datetime="2026-06-04"]` (`…__listdate--new` when fresh) with
 *   the age it shows ("1 week ago"): the date is the board's own, and finer than the age
 *   (LinkedIn shows "1 week ago" for 13 days);
 * - pay, where shown, in `span.job-search-card__salary-info`; no description, so no snippet
 *   unless a `.job-search-card__snippet` is there.
 * Checked against test/fixtures/pages/job-board/linkedin_jobs_guest_search_fragment_2026-06.html.
 */
import { isoInstant, shownDate } from '../dates.js';
import { absoluteUrl, assertNotRobotCheck, loadPage, ScrapeError, textOf } from '../page.js';
import type { JobItem } from './types.js';

const CARD = '.base-search-card, .job-search-card';

/**
 * The fragment's job cards in order. An empty body is the answer past the last page: [].
 * Throws ScrapeError on a robot check and on a body without job cards.
 */
export function parseLinkedIn(html: string, pageUrl: string, fetchedAt: Date): JobItem[] {
  if (!html.replace(/<!doctype[^>]*>/i, '').trim()) return [];
  const doc = loadPage(html);
  const cards = [...doc.querySelectorAll(CARD)];
  if (cards.length === 0) {
    assertNotRobotCheck(doc);
    throw new ScrapeError(
      'no job cards on the page (no .base-search-card / .job-search-card element): the layout changed or the page is not a LinkedIn guest job search',
    );
  }
  const jobs = cards.map((card) => parseCard(card, pageUrl, fetchedAt)).filter((j) => j.title);
  if (jobs.length === 0) throw new ScrapeError('job cards without titles (no .base-search-card__title text): the layout changed');
  return jobs.map((j, i) => ({ ...j, position: i + 1 }));
}

function parseCard(card: Element, pageUrl: string, fetchedAt: Date): JobItem {
  const link = card.matches('a[href]') ? card : card.querySelector('a.base-card__full-link[href]');
  const href = absoluteUrl(link?.getAttribute('href'), pageUrl);
  const id =
    /urn:li:jobPosting:(\d+)/.exec(card.getAttribute('data-entity-urn') ?? '')?.[1] ?? (href && /-(\d+)(?:[/?#]|$)/.exec(new URL(href).pathname)?.[1]) ?? null;
  const time = card.querySelector('time');
  const posted_text = textOf(time);
  const location = textOf(card.querySelector('.job-search-card__location'));
  return {
    position: 0,
    id,
    title: textOf(card.querySelector('.base-search-card__title')) ?? textOf(link) ?? '',
    company: textOf(card.querySelector('.base-search-card__subtitle')),
    location,
    posted_at: isoInstant(time?.getAttribute('datetime')) ?? shownDate(posted_text, fetchedAt),
    posted_text,
    salary_text: textOf(card.querySelector('.job-search-card__salary-info')),
    url: jobUrl(href, id, pageUrl),
    snippet: textOf(card.querySelector('.job-search-card__snippet')),
    remote: !!location && /\bremote\b/i.test(location) && !/\bhybrid\b/i.test(location),
    // LinkedIn labels a paid card "Promoted", in a leaf of its own
    sponsored: [...card.querySelectorAll('span, div, li, p')].some((e) => e.children.length === 0 && textOf(e) === 'Promoted'),
  };
}

/** The job's page without the search's tracking (`position`, `pageNum`, `refId`, `trackingId`); `/jobs/view/<id>` when the card has no link. */
function jobUrl(href: string | null, id: string | null, pageUrl: string): string {
  if (href) {
    const u = new URL(href);
    u.search = '';
    u.hash = '';
    return u.href;
  }
  return id ? new URL(`/jobs/view/${id}`, pageUrl).href : pageUrl;
}
