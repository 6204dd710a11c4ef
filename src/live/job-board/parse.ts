/**
 * A job board's search results page (an Indeed-like `/jobs?q=&l=&start=`, 10 jobs a page, plus
 * sponsored ones): every job card becomes a `JobItem`, in page order.
 *
 * No real page was captured: the selectors follow the markup public scrapers document, checked
 * only against hand-written pages (test/fixtures/pages/synthetic/REVIEWS-JOBS.PROVENANCE.md):
 * - a card is `div.job_seen_beacon` (older: `td.resultContent` in an `li`); its list item also
 *   holds the date and snippet shelf, and the `sponsoredJob` class of a sponsored card;
 * - title `h2.jobTitle a[data-jk] span[title]`, the id in `data-jk`, the job's page `/viewjob?jk=<id>`;
 * - `[data-testid="company-name"]`, `[data-testid="text-location"]` (older `.companyName`,
 *   `.companyLocation`); salary in `.salary-snippet-container`, else the one
 *   `[data-testid="attribute_snippet_testid"]` that reads like pay (its siblings say "Full-time");
 * - date `[data-testid="myJobsStateDate"]` / `span.date`, with a screen-reader "Posted" inside;
 *   snippet `[data-testid="jobsnippet_footer"] li` / `.job-snippet`.
 * schema.org `JobPosting` JSON-LD (alone, in an array, an `@graph` or an `ItemList`) is read first
 * where a page carries it: its values stand before the card's, joined on the job id.
 */
import { shownDate } from '../dates.js';
import { clean, hasType, isObj, jsonLd, ldNodes, list, num, obj, str, type Json } from '../json-ld.js';
import { mergeById, prefer } from '../merge.js';
import { absoluteUrl, assertNotRobotCheck, loadPage, ScrapeError, shownText, textOf } from '../page.js';

export interface JobItem {
  /** 1-based, in the returned list. */
  position: number;
  /** The board's job key (`data-jk`). */
  id: string | null;
  title: string;
  company: string | null;
  /** As shown: "Remote in Austin, TX", "Hybrid work in Denver, CO 80202". */
  location: string | null;
  /**
   * ISO: JSON-LD `datePosted`, else the shown age resolved against the fetch time ("30+ days ago"
   * is an upper bound). Null for "Active 3 days ago", which dates the employer, not the job.
   */
  posted_at: string | null;
  posted_text: string | null;
  salary_text: string | null;
  /** The job's own page: `{origin}/viewjob?jk=<id>`, else the card's or JSON-LD's link. */
  url: string;
  snippet: string | null;
  /** "Remote" in the location or attributes (not "Hybrid"), or JSON-LD `jobLocationType` TELECOMMUTE. */
  remote: boolean;
  sponsored: boolean;
}

