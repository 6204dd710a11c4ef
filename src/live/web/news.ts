/**
 * Google's news vertical (`tbm=nws`): its result cards, in page order.
 *
 * No real page of this vertical was captured; the parser follows the documented card markup,
 * written out in the synthetic fixture test/fixtures/pages/synthetic/web-news-search-*.html
 * (WEB-NEWS.PROVENANCE.md there):
 *
 *   div.SoaBEf
 *     a.WlydOe[href]                     the article (or a /url?q= redirect to it)
 *       div.MgUUmf span                  source ("Reuters"), after its favicon
 *       div.n0jPhd[role=heading]         title
 *       div.GI74Re                       snippet
 *       div.OSrXXb span | div.rbYSKb span   "3 hours ago", "Feb 20, 2026"
 *       img                              thumbnail, often an inline data: placeholder
 *
 * The fallbacks (`.NUnG9d span`, `[role=heading]`, `.ZE0LJd span`) are the class names of the
 * same card in the 2022 web page's "Top stories" block (web-search/google-com-…-2022.html).
 */
import { shownDate } from '../dates.js';
import { imageUrl, loadPage, ScrapeError, textOf } from '../page.js';
import { assertNotSearchChallenge, decodeResultUrl, isNoResultsPage } from './search.js';

export interface NewsResult {
  /** 1-based, in page order. */
  position: number;
  title: string;
  /** The article, never a search engine's redirect. */
  url: string;
  source: string | null;
  /** ISO 8601: relative times ("3 hours ago") resolved against the fetch time. */
  published_at: string | null;
  snippet: string | null;
  image_url: string | null;
}

export interface NewsPageContext {
  pageUrl: string;
  fetchedAt: Date;
}

/**
 * News result cards of a Google news-vertical page. Throws ScrapeError on a robot check or bot
 * challenge, and on a page with no cards and no "no results" message; a genuine "no results"
 * page gives [].
 */
export function parseNewsResults(html: string, ctx: NewsPageContext): NewsResult[] {
  const doc = loadPage(html);
  assertNotSearchChallenge(doc, ctx.pageUrl);
  const origin = new URL(ctx.pageUrl).origin;

  const out: NewsResult[] = [];
  for (const card of doc.querySelectorAll('div.SoaBEf')) {
    const a = card.querySelector('a.WlydOe[href]') ?? card.querySelector('a[href]');
    const url = a ? decodeResultUrl(a.getAttribute('href')!, ctx.pageUrl) : null;
    const title = textOf(card.querySelector('div.n0jPhd') ?? card.querySelector('[role="heading"]'));
    if (!url || !title) continue;
    out.push({
      position: out.length + 1,
      title,
      url,
      source: textOf(card.querySelector('div.MgUUmf > span') ?? card.querySelector('.MgUUmf span, .NUnG9d span')),
      published_at: shownDate(timeText(card), ctx.fetchedAt),
      snippet: textOf(card.querySelector('div.GI74Re')),
      // The source's favicon is an img too: the thumbnail is the one outside the source line.
      image_url: imageUrl([...card.querySelectorAll('img')].find((i) => !i.closest('.MgUUmf, .NUnG9d')) ?? null, origin),
    });
  }
  if (out.length === 0 && !isNoResultsPage(doc)) {
    throw new ScrapeError('not a news results page: no news result cards and no "no results" message');
  }
  return out;
}

/** The card's time line; in some variants the heading carries `OSrXXb` too, so headings are skipped. */
function timeText(card: Element): string | null {
  const span = [...card.querySelectorAll('div.OSrXXb span, div.rbYSKb span, div.LfVVr span, .ZE0LJd span')].find((s) => !s.closest('[role="heading"]'));
  return textOf(span);
}
