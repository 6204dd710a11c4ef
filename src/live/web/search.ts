/**
 * A web search results page: its organic results, in page order.
 *
 * Two layouts are read, each checked against captures (test/fixtures/pages/PROVENANCE.md,
 * web-search/), and the layout is told from the markup, not the URL:
 * - DuckDuckGo html (2026): `div.result` cards, title link `a.result__a`, `a.result__url`,
 *   `a.result__snippet`; every link is a `//duckduckgo.com/l/?uddg=<target>` redirect; a date,
 *   when shown, is a bare timestamp in the card's extras;
 * - Google (2022): `div.yuRUbf > a` holding `h3.LC20lb` and a `cite`, the snippet in
 *   `div.VwiC3b`, which may open with a date ("12.03.2022 — ", "3 days ago — ").
 *
 * Ads (`.result--ad`, Google's `#tads` blocks) and Google's non-organic blocks ("People also
 * ask", news and video carousels: none has a `yuRUbf` title link) are left out.
 */
import { shownDate } from '../dates.js';
import { assertNotRobotCheck, loadPage, ScrapeError, textOf } from '../page.js';

export interface WebResult {
  /** 1-based across pages: offset + index + 1. */
  position: number;
  title: string;
  /** The real target, never a search engine's redirect. */
  url: string;
  /** The URL as the page shows it ("en.wikipedia.org/wiki/OpenClaw", "https://de.wikipedia.org › wiki › Test"). */
  displayed_url: string | null;
  snippet: string | null;
  /** ISO 8601, when the page shows a date the result carries. */
  date: string | null;
}

export interface WebPageContext {
  pageUrl: string;
  /** Results before this page (0-based: page 2 of 10 → 10). */
  offset: number;
  fetchedAt: Date;
}

/** A results page shows at most this many organic results; more would be a misread. */
const PAGE_SIZE = 10;

const DDG_MARKERS = 'a.result__a, .serp__results, #links.results, .result--no-result';
// Google's own ids only: `#search` alone is common on other sites.
const GOOGLE_MARKERS = 'div.yuRUbf, div.MjjYud, #rso';
/** Google's ad blocks and non-organic boxes that can still hold a title link. */
const GOOGLE_SKIP = '#tads, #tadsb, #bottomads, .uEierd, [data-text-ad], .related-question-pair, g-scrolling-carousel';

/** Google's "no results" message, English and German UI (the 2022 capture is German). */
const NO_RESULTS_TEXT = /did not match any (?:news )?(?:documents|results)|ergab keine Treffer|übereinstimmenden Dokumente gefunden/i;

/**
 * Organic results of a DuckDuckGo html or Google web results page, at most 10.
 *
 * Throws ScrapeError on a robot check or bot challenge, and on a page that has no results and
 * no "no results" message (not a results page, or the layout changed). A genuine "no results"
 * page gives [].
 */
export function parseWebResults(html: string, ctx: WebPageContext): WebResult[] {
  const doc = loadPage(html);
  assertNotSearchChallenge(doc, ctx.pageUrl);

  const isDdg = !!doc.querySelector(DDG_MARKERS);
  if (!isDdg && !doc.querySelector(GOOGLE_MARKERS)) {
    if (isNoResultsPage(doc)) return [];
    throw new ScrapeError('not a results page: neither DuckDuckGo nor Google result markup, and no "no results" message');
  }
  const found = isDdg ? readDdg(doc, ctx) : readGoogle(doc, ctx);
  if (found.length === 0) {
    if (isNoResultsPage(doc)) return [];
    throw new ScrapeError('a results page without organic results and without a "no results" message: the layout changed');
  }
  return found.slice(0, PAGE_SIZE).map((r, i) => ({ position: ctx.offset + i + 1, ...r }));
}

type Unnumbered = Omit<WebResult, 'position'>;

function readDdg(doc: Document, ctx: WebPageContext): Unnumbered[] {
  const out: Unnumbered[] = [];
  for (const card of doc.querySelectorAll('div.result')) {
    if (card.classList.contains('result--ad') || card.querySelector('.badge--ad')) continue;
    const a = card.querySelector('a.result__a[href]');
    const url = a ? decodeResultUrl(a.getAttribute('href')!, ctx.pageUrl) : null;
    const title = textOf(a);
    if (!url || !title) continue;
    out.push({
      title,
      url,
      displayed_url: textOf(card.querySelector('.result__url')),
      snippet: textOf(card.querySelector('.result__snippet')),
      date: ddgDate(card, ctx.fetchedAt),
    });
  }
  return out;
}

/**
 * The timestamp DuckDuckGo shows beside the URL ("2026-02-06T16:34:00.0000000"). It is UTC
 * written without a zone, which Date would read as the server's local time: mark it UTC.
 */
function ddgDate(card: Element, fetchedAt: Date): string | null {
  const span = [...card.querySelectorAll('.result__extras__url > span')].find((s) => !s.classList.contains('result__icon'));
  const t = textOf(span)?.replace(/^(\d{4}-\d{2}-\d{2}T[\d:.]+)$/, '$1Z');
  return shownDate(t, fetchedAt);
}

