/**
 * Indeed's search results page (`/jobs?q=&l=&start=`): its jobs, organic and sponsored, in page
 * order. Three sources, joined on the job key, the site's own data first:
 * - the mosaic JSON the page embeds for its cards, `window.mosaic.providerData
 *   ["mosaic-provider-jobcards"] = {metaData: {mosaicProviderJobCardsModel: {results: […]}}}`:
 *   `jobkey`, `displayTitle`, `company`, `formattedLocation` with `remoteWorkModel`,
 *   `createDate` (epoch ms) and `formattedRelativeTime`, `salarySnippet.text`, `snippet` (HTML),
 *   `remoteLocation`, `sponsored`. Read first where present: the cards a browser renders from it
 *   may leave out the pay and the age (the real capture in test/fixtures/pages/job-board/ shows
 *   neither);
 * - the cards: `div.job_seen_beacon` (older: `td.resultContent` in an `li`), whose list item
 *   holds the date and snippet shelf and the `sponsoredJob` class of a sponsored card; title
 *   `h2.jobTitle a[data-jk] span[title]`, `[data-testid="company-name"]`,
 *   `[data-testid="text-location"]` (older `.companyName`, `.companyLocation`), pay in
 *   `.salary-snippet-container` or the one `[data-testid="attribute_snippet_testid"]` that reads
 *   like pay, date `[data-testid="myJobsStateDate"]` / `span.date`, snippet
 *   `[data-testid="belowJobSnippet"]` / `[data-testid="jobsnippet_footer"]` / `.job-snippet`.
 *   A card under `aria-hidden="true"` is a layout placeholder (the real page has one, job key
 *   123456789abcdef0, in no JSON), not a job;
 * - schema.org `JobPosting` JSON-LD (alone, in an array, an `@graph` or an `ItemList`), which
 *   job view pages carry (tested on hand-written pages only: test/fixtures/pages/synthetic/).
 */
import { shownDate } from '../dates.js';
import { clean, hasType, isObj, jsonLd, ldNodes, list, num, obj, str, type Json } from '../json-ld.js';
import { mergeById, prefer } from '../merge.js';
import { absoluteUrl, assertNotRobotCheck, loadPage, ScrapeError, shownText, textOf } from '../page.js';
import type { JobItem } from './types.js';