const BEACON = 'div.job_seen_beacon';
const OLD_CARD = 'li td.resultContent';
const NO_RESULTS = /did not match any jobs|no jobs found|no results found|we (?:couldn|could not)[’']?t? find any jobs/i;
/** Pay as cards show it: "$120,000 - $150,000 a year", "£14.50 an hour", "From $95,000 a year". */
const PAY = /[$£€₹¥]\s?\d|\d[\d,.]*\s*(?:an?|per)\s+(?:hour|day|week|month|year)\b/i;
const SNIPPET_CHARS = 300;

/**
 * The page's jobs, organic and sponsored, in page order; JSON-LD postings no card shows come
 * last. Throws ScrapeError on a robot check or bot challenge, and on a page with neither jobs
 * nor a "did not match any jobs" message. An explicit no-results page gives [].
 */
export function parseJobListing(html: string, pageUrl: string, fetchedAt: Date): JobItem[] {
  const doc = loadPage(html);
  assertNotRobotCheck(doc);
  const origin = new URL(pageUrl).origin;

  const beacons = [...doc.querySelectorAll(BEACON)];
  const sel = beacons.length ? BEACON : OLD_CARD;
  const roots = [...new Set((beacons.length ? beacons : [...doc.querySelectorAll(OLD_CARD)]).map((el) => cardRoot(el, sel)))];
  const cards = roots.map((el) => parseCard(el, origin, pageUrl, fetchedAt));
  const ld = ldPostings(doc).map((o) => ldJob(o, origin, pageUrl, fetchedAt));

  if (cards.length === 0 && ld.length === 0) {
    if (isNoResultsPage(doc)) return [];
    throw new ScrapeError('no job cards on the page: the layout changed or the page is not a job search page');
  }
  // The posting's values first; the card's shown pay and snippet before the posting's rewritten ones.
  const jobs = mergeById(
    cards.filter((c) => c.title),
    ld.filter((j) => j.title),
    { join: (j, c) => ({ ...prefer(j, c), salary_text: c.salary_text ?? j.salary_text, snippet: c.snippet ?? j.snippet }) },
  );
  if (jobs.length === 0) throw new ScrapeError('job cards without titles: the layout changed');
  return jobs.map((j, i) => ({ ...j, position: i + 1 }));
}

// ---------------------------------------------------------------------------------------------
// Cards

/** The card's list item when it holds this card alone (date, snippet and sponsored class live there), else the card. */
function cardRoot(el: Element, sel: string): Element {
  const li = el.closest('li');
  return li && li.querySelectorAll(sel).length === 1 ? li : el;
}

function parseCard(el: Element, origin: string, pageUrl: string, fetchedAt: Date): JobItem {
  const link = el.querySelector('h2.jobTitle a, a.jcs-JobTitle, a[data-jk]');
  const id = link?.getAttribute('data-jk') || el.closest('[data-jk]')?.getAttribute('data-jk') || el.querySelector('[data-jk]')?.getAttribute('data-jk') || null;
  const titleSpan = el.querySelector('h2.jobTitle span[title]');
  const location = textOf(el.querySelector('[data-testid="text-location"], .companyLocation'));
  const attributes = [...el.querySelectorAll('[data-testid="attribute_snippet_testid"]')].map((a) => textOf(a) ?? '');
  const posted_text = shownText(el.querySelector('[data-testid="myJobsStateDate"], span.date'));
  return {
    position: 0,
    id,
    title: titleSpan?.getAttribute('title')?.trim() || textOf(titleSpan) || textOf(link) || textOf(el.querySelector('h2.jobTitle')) || '',
    company: textOf(el.querySelector('[data-testid="company-name"], .companyName')),
    location,
    posted_at: postedAt(posted_text, fetchedAt),
    posted_text,
    salary_text: textOf(el.querySelector('.salary-snippet-container, .salary-snippet')) ?? attributes.find((t) => PAY.test(t)) ?? null,
    url: id ? `${origin}/viewjob?jk=${encodeURIComponent(id)}` : (absoluteUrl(link?.getAttribute('href'), pageUrl) ?? pageUrl),
    snippet: snippet(el),
    remote: [location, ...attributes].some((t) => !!t && /\bremote\b/i.test(t) && !/\bhybrid\b/i.test(t)),
    sponsored: isSponsored(el),
  };
}

/** The element's text without its screen-reader-only parts ("Posted" before "Posted 3 days ago"). */
function postedAt(text: string | null, fetchedAt: Date): string | null {
  if (!text || /^(?:employer\s*)?active\b/i.test(text)) return null;
  // "Just posted" is the board's word for today; shownDate knows "today".
  return shownDate(text.replace(/\bjust posted\b/i, 'today'), fetchedAt);
}

function snippet(el: Element): string | null {
  const items = [...el.querySelectorAll('[data-testid="jobsnippet_footer"] li, .job-snippet li')].map((li) => textOf(li)).filter(Boolean);
  return items.length ? items.join(' ') : textOf(el.querySelector('[data-testid="jobsnippet_footer"], .job-snippet'));
}

/** By markup only: the `sponsoredJob` class, a sponsored label, or a leaf that reads exactly "Sponsored". */
function isSponsored(el: Element): boolean {
  if (el.closest('.sponsoredJob') || el.querySelector('.sponsoredJob, .sponsoredGray, [data-testid="sponsored-label"]')) return true;
  return [...el.querySelectorAll('span, div')].some((e) => e.children.length === 0 && textOf(e) === 'Sponsored');
}

function isNoResultsPage(doc: Document): boolean {
  if (doc.querySelector('.jobsearch-NoResult-messageContainer, .no_results, #no_results')) return true;
  return [...doc.querySelectorAll('h1, h2, h3, p')].some((e) => NO_RESULTS.test(textOf(e) ?? ''));
}

// ---------------------------------------------------------------------------------------------
// JSON-LD

/** JobPostings standing alone, in arrays, in an `@graph`, or as `ItemList` elements (`item` or the element itself). */
function ldPostings(doc: Document): Json[] {
  const out = new Set<Json>();
  const add = (nodes: Json[], depth: number): void => {
    for (const o of nodes) {
      if (hasType(o, 'JobPosting')) out.add(o);
      if (hasType(o, 'ItemList') && depth < 4) for (const li of list(o.itemListElement)) add(ldNodes(hasType(li, 'JobPosting') ? li : li.item), depth + 1);
    }
  };
  add(jsonLd(doc), 0);
  return [...out];
}

function ldJob(o: Json, origin: string, pageUrl: string, fetchedAt: Date): JobItem {
  // `identifier` is a PropertyValue ({ value }) or the bare value
  const ident = isObj(o.identifier) ? o.identifier.value : o.identifier;
  const id = typeof ident === 'number' ? String(ident) : str(ident);
  const remote = /telecommute/i.test(String(o.jobLocationType ?? ''));
  const org = o.hiringOrganization;
  const url = str(o.url);
  return {
    position: 0,
    id,
    title: clean(str(o.title)) ?? '',
    company: clean(typeof org === 'string' ? org : str(obj(org)?.name)),
    location: ldLocation(o.jobLocation) ?? (remote ? 'Remote' : null),
    posted_at: shownDate(str(o.datePosted), fetchedAt),
    posted_text: null,
    salary_text: ldSalary(obj(o.baseSalary)),
    url: url ? (absoluteUrl(url, pageUrl) ?? pageUrl) : id ? `${origin}/viewjob?jk=${encodeURIComponent(id)}` : pageUrl,
    snippet: ldSnippet(str(o.description)),
    remote,
    sponsored: false,
  };
}

/** The first Place's address: "Austin, TX", else its country; a plain string as given. */
function ldLocation(v: unknown): string | null {
  for (const place of Array.isArray(v) ? v : [v]) {
    if (typeof place === 'string') return clean(place);
    const address = obj(place)?.address;
    if (typeof address === 'string') return clean(address);
    const a = obj(address);
    const parts = [str(a?.addressLocality), str(a?.addressRegion)].filter(Boolean);
    const country = str(a?.addressCountry) ?? str(obj(a?.addressCountry)?.name);
    if (parts.length || country) return parts.length ? parts.join(', ') : country;
  }
  return null;
}

/** A MonetaryAmount written the way the board writes pay: "$38 - $45 an hour", "$95,000 a year". */
function ldSalary(amount: Json | undefined): string | null {
  if (!amount) return null;
  const currency = str(amount.currency);
  const value = obj(amount.value);
  const fixed = num(amount.value);
  const min = num(value?.minValue) ?? num(value?.value) ?? fixed;
  const max = num(value?.maxValue) ?? min;
  if (min === null || max === null) return null;
  const money = (n: number): string => {
    try {
      if (currency) return new Intl.NumberFormat('en-US', { style: 'currency', currency, maximumFractionDigits: Number.isInteger(n) ? 0 : 2 }).format(n);
    } catch {
      // not an ISO 4217 code: show it beside the number
    }
    return `${currency ? `${currency} ` : ''}${n.toLocaleString('en-US')}`;
  };
  const unit = (str(value?.unitText) ?? '').toLowerCase();
  const per = unit ? ` ${/^[aeiou]|^hour/.test(unit) ? 'an' : 'a'} ${unit}` : '';
  return `${min === max ? money(min) : `${money(min)} - ${money(max)}`}${per}`;
}

/** The description's text (it is HTML), cut at a word near SNIPPET_CHARS. */
function ldSnippet(description: string | null): string | null {
  if (!description) return null;
  const text = textOf(loadPage(`<!DOCTYPE html><html><body>${description}</body></html>`).body);
  if (!text || text.length <= SNIPPET_CHARS) return text;
  const cut = text.slice(0, SNIPPET_CHARS);
  return `${cut.slice(0, cut.lastIndexOf(' ') > 0 ? cut.lastIndexOf(' ') : SNIPPET_CHARS).replace(/[\s,.;:]+$/, '')}…`;
}