function readGoogle(doc: Document, ctx: WebPageContext): Unnumbered[] {
  const out: Unnumbered[] = [];
  const seen = new Set<Element>();
  for (const head of doc.querySelectorAll('div.yuRUbf')) {
    if (head.closest(GOOGLE_SKIP)) continue;
    // The result's box: its own `div.g` (sitelinks sit in an outer one), else the 2022 block.
    const box = head.closest('div.g') ?? head.closest('div.MjjYud') ?? head.parentElement!;
    if (seen.has(box)) continue;
    seen.add(box);
    const a = head.querySelector('a[href]');
    const url = a ? decodeResultUrl(a.getAttribute('href')!, ctx.pageUrl) : null;
    const title = textOf(a?.querySelector('h3'));
    if (!url || !title) continue;
    out.push({
      title,
      url,
      displayed_url: textOf(head.querySelector('cite')),
      ...googleSnippet(box.querySelector('div.VwiC3b') ?? box.querySelector('div.IsZvec'), ctx.fetchedAt),
    });
  }
  return out;
}

/**
 * The snippet, and the date Google may open it with ("12.03.2022 — ", "3 days ago — "). The
 * prefix is cut when shownDate reads it, or when Google marks it as its own leading span
 * ending in a dash: a date in a language shownDate does not read ("vor 2 Tagen — ") is still
 * no snippet text, so it is cut and the date stays null.
 */
function googleSnippet(el: Element | null, fetchedAt: Date): { snippet: string | null; date: string | null } {
  const text = textOf(el);
  const m = text ? /^(.{1,40}?)\s[—–]\s/.exec(text) : null;
  if (!text || !m) return { snippet: text, date: null };
  const date = shownDate(m[1], fetchedAt);
  const lead = textOf(el!.firstElementChild);
  const marked = !!lead && /[—–]$/.test(lead) && text.startsWith(lead);
  if (!date && !marked) return { snippet: text, date: null };
  return { snippet: text.slice(m[0].length).trim() || null, date };
}

/**
 * The real target of a result link: DuckDuckGo's `/l/?uddg=<target>` and Google's
 * `/url?q=<target>` / `/url?url=<target>` redirects are unwrapped, relative links resolved
 * against the page. Null for anything that does not end at an http(s) URL (javascript:,
 * mailto:, a redirect without its target).
 */
export function decodeResultUrl(href: string, pageUrl: string): string | null {
  let u: URL;
  try {
    u = new URL(href.trim(), pageUrl);
    const wrapped =
      /(^|\.)duckduckgo\.com$/.test(u.hostname) && u.pathname === '/l/'
        ? u.searchParams.get('uddg')
        : /(^|\.)google\.[a-z.]+$/.test(u.hostname) && u.pathname === '/url'
          ? (u.searchParams.get('q') ?? u.searchParams.get('url'))
          : undefined;
    if (wrapped === null) return null;
    if (wrapped !== undefined) u = new URL(wrapped);
  } catch {
    return null;
  }
  return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
}

/**
 * Throws on a search engine's bot wall: Google's `/sorry/` "unusual traffic" page,
 * DuckDuckGo's anomaly challenge ("Unfortunately, bots use DuckDuckGo too."), and the common
 * captchas assertNotRobotCheck knows.
 */
export function assertNotSearchChallenge(doc: Document, pageUrl: string): void {
  const body = doc.body?.textContent ?? '';
  // The words alone count only on a page without results: a result may quote them.
  const bare = !doc.querySelector('a.result__a, div.yuRUbf, div.SoaBEf');
  if (
    /\/sorry\//.test(pageUrl) ||
    doc.querySelector('form#captcha-form, form[action*="/sorry/"]') ||
    (bare && /unusual traffic from your computer network|ungewöhnlichen Datenverkehr/i.test(body))
  ) {
    throw new ScrapeError('the search engine answered with a robot check ("unusual traffic") instead of results');
  }
  if (
    doc.querySelector('.anomaly-modal__title, .anomaly-modal__modal, form#challenge-form, script[src*="anomaly.js"]') ||
    (bare && /bots use DuckDuckGo too/i.test(body))
  ) {
    throw new ScrapeError('the search engine answered with a bot challenge ("bots use DuckDuckGo too") instead of results');
  }
  assertNotRobotCheck(doc);
}

/**
 * DuckDuckGo's `.no-results` box in its results list (the class alone is too common to trust
 * elsewhere), or Google's "did not match any documents" in English or German.
 */
export function isNoResultsPage(doc: Document): boolean {
  if (doc.querySelector('.result--no-result, #links .no-results, .serp__results .no-results')) return true;
  const where = doc.querySelector('#topstuff, #res, #search, #center_col') ?? doc.body;
  return NO_RESULTS_TEXT.test(where?.textContent?.replace(/\s+/g, ' ') ?? '');
}