const BEACON = 'div.job_seen_beacon';
const OLD_CARD = 'li td.resultContent';
const MOSAIC = 'window.mosaic.providerData["mosaic-provider-jobcards"]';
const NO_RESULTS = /did not match any jobs|no jobs found|no results found|we (?:couldn|could not)[’']?t? find any jobs/i;
/** Pay as cards show it: "$120,000 - $150,000 a year", "£14.50 an hour", "From $95,000 a year". */
const PAY = /[$£€₹¥]\s?\d|\d[\d,.]*\s*(?:an?|per)\s+(?:hour|day|week|month|year)\b/i;
const SNIPPET_CHARS = 300;

/**
 * The page's jobs: the mosaic JSON's and the cards' in page order, then JSON-LD postings no
 * card shows. Throws ScrapeError on a robot check or bot challenge, and on a page with neither
 * jobs nor a "did not match any jobs" message. An explicit no-results page gives [].
 */
export function parseIndeed(html: string, pageUrl: string, fetchedAt: Date): JobItem[] {
  const doc = loadPage(html);
  const origin = new URL(pageUrl).origin;

  const mosaic = mosaicResults(doc).map((r) => mosaicJob(r, origin, pageUrl, fetchedAt));
  const beacons = [...doc.querySelectorAll(BEACON)];
  const sel = beacons.length ? BEACON : OLD_CARD;
  const shown = (beacons.length ? beacons : [...doc.querySelectorAll(OLD_CARD)]).filter((el) => !el.closest('[aria-hidden="true"]'));
  const cards = [...new Set(shown.map((el) => cardRoot(el, sel)))].map((el) => parseCard(el, origin, pageUrl, fetchedAt));
  const ld = ldPostings(doc).map((o) => ldJob(o, origin, pageUrl, fetchedAt));

  if (mosaic.length === 0 && cards.length === 0 && ld.length === 0) {
    // Only now: every real results page carries an invisible reCAPTCHA iframe (for its apply
    // forms), which a robot check looks for; a page with jobs on it is no robot check.
    assertNotRobotCheck(doc);
    if (isNoResultsPage(doc)) return [];
    throw new ScrapeError(
      'no job cards on the page (no mosaic-provider-jobcards data, div.job_seen_beacon card or JobPosting JSON-LD): the layout changed or the page is not an Indeed search page',
    );
  }
  // The mosaic's values first, the card's where it has none; then the posting's values, with the
  // card's shown pay and snippet before the posting's rewritten ones.
  const onPage = mergeById(
    cards.filter((c) => c.title),
    mosaic.filter((m) => m.title),
  );
  const jobs = mergeById(
    onPage,
    ld.filter((j) => j.title),
    {
      join: (j, c) => ({ ...prefer(j, c), salary_text: c.salary_text ?? j.salary_text, snippet: c.snippet ?? j.snippet }),
    },
  );
  if (jobs.length === 0) throw new ScrapeError('job cards without titles (no h2.jobTitle text): the layout changed');
  return jobs.map((j, i) => ({ ...j, position: i + 1 }));
}

// ---------------------------------------------------------------------------------------------
// Mosaic JSON

/** The `results` of the job cards' mosaic model; [] when the page has none. */
function mosaicResults(doc: Document): Json[] {
  for (const script of doc.querySelectorAll('script')) {
    const text = script.textContent ?? '';
    const at = text.indexOf(MOSAIC);
    if (at < 0) continue;
    // The value is JSON serialised on one line after "= ", ending with ";".
    const start = text.indexOf('{', at + MOSAIC.length);
    const end = text.indexOf('\n', start);
    try {
      const data: unknown = JSON.parse(
        text
          .slice(start, end < 0 ? undefined : end)
          .trim()
          .replace(/;$/, ''),
      );
      return list(obj(obj(obj(data)?.metaData)?.mosaicProviderJobCardsModel)?.results);
    } catch {
      return []; // a broken blob: the cards still stand
    }
  }
  return [];
}

function mosaicJob(r: Json, origin: string, pageUrl: string, fetchedAt: Date): JobItem {
  const id = str(r.jobkey);
  // "Remote in Colorado Springs, CO": the card writes the work model before the place when
  // `inlineText` says so (the place alone is "Colorado Springs, CO").
  const model = obj(r.remoteWorkModel);
  const place = clean(r.formattedLocation);
  const mode = model?.inlineText === true ? clean(model.text) : null;
  const location = mode && place && !place.toLowerCase().includes(mode.toLowerCase()) ? `${mode} in ${place}` : (place ?? mode);
  const posted_text = clean(r.formattedRelativeTime);
  // The shown age counts from `createDate` ("15 days ago" is 15.7 days before the page's
  // `searchTimestamp`); `pubDate` is older, by months for a job the employer posted again.
  const created = num(r.createDate);
  const link = str(r.link);
  return {
    position: 0,
    id,
    title: clean(r.displayTitle) ?? clean(r.title) ?? '',
    company: clean(r.company),
    location,
    posted_at: created !== null && created > 0 ? new Date(created).toISOString() : postedAt(posted_text, fetchedAt),
    posted_text,
    salary_text: clean(obj(r.salarySnippet)?.text),
    url: id ? `${origin}/viewjob?jk=${encodeURIComponent(id)}` : ((link && absoluteUrl(link, pageUrl)) ?? pageUrl),
    snippet: htmlSnippet(str(r.snippet)),
    remote: r.remoteLocation === true || /^remote/i.test(str(model?.type) ?? '') || isRemote(location),
    sponsored: r.sponsored === true,
  };
}

/** The snippet HTML's list items, or its text. */
function htmlSnippet(html: string | null): string | null {
  if (!html) return null;
  const body = loadPage(`<!DOCTYPE html><html><body>${html}</body></html>`).body;
  const items = [...body.querySelectorAll('li')].map((li) => textOf(li)).filter(Boolean);
  return items.length ? items.join(' ') : textOf(body);
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
  const id =
    link?.getAttribute('data-jk') || el.closest('[data-jk]')?.getAttribute('data-jk') || el.querySelector('[data-jk]')?.getAttribute('data-jk') || null;
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
    snippet: cardSnippet(el),
    remote: [location, ...attributes].some(isRemote),
    sponsored: isSponsored(el),
  };
}

/** "Remote …", not "Hybrid …". */
function isRemote(text: string | null): boolean {
  return !!text && /\bremote\b/i.test(text) && !/\bhybrid\b/i.test(text);
}

/** The shown age as an instant ("Posted" before "Posted 3 days ago" is screen-reader text, already left out). */
function postedAt(text: string | null, fetchedAt: Date): string | null {
  if (!text || /^(?:employer\s*)?active\b/i.test(text)) return null;
  // "Just posted" is the board's word for today; shownDate knows "today".
  return shownDate(text.replace(/\bjust posted\b/i, 'today'), fetchedAt);
}

const SNIPPET = ['[data-testid="belowJobSnippet"]', '[data-testid="jobsnippet_footer"]', '.job-snippet'];

function cardSnippet(el: Element): string | null {
  const items = [...el.querySelectorAll(SNIPPET.map((s) => `${s} li`).join(', '))].map((li) => textOf(li)).filter(Boolean);
  return items.length ? items.join(' ') : textOf(el.querySelector(SNIPPET.join(', ')));
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
