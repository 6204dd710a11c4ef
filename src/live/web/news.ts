/**
 * Google's news vertical (`tbm=nws`): its result cards, in page order.
 *
 * Two card layouts are read, told apart by their markup:
 *
 * - 2021, checked against a real page (test/fixtures/pages/web-news-search/, an en-NZ page
 *   of 2021-02-12; test/fixtures/pages/PROVENANCE.md):
 *
 *     g-card > … > div.dbsr
 *       a[href]                          the article
 *         div.XTjFC                      source ("Stuff.co.nz"), as text after its favicon g-img
 *         div.JheGif[role=heading]       title, cut with <br> and "..."
 *         div.Y3v8qd                     snippet
 *         div.wxp1Sb span                "5/03/2020": the UI language's own date order
 *         div.KNcnob img                 thumbnail, inlined as data: by a script (no URL)
 *
 * - the newer card, known only from the hand-written fixture
 *   test/fixtures/pages/synthetic/web-news-search-grid-battery-storage.html, which follows the
 *   documented markup (no real page of it was captured):
 *
 *     div.SoaBEf
 *       a.WlydOe[href]                   the article (or a /url?q= redirect to it)
 *         div.MgUUmf span                source, after its favicon
 *         div.n0jPhd[role=heading]       title
 *         div.GI74Re                     snippet
 *         div.OSrXXb span | div.rbYSKb span   "3 hours ago", "Feb 20, 2026"
 *         img                            thumbnail, often an inline data: placeholder
 *
 *   Its fallbacks (`.NUnG9d span`, `[role=heading]`, `.ZE0LJd span`) are the class names of
 *   the same card in the 2022 web page's "Top stories" block (web-search/google-com-…-2022.html).
 */
import { numericDate, shownDate } from '../dates.js';
import { imageUrl, loadPage, ScrapeError, textOf } from '../page.js';
import { assertNotSearchChallenge, decodeResultUrl, isNoResultsPage } from './search.js';

export interface NewsResult {
  /** 1-based, in page order. */
  position: number;
  title: string;
  /** The article, never a search engine's redirect. */
  url: string;
  source: string | null;
  /**
   * ISO 8601: relative times ("3 hours ago") resolved against the fetch time, shown dates
   * ("Feb 20, 2026", "5/03/2020") as that day's midnight UTC.
   */
  published_at: string | null;
  snippet: string | null;
  /** The thumbnail's URL; null for none and for one the page inlines as data:. */
  image_url: string | null;
}

export interface NewsPageContext {
  pageUrl: string;
  fetchedAt: Date;
}

const CARD = 'div.SoaBEf, div.dbsr';
const TITLE = 'div.n0jPhd, div.JheGif, [role="heading"]';
/** The source line, whose favicon is an img too. */
const SOURCE_LINE = '.MgUUmf, .NUnG9d, .XTjFC';
const SNIPPET = 'div.GI74Re, div.Y3v8qd';
const TIME = 'div.OSrXXb span, div.rbYSKb span, div.LfVVr span, .ZE0LJd span, div.wxp1Sb span';

/**
 * News result cards of a Google news-vertical page. Throws ScrapeError on a robot check or bot
 * challenge; on a page with no cards and no "no results" message; and on cards that lack what
 * every card of the layout shows (title and link, source, a readable date), which is a layout
 * change, not a result. A genuine "no results" page gives [].
 */
export function parseNewsResults(html: string, ctx: NewsPageContext): NewsResult[] {
  const doc = loadPage(html);
  assertNotSearchChallenge(doc, ctx.pageUrl);
  const origin = new URL(ctx.pageUrl).origin;
  const lang = doc.documentElement?.getAttribute('lang') ?? null;

  const cards = [...doc.querySelectorAll(CARD)].filter((c) => !c.parentElement?.closest(CARD));
  const out: NewsResult[] = [];
  const shownTimes: string[] = [];
  for (const card of cards) {
    const a = card.querySelector('a.WlydOe[href]') ?? card.querySelector('a[href]');
    const url = a ? decodeResultUrl(a.getAttribute('href')!, ctx.pageUrl) : null;
    const title = textOf(card.querySelector(TITLE));
    if (!url || !title) continue;
    const shown = timeText(card);
    if (shown) shownTimes.push(shown);
    out.push({
      position: out.length + 1,
      title,
      url,
      source: sourceOf(card),
      published_at: shownDate(shown, ctx.fetchedAt) ?? numericDate(shown, lang),
      snippet: textOf(card.querySelector(SNIPPET)),
      image_url: imageUrl([...card.querySelectorAll('img')].find((i) => !i.closest(SOURCE_LINE)) ?? null, origin),
    });
  }
  if (cards.length === 0) {
    if (isNoResultsPage(doc)) return [];
    throw new ScrapeError('not a news results page: no news result cards (div.SoaBEf, div.dbsr) and no "no results" message');
  }
  // Fields every card of a known layout has: none on any card means the markup moved.
  if (out.length === 0) throw new ScrapeError(`news result cards without a title (${TITLE}) or a link: the layout changed`);
  if (out.every((r) => r.source === null)) throw new ScrapeError(`news result cards without a source line (${SOURCE_LINE}): the layout changed`);
  if (shownTimes.length === 0) throw new ScrapeError(`news result cards without a date line (${TIME}): the layout changed`);
  if (out.every((r) => r.published_at === null))
    throw new ScrapeError(`news result dates in a form this parser does not read (${JSON.stringify(shownTimes[0])})`);
  return out;
}

/** The source's name: the source line's span, or (2021) its own text after the favicon. */
function sourceOf(card: Element): string | null {
  return textOf(card.querySelector('div.MgUUmf > span') ?? card.querySelector('.MgUUmf span, .NUnG9d span') ?? card.querySelector('div.XTjFC'));
}

/** The card's time line; in some variants the heading carries `OSrXXb` too, so headings are skipped. */
function timeText(card: Element): string | null {
  const span = [...card.querySelectorAll(TIME)].find((s) => !s.closest('[role="heading"]'));
  return textOf(span);
}
