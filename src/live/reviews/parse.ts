/**
 * A company's public review profile (a Trustpilot-like `…/review/<company-domain>?page=N`, 20
 * reviews a page): the company's header and the reviews of one page.
 *
 * schema.org JSON-LD is read first: an `@graph` (or array) holding the business (a LocalBusiness
 * or Organization with `aggregateRating`), its `Review` items, a `BreadcrumbList` of categories
 * and a `Dataset` of star counts. The markup is read second: only it carries the reviewer's
 * country, the date of experience, the "Verified" label and the company's reply, and it is the
 * whole source where the JSON-LD is missing. No real page was captured: the fixtures are
 * synthetic (test/fixtures/pages/synthetic/REVIEWS-JOBS.PROVENANCE.md).
 *
 *   parseCompanyReviews(html, 'https://www.trustpilot.com/review/acme.com?page=2', fetchedAt)
 *   → { company: { name: 'Acme', domain: 'acme.com', url: 'https://www.trustpilot.com/review/acme.com',
 *       rating: 4.2, reviews_count: 132, rating_distribution: { 1: 15, 2: 5, 3: 9, 4: 22, 5: 81 },
 *       categories: ['Camping Store'] },
 *       reviews: [{ id: '65f…', rating: 5, title: 'Tent arrived early', … }, …], page: 2, total_pages: 7 }
 */
import { shownDate } from '../dates.js';
import { clean, first, hasType, isObj, jsonLd, list, num, obj, type Json } from '../json-ld.js';
import { mergeById } from '../merge.js';
import { assertNotRobotCheck, loadPage, ScrapeError, textOf } from '../page.js';

/** Review counts by star; from percentages (rounded, so approximate) where the page shows only those. */
export type RatingDistribution = Record<1 | 2 | 3 | 4 | 5, number>;

export interface CompanySummary {
  name: string;
  /** The reviewed company's domain (`/review/<domain>`), else the host of its JSON-LD `url`. */
  domain: string | null;
  /** The review profile's URL, without the query. */
  url: string;
  /** Out of 5. */
  rating: number | null;
  reviews_count: number | null;
  rating_distribution: RatingDistribution | null;
  categories: string[];
}

export interface ReviewReply {
  body: string;
  date: string | null;
}

export interface Review {
  id: string | null;
  /** 1 to 5. */
  rating: number;
  title: string | null;
  body: string;
  author: string | null;
  /** As shown: a country code ("GB") or name. */
  author_country: string | null;
  /** ISO: the review's `<time datetime>`, else its shown text; null only when the card shows none. */
  date: string | null;
  experience_date: string | null;
  verified: boolean;
  reply: ReviewReply | null;
}

export interface CompanyReviewsPage {
  company: CompanySummary;
  reviews: Review[];
  page: number | null;
  total_pages: number | null;
}

const CARD = 'article[data-service-review-card-paper]';
/** Header markers of a profile that may have no review cards (a company without reviews). */
const HEADER = '[data-rating-typography], [data-reviews-count-typography]';
const NOT_FOUND = /page not found|\b404\b|(?:couldn|can)[’']t find|could not find|cannot find|(?:doesn|does not)[’']?t? exist/i;
const STAR_WORDS: Record<string, number> = { one: 1, two: 2, three: 3, four: 4, five: 5 };

/**
 * The profile's company and the page's reviews, in page order. Null for the site's "profile not
 * found" page. Throws ScrapeError on a robot check or bot challenge, and on a page with neither
 * profile markers nor a not-found message (layout change, or another kind of page).
 */
