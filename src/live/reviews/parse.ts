/**
 * A company's public review profile (a Trustpilot-like `…/review/<company-domain>?page=N`, 20
 * reviews a page): the company's header and the reviews of one page.
 *
 * Three sources, the structured ones first, joined by review id:
 *   1. `script#__NEXT_DATA__` (the site is a Next.js app): `props.pageProps` holds the
 *      `businessUnit` (name, trust score, review count, category breadcrumb), the page's
 *      `reviews` with everything a card shows (country, dates, verification, the reply with its
 *      line breaks) and `filters` (the pagination and the count per star).
 *   2. schema.org JSON-LD: an `@graph` holding the business (a LocalBusiness with
 *      `aggregateRating`), its `Review` items, a `BreadcrumbList` of categories and a `Dataset`
 *      of star counts. It lacks the country, the date of experience, the "Verified" label and
 *      the reply, and its review bodies drop their line breaks.
 *   3. The markup: the header and the review cards (`article[data-service-review-card-paper]`),
 *      the whole source when both scripts are missing.
 * Proven on a real capture (test/fixtures/pages/company-reviews/trustpilot_review_bt.com_2023-05.html,
 * all three sources, and each alone); the synthetic fixtures keep the layouts it does not show.
 *
 *   parseCompanyReviews(html, 'https://www.trustpilot.com/review/acme.com?page=2', fetchedAt)
 *   → { company: { name: 'Acme', domain: 'acme.com', url: 'https://www.trustpilot.com/review/acme.com',
 *       rating: 4.2, reviews_count: 132, rating_distribution: { 1: 15, 2: 5, 3: 9, 4: 22, 5: 81 },
 *       categories: ['Camping Store'] },
 *       reviews: [{ id: '65f…', rating: 5, title: 'Tent arrived early', … }, …], page: 2, total_pages: 7 }
 */
import { shownDate } from '../dates.js';
import { clean, first, hasType, isObj, jsonLd, list, num, obj, str, type Json } from '../json-ld.js';
import { mergeById, prefer } from '../merge.js';
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
  /** The company's reply; its line breaks kept as "\n" ("\n\n" between paragraphs). */
  body: string;
  date: string | null;
}