export function parseCompanyReviews(html: string, pageUrl: string, fetchedAt: Date): CompanyReviewsPage | null {
  const doc = loadPage(html);
  assertNotRobotCheck(doc);

  const ld = jsonLd(doc);
  // The business is the object rated; the site's own Organization (on every page, 404 included) is not.
  const business = ld.find((o) => isObj(o.aggregateRating)) ?? ld.find((o) => hasType(o, 'LocalBusiness'));
  const cards = [...doc.querySelectorAll(CARD)];
  if (!business && cards.length === 0 && !doc.querySelector(HEADER)) {
    if (isNotFound(doc)) return null;
    throw new ScrapeError('no company profile or review cards on the page: the layout changed or the page is not a review profile');
  }

  // Reviews stand in the @graph, or inside the business's `review` list.
  const ldReviews = [...ld, ...list(business?.review)].filter((o) => hasType(o, 'Review'));
  // The JSON-LD's values first, the card's filling what it lacks; without ids on either side,
  // equal counts pair by position.
  const drafts = mergeById(
    cards.map((c) => cardReview(c, fetchedAt)),
    ldReviews.map((o) => ldReview(o, fetchedAt)),
    { byPosition: true },
  );
  const reviews = drafts.filter((r): r is Review => r.rating !== null);
  if (drafts.length > 0 && reviews.length === 0) throw new ScrapeError('review cards without star ratings: the layout changed');

  const page = currentPage(doc, pageUrl);
  return { company: company(doc, business, ld, pageUrl), reviews, page, total_pages: totalPages(doc, page) };
}

// ---------------------------------------------------------------------------------------------
// Company

function company(doc: Document, business: Json | undefined, ld: Json[], pageUrl: string): CompanySummary {
  const agg = obj(business?.aggregateRating);
  const h1 = doc.querySelector('h1');
  const name =
    first(business?.name) ??
    textOf(h1?.querySelector('[class*="displayName"]')) ??
    // the h1 also holds "Reviews 1,234": keep what comes before it
    textOf(h1)?.replace(/\s*Reviews\s+[\d,.\s]+$/i, '') ??
    null;
  const domain = profileDomain(pageUrl) ?? hostOf(first(business?.url) ?? first(business?.sameAs));
  if (!name && !domain) throw new ScrapeError('a review profile without a company name: the layout changed');
  const reviews_count = int(agg?.reviewCount ?? agg?.ratingCount) ?? headerCount(doc);
  const url = new URL(pageUrl);
  url.search = '';
  url.hash = '';
  return {
    name: (name || domain)!,
    domain,
    url: url.href,
    rating: decimal(agg?.ratingValue) ?? decimal(textOf(doc.querySelector('[data-rating-typography]'))),
    reviews_count,
    rating_distribution: ldDistribution(ld) ?? markupDistribution(doc, reviews_count),
    categories: categories(doc, ld),
  };
}