export interface Review {
  id: string | null;
  /** 1 to 5. */
  rating: number;
  title: string | null;
  /** The review's text; its line breaks kept as "\n". */
  body: string;
  author: string | null;
  /** As shown: a country code ("GB") or name. */
  author_country: string | null;
  /**
   * ISO, when it was first published (__NEXT_DATA__ `publishedDate`, JSON-LD `datePublished`); from the
   * markup alone, the card's `<time datetime>` (an edited review's shows the edit), else its shown text.
   */
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
/** Rows of the star filter: `label[data-star-rating="five"]` on the live site. */
const DISTRIBUTION_ROW = '[data-rating-distribution-row], [data-star-rating]';
const NOT_FOUND = /page not found|\b404\b|(?:couldn|can)[’']t find|could not find|cannot find|(?:doesn|does not)[’']?t? exist/i;
const STAR_WORDS: Record<string, number> = { one: 1, two: 2, three: 3, four: 4, five: 5 };

/**
 * The profile's company and the page's reviews, in page order. Null for the site's "profile not
 * found" page. Throws ScrapeError on a robot check or bot challenge; on a page with no profile
 * in any source and no not-found message (layout change, or another kind of page); and on a
 * profile that counts reviews but shows none of them on a page within its range.
 */
export function parseCompanyReviews(html: string, pageUrl: string, fetchedAt: Date): CompanyReviewsPage | null {
  const doc = loadPage(html);
  assertNotRobotCheck(doc);

  const next = nextData(doc);
  const ld = jsonLd(doc);
  // The business is the object rated; the site's own Organization (on every page, 404 included) is not.
  const business = ld.find((o) => isObj(o.aggregateRating)) ?? ld.find((o) => hasType(o, 'LocalBusiness'));
  const cards = [...doc.querySelectorAll(CARD)];
  if (!next && !business && cards.length === 0 && !doc.querySelector(HEADER)) {
    if (isNotFound(doc)) return null;
    throw new ScrapeError(
      `no company profile on the page: no __NEXT_DATA__ businessUnit, no JSON-LD business with aggregateRating, no rating header (${HEADER}) and no review cards (${CARD}); the layout changed or the page is not a review profile`,
    );
  }

  // Reviews stand in the @graph, or inside the business's `review` list.
  const ldReviews = [...ld, ...list(business?.review)].filter((o) => hasType(o, 'Review'));
  // The cards give the page order; the JSON-LD's values come before theirs (without ids on
  // either side, equal counts pair by position), and __NEXT_DATA__'s before both.
  const drafts = mergeById(
    mergeById(
      cards.map((c) => cardReview(c, fetchedAt)),
      ldReviews.map((o) => ldReview(o, fetchedAt)),
      { byPosition: true, join: fuller },
    ),
    (next?.reviews ?? []).map((o) => nextReview(o, fetchedAt)),
    { join: fuller },
  );
  const reviews = drafts.filter((r): r is Review => r.rating !== null);
  if (drafts.length > 0 && reviews.length === 0)
    throw new ScrapeError(`review cards without star ratings (no [data-service-review-rating], no "Rated N out of 5" image): the layout changed`);

  const summary = company(doc, next, business, ld, pageUrl);
  const page = int(next?.pagination?.currentPage) ?? currentPage(doc, pageUrl);
  const total_pages = int(next?.pagination?.totalPages) ?? totalPages(doc, page);
  // A profile that counts reviews shows some on every page in its range: none is a layout change.
  if (reviews.length === 0 && (summary.reviews_count ?? 0) > 0 && (page === null || total_pages === null || page <= total_pages)) {
    throw new ScrapeError(
      `the profile counts ${summary.reviews_count} reviews but the page shows none: no __NEXT_DATA__ reviews, no JSON-LD Review and no review cards (${CARD}); the layout changed`,
    );
  }
  return { company: summary, reviews, page, total_pages };
}

// ---------------------------------------------------------------------------------------------
// __NEXT_DATA__

interface NextProfile {
  unit: Json;
  reviews: Json[];
  pagination: Json | undefined;
  /** `{ total, one, two, three, four, five }` */
  ratings: Json | undefined;
}

/** `props.pageProps` of the page's Next.js data, when it holds a business unit. */
function nextData(doc: Document): NextProfile | null {
  const script = doc.querySelector('script#__NEXT_DATA__');
  if (!script) return null;
  let data: unknown;
  try {
    data = JSON.parse(script.textContent ?? '');
  } catch {
    return null; // the markup and the JSON-LD still stand
  }
  const props = obj(obj(obj(data)?.props)?.pageProps);
  const unit = obj(props?.businessUnit);
  if (!props || !unit || !(str(unit.displayName) ?? str(unit.identifyingName))) return null;
  const filters = obj(props.filters);
  return { unit, reviews: list(props.reviews), pagination: obj(filters?.pagination), ratings: obj(obj(filters?.reviewStatistics)?.ratings) };
}

function nextDistribution(ratings: Json | undefined): RatingDistribution | null {
  const out: Partial<RatingDistribution> = {};
  for (const [word, star] of Object.entries(STAR_WORDS)) {
    const n = int(ratings?.[word]);
    if (n !== null) out[star as 1] = n;
  }
  return complete(out);
}

/** The unit's breadcrumb: top, mid and bottom level names. */
function nextCategories(unit: Json | undefined): string[] {
  const b = obj(unit?.breadcrumb);
  const names = ['topLevelDisplayName', 'midLevelDisplayName', 'bottomLevelDisplayName'].map((k) => clean(b?.[k])).filter((n): n is string => !!n);
  return [...new Set(names)];
}

// ---------------------------------------------------------------------------------------------
// Company

function company(doc: Document, next: NextProfile | null, business: Json | undefined, ld: Json[], pageUrl: string): CompanySummary {
  const unit = next?.unit;
  const agg = obj(business?.aggregateRating);
  const h1 = doc.querySelector('h1');
  const name =
    clean(unit?.displayName) ??
    first(business?.name) ??
    textOf(h1?.querySelector('[class*="displayName"]')) ??
    // the h1 also holds "Reviews 1,234": keep what comes before it
    textOf(h1)?.replace(/\s*Reviews(?:\s+[\d,.\s]+)?$/i, '') ??
    null;
  const domain = profileDomain(pageUrl) ?? str(unit?.identifyingName)?.toLowerCase() ?? hostOf(first(business?.url) ?? first(business?.sameAs));
  if (!name && !domain) throw new ScrapeError('a review profile without a company name (no __NEXT_DATA__ displayName, JSON-LD name or h1): the layout changed');
  const reviews_count = int(unit?.numberOfReviews) ?? int(agg?.reviewCount ?? agg?.ratingCount) ?? headerCount(doc);
  const url = new URL(pageUrl);
  url.search = '';
  url.hash = '';
  const categoriesFromNext = nextCategories(unit);
  return {
    name: (name || domain)!,
    domain,
    url: url.href,
    rating: decimal(unit?.trustScore) ?? decimal(agg?.ratingValue) ?? decimal(textOf(doc.querySelector('[data-rating-typography]'))),
    reviews_count,
    rating_distribution: nextDistribution(next?.ratings) ?? ldDistribution(ld) ?? markupDistribution(doc, reviews_count),
    categories: categoriesFromNext.length ? categoriesFromNext : categories(doc, ld),
  };
}

/** `/review/www.acme.com` → "www.acme.com". */
function profileDomain(pageUrl: string): string | null {
  const m = /\/review\/([^/?#]+)/.exec(new URL(pageUrl).pathname);
  return m ? decodeURIComponent(m[1]!).toLowerCase() : null;
}

/** "Reviews 1,234" in the h1, or a reviews-count element ("Based on 1,234 reviews", "13,582 total"). */
function headerCount(doc: Document): number | null {
  const t = textOf(doc.querySelector('[data-reviews-count-typography]')) ?? textOf(doc.querySelector('h1'));
  const n = '(\\d{1,3}(?:[,.\\u00a0 ]\\d{3})+|\\d+)';
  const m = t && (new RegExp(`${n}\\s*(?:reviews?|total)\\b`, 'i').exec(t) ?? new RegExp(`\\breviews?\\s+${n}`, 'i').exec(t));
  return m ? int(m[1]) : null;
}

/** The site's `Dataset` of star counts: a csvw table whose columns are "1 star" … "5 stars" and "Total". */
function ldDistribution(ld: Json[]): RatingDistribution | null {
  const table = ld
    .filter((o) => hasType(o, 'Dataset'))
    .map((o) => obj(o.mainEntity))
    .find(Boolean);
  const columns = list(obj(table?.['csvw:tableSchema'])?.['csvw:columns']);
  const out: Partial<RatingDistribution> = {};
  for (const col of columns) {
    const star = /^([1-5]) stars?$/i.exec(first(col['csvw:name']) ?? '');
    const n = int(list(col['csvw:cells'])[0]?.['csvw:value']);
    if (star && n !== null) out[Number(star[1]) as 1] = n;
  }
  return complete(out);
}

/**
 * Rows of the rating filter: the star from `data-star-rating` ("five") or "5-star", then the
 * count from the row's title ("963 of 13,582 reviews"), a count cell, or a percentage.
 */
function markupDistribution(doc: Document, total: number | null): RatingDistribution | null {
  const out: Partial<RatingDistribution> = {};
  for (const row of doc.querySelectorAll(DISTRIBUTION_ROW)) {
    const attr = (row.getAttribute('data-star-rating') ?? '').toLowerCase();
    const star = STAR_WORDS[attr] ?? (Number(/([1-5])[- ]?stars?/i.exec(textOf(row) ?? '')?.[1]) || Number(attr) || 0);
    if (star < 1 || star > 5) continue;
    const titled = /^\s*([\d,.\u00a0 ]+?)\s+of\s+[\d,.\u00a0 ]+\s+reviews?\b/i.exec(row.getAttribute('title') ?? '');
    const values = [...row.querySelectorAll('*')].filter((e) => e.children.length === 0).map((e) => textOf(e) ?? '');
    const pct = values.map((v) => /^(\d+(?:\.\d+)?)\s*%$/.exec(v)).find(Boolean);
    const count = values.find((v) => /^\d[\d,]*$/.test(v) && !/star/i.test(v));
    if (titled && int(titled[1]) !== null) out[star as 1] = int(titled[1])!;
    else if (count !== undefined) out[star as 1] = int(count)!;
    else if (pct && total !== null) out[star as 1] = Math.round((Number(pct[1]) * total) / 100);
  }
  return complete(out);
}

function complete(d: Partial<RatingDistribution>): RatingDistribution | null {
  return ([1, 2, 3, 4, 5] as const).every((s) => d[s] !== undefined) ? (d as RatingDistribution) : null;
}

/**
 * Category names: the JSON-LD breadcrumb's `/categories/` items, else the markup breadcrumb's,
 * else the page's category links (not the site footer's).
 */
function categories(doc: Document, ld: Json[]): string[] {
  const fromLd = ld
    .filter((o) => hasType(o, 'BreadcrumbList'))
    .flatMap((o) => list(o.itemListElement))
    .filter((li) => /\/categories\/[^/]/.test(first(li.item) ?? first(obj(li.item)?.['@id']) ?? ''))
    .map((li) => first(li.name))
    .filter((n): n is string => !!n);
  if (fromLd.length) return [...new Set(fromLd)];
  const crumbs = [...doc.querySelectorAll('nav[aria-label="Breadcrumb" i] a[href*="/categories/"]')];
  const links = crumbs.length ? crumbs : [...doc.querySelectorAll('a[href*="/categories/"]')].filter((a) => !a.closest('footer'));
  return [...new Set(links.map((a) => textOf(a)).filter((n): n is string => !!n))];
}

// ---------------------------------------------------------------------------------------------
// Reviews

type Draft = Omit<Review, 'rating'> & { rating: number | null };

/**
 * `a`'s fields before `b`'s, but `b`'s body where it is `a`'s made fuller: the same text with
 * more line breaks (the JSON-LD drops them), or the whole of what `a` cuts with "…".
 */
function fuller(a: Draft, b: Draft): Draft {
  const out = prefer(a, b);
  const bare = (s: string) => s.replace(/\s/g, '');
  const [x, y] = [bare(a.body), bare(b.body)];
  const cut = /(?:…|\.\.\.)$/.exec(x);
  if (x === y ? b.body.split('\n').length > a.body.split('\n').length : cut !== null && y.length > x.length && y.startsWith(x.slice(0, cut.index)))
    out.body = b.body;
  return out;
}

function nextReview(o: Json, fetchedAt: Date): Draft {
  const consumer = obj(o.consumer);
  const dates = obj(o.dates);
  const reply = obj(o.reply);
  const replyBody = textBlock(reply?.message);
  return {
    id: str(o.id),
    rating: stars(decimal(o.rating)),
    title: clean(o.title),
    body: textBlock(o.text) ?? '',
    author: clean(consumer?.displayName),
    author_country: str(consumer?.countryCode),
    date: shownDate(str(dates?.publishedDate), fetchedAt),
    experience_date: shownDate(str(dates?.experiencedDate), fetchedAt),
    verified: obj(obj(o.labels)?.verification)?.isVerified === true,
    reply: replyBody ? { body: replyBody, date: shownDate(str(reply?.publishedDate), fetchedAt) } : null,
  };
}

function ldReview(o: Json, fetchedAt: Date): Draft {
  const author = o.author;
  return {
    // "https://…/#/schema/Review/<domain>/<review id>"
    id: first(o['@id'])?.split('/').pop() || null,
    rating: stars(decimal(obj(o.reviewRating)?.ratingValue)),
    title: clean(first(o.headline) ?? first(o.name)),
    body: textBlock(first(o.reviewBody) ?? first(o.description)) ?? '',
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
  const time = card.querySelector('time[data-service-review-date-time-ago]') ?? [...card.querySelectorAll('time')].find((t) => !replyBox?.contains(t)) ?? null;
  const replyTime = replyBox?.querySelector('time') ?? null;
  const experience = textOf(card.querySelector('[data-service-review-date-of-experience-typography]'));
  const href = card.querySelector('a[href*="/reviews/"]')?.getAttribute('href') ?? '';
  return {
    id: /\/reviews\/([^/?#]+)/.exec(href)?.[1] ?? null,
    rating: stars(cardRating(card)),
    title: textOf(card.querySelector('[data-service-review-title-typography]')),
    body: blockText(card.querySelector('[data-service-review-text-typography]')) ?? '',
    author: textOf(card.querySelector('[data-consumer-name-typography]')),
    author_country: textOf(card.querySelector('[data-consumer-country-typography]')),
    date: timeDate(time, fetchedAt),
    // "Date of experience: February 10, 2026"
    experience_date: shownDate(experience?.replace(/^[^:]*:/, ''), fetchedAt),
    verified: [...card.querySelectorAll('[data-review-label-tooltip-trigger-typography], [data-review-label]')].some((e) =>
      /^verified\b/i.test(textOf(e) ?? ''),
    ),
    reply: replyText ? { body: blockText(replyText) ?? '', date: timeDate(replyTime, fetchedAt) } : null,
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

/** A `<time>`'s `datetime` (React writes `dateTime`, and the DOM here keeps the case), else its shown text. */
function timeDate(time: Element | null, fetchedAt: Date): string | null {
  if (!time) return null;
  const attr = time.getAttribute('datetime') ?? [...time.attributes].find((a) => a.name.toLowerCase() === 'datetime')?.value;
  return shownDate(attr, fetchedAt) ?? shownDate(textOf(time), fetchedAt);
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

/**
 * The highest page the pagination names: its numbered buttons and its "last" button (whose
 * `?page=` or "Page number 83" label says it); without any, a page with no usable "next" link
 * is the last.
 */
function totalPages(doc: Document, page: number | null): number | null {
  const named = [...doc.querySelectorAll('a[name^="pagination-button-"]')].flatMap((a) => {
    const n = /^pagination-button-(\d+|last)$/.exec(a.getAttribute('name') ?? '')?.[1];
    if (n === undefined) return [];
    if (n !== 'last') return [Number(n)];
    const href = a.getAttribute('href');
    const fromHref = href ? int(new URL(href, 'https://x.invalid').searchParams.get('page')) : null;
    const fromLabel = int(/(\d[\d,]*)\s*$/.exec(a.getAttribute('aria-label') ?? '')?.[1]);
    return [fromHref ?? fromLabel ?? 0];
  });
  if (named.length) return Math.max(...named, page ?? 0);
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

/** A text with its line breaks kept: spaces collapsed within each line, at most one blank line in a row; null when blank. */
function textBlock(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const t = v
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.replace(/[^\S\n]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return t || null;
}

/** An element's text as `textBlock` keeps it: a `<br>` is a line break, a paragraph a blank line, source whitespace a space. */
function blockText(el: Element | null): string | null {
  if (!el) return null;
  let out = '';
  const walk = (n: Node): void => {
    for (const c of Array.from(n.childNodes)) {
      if (c.nodeType === 3) out += (c.nodeValue ?? '').replace(/\s+/g, ' ');
      if (c.nodeType !== 1) continue;
      const tag = (c as Element).tagName.toUpperCase();
      if (tag === 'BR') out += '\n';
      else if (tag === 'P' || tag === 'DIV') {
        out += '\n\n';
        walk(c);
        out += '\n\n';
      } else if (tag !== 'SCRIPT' && tag !== 'STYLE' && tag !== 'SVG') walk(c);
    }
  };
  walk(el);
  return textBlock(out);
}

function hostOf(url: string | null): string | null {
  try {
    return url ? new URL(url).hostname : null;
  } catch {
    return null;
  }
}