/** `/review/www.acme.com` → "www.acme.com". */
function profileDomain(pageUrl: string): string | null {
  const m = /\/review\/([^/?#]+)/.exec(new URL(pageUrl).pathname);
  return m ? decodeURIComponent(m[1]!).toLowerCase() : null;
}

/** "Reviews 1,234" in the h1, or a reviews-count element ("Based on 1,234 reviews"). */
function headerCount(doc: Document): number | null {
  const t = textOf(doc.querySelector('[data-reviews-count-typography]')) ?? textOf(doc.querySelector('h1'));
  const n = '(\\d{1,3}(?:[,.\\u00a0 ]\\d{3})+|\\d+)';
  const m = t && (new RegExp(`${n}\\s*reviews?\\b`, 'i').exec(t) ?? new RegExp(`\\breviews?\\s+${n}`, 'i').exec(t));
  return m ? int(m[1]) : null;
}

/** The site's `Dataset` of star counts: a csvw table whose columns are "1 star" … "5 stars" and "Total". */
function ldDistribution(ld: Json[]): RatingDistribution | null {
  const table = ld.filter((o) => hasType(o, 'Dataset')).map((o) => obj(o.mainEntity)).find(Boolean);
  const columns = list(obj(table?.['csvw:tableSchema'])?.['csvw:columns']);
  const out: Partial<RatingDistribution> = {};
  for (const col of columns) {
    const star = /^([1-5]) stars?$/i.exec(first(col['csvw:name']) ?? '');
    const n = int(list(col['csvw:cells'])[0]?.['csvw:value']);
    if (star && n !== null) out[Number(star[1]) as 1] = n;
  }
  return complete(out);
}

/** Rows of the rating filter: the star from `data-star-rating` ("five") or "5-star", then a count or a percentage. */
function markupDistribution(doc: Document, total: number | null): RatingDistribution | null {
  const out: Partial<RatingDistribution> = {};
  for (const row of doc.querySelectorAll('[data-rating-distribution-row]')) {
    const attr = (row.getAttribute('data-star-rating') ?? '').toLowerCase();
    const star = STAR_WORDS[attr] ?? (Number(/([1-5])[- ]?stars?/i.exec(textOf(row) ?? '')?.[1]) || Number(attr) || 0);
    if (star < 1 || star > 5) continue;
    const values = [...row.querySelectorAll('*')].filter((e) => e.children.length === 0).map((e) => textOf(e) ?? '');
    const pct = values.map((v) => /^(\d+(?:\.\d+)?)\s*%$/.exec(v)).find(Boolean);
    const count = values.find((v) => /^\d[\d,]*$/.test(v) && !/star/i.test(v));
    if (count !== undefined) out[star as 1] = int(count)!;
    else if (pct && total !== null) out[star as 1] = Math.round((Number(pct[1]) * total) / 100);
  }
  return complete(out);
}

function complete(d: Partial<RatingDistribution>): RatingDistribution | null {
  return ([1, 2, 3, 4, 5] as const).every((s) => d[s] !== undefined) ? (d as RatingDistribution) : null;
}

/** Category names: the JSON-LD breadcrumb's `/categories/` items, else the page's category links (not the site footer's). */
function categories(doc: Document, ld: Json[]): string[] {
  const fromLd = ld
    .filter((o) => hasType(o, 'BreadcrumbList'))
    .flatMap((o) => list(o.itemListElement))
    .filter((li) => /\/categories\/[^/]/.test(first(li.item) ?? first(obj(li.item)?.['@id']) ?? ''))
    .map((li) => first(li.name))
    .filter((n): n is string => !!n);
  if (fromLd.length) return [...new Set(fromLd)];
  const links = [...doc.querySelectorAll('a[href*="/categories/"]')].filter((a) => !a.closest('footer'));
  return [...new Set(links.map((a) => textOf(a)).filter((n): n is string => !!n))];
}

// ---------------------------------------------------------------------------------------------
// Reviews

type Draft = Omit<Review, 'rating'> & { rating: number | null };

function ldReview(o: Json, fetchedAt: Date): Draft {
  const author = o.author;
  return {
    // "https://…/#/schema/Review/<domain>/<review id>"
    id: first(o['@id'])?.split('/').pop() || null,
    rating: stars(decimal(obj(o.reviewRating)?.ratingValue)),
    title: clean(first(o.headline) ?? first(o.name)),
    body: clean(first(o.reviewBody) ?? first(o.description)) ?? '',
    author: clean(typeof author === 'string' ? author : first(obj(author)?.name)),
    author_country: null,
    date: shownDate(first(o.datePublished), fetchedAt),
    experience_date: null,
    verified: false,
    reply: null,
  };
}

function cardReview(card: Element, fetchedAt: Date): Draft {
  const replyText = card.querySelector('[data-service-review-business-reply-text-typography]');
  // The reply's own box: the nearest ancestor of its text that holds its date, short of the card.
  let replyBox = replyText?.parentElement ?? null;
  while (replyBox && replyBox !== card && !replyBox.querySelector('time')) replyBox = replyBox.parentElement;
  if (replyBox === card) replyBox = replyText?.parentElement ?? null;
  const time =
    card.querySelector('time[data-service-review-date-time-ago]') ??
    [...card.querySelectorAll('time')].find((t) => !replyBox?.contains(t)) ??
    null;
  const replyTime = replyBox?.querySelector('time') ?? null;
  const experience = textOf(card.querySelector('[data-service-review-date-of-experience-typography]'));
  const href = card.querySelector('a[href*="/reviews/"]')?.getAttribute('href') ?? '';
  return {
    id: /\/reviews\/([^/?#]+)/.exec(href)?.[1] ?? null,
    rating: stars(cardRating(card)),
    title: textOf(card.querySelector('[data-service-review-title-typography]')),
    body: textOf(card.querySelector('[data-service-review-text-typography]')) ?? '',
    author: textOf(card.querySelector('[data-consumer-name-typography]')),
    author_country: textOf(card.querySelector('[data-consumer-country-typography]')),
    date: timeDate(time, fetchedAt),
    // "Date of experience: February 10, 2026"
    experience_date: shownDate(experience?.replace(/^[^:]*:/, ''), fetchedAt),
    verified: [...card.querySelectorAll('[data-review-label-tooltip-trigger-typography], [data-review-label]')].some((e) => /^verified\b/i.test(textOf(e) ?? '')),
    reply: replyText ? { body: textOf(replyText) ?? '', date: timeDate(replyTime, fetchedAt) } : null,
  };
}

/** `data-service-review-rating="4"`, else the star image's alt "Rated 4 out of 5 stars". */
function cardRating(card: Element): number | null {
  const attr = card.querySelector('[data-service-review-rating]')?.getAttribute('data-service-review-rating');
  if (attr && decimal(attr) !== null) return decimal(attr);
  for (const img of card.querySelectorAll('img[alt]')) {
    const m = /(\d(?:\.\d)?)\s*out of 5/i.exec(img.getAttribute('alt') ?? '');
    if (m) return Number(m[1]);
  }
  return null;
}

function timeDate(time: Element | null, fetchedAt: Date): string | null {
  return time ? (shownDate(time.getAttribute('datetime'), fetchedAt) ?? shownDate(textOf(time), fetchedAt)) : null;
}

function stars(n: number | null): number | null {
  return n !== null && n >= 1 && n <= 5 ? n : null;
}

// ---------------------------------------------------------------------------------------------
// Pagination, page kinds

/** The highlighted pagination button, else `?page=`, else 1 (the profile's first page has no parameter). */
function currentPage(doc: Document, pageUrl: string): number | null {
  const current = doc.querySelector('a[name^="pagination-button-"][aria-current="page"]');
  const fromButton = int(textOf(current));
  if (fromButton !== null) return fromButton;
  const param = new URL(pageUrl).searchParams.get('page');
  return param === null ? 1 : int(param);
}

/** The highest numbered pagination button; without any, a page with no usable "next" link is the last. */
function totalPages(doc: Document, page: number | null): number | null {
  const numbered = [...doc.querySelectorAll('a[name^="pagination-button-"]')]
    .map((a) => /^pagination-button-(\d+)$/.exec(a.getAttribute('name') ?? '')?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number);
  if (numbered.length) return Math.max(...numbered, page ?? 0);
  const next = doc.querySelector('a[name="pagination-button-next"]');
  return next?.getAttribute('href') && next.getAttribute('aria-disabled') !== 'true' ? null : page;
}

function isNotFound(doc: Document): boolean {
  return [doc.querySelector('title'), doc.querySelector('h1')].some((e) => NOT_FOUND.test(textOf(e) ?? ''));
}

// ---------------------------------------------------------------------------------------------
// Values (JSON-LD strings are read with `first`: any field of this site's JSON-LD may be an array)

/** A rating as the page writes it, a decimal comma too: "4,2" is 4.2. */
function decimal(v: unknown): number | null {
  return num(typeof v === 'string' ? v.replace(',', '.') : v);
}

/** "1,234" → 1234. */
function int(v: unknown): number | null {
  if (typeof v === 'number') return Number.isInteger(v) ? v : null;
  const t = typeof v === 'string' ? v.replace(/[,.\s\u00a0]/g, '') : '';
  return /^\d+$/.test(t) ? Number(t) : null;
}

function hostOf(url: string | null): string | null {
  try {
    return url ? new URL(url).hostname : null;
  } catch {
    return null;
  }
}
