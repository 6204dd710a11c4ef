/**
 * Publisher engines (8 credits a page): the wire publisher's section listing (PUBLISHER_WIRE_URL;
 * every story the hub page promotes, 62 on the captured AP science hub), any other publisher's
 * listing page (single page, by URL), and one article (JSON-LD NewsArticle first, the markup
 * second). The publisher is the page itself, so the news `sources` filter is locked here.
 */
import { pageParam, patternParam, urlParam } from '../declare.js';
import { fillTemplate, type LiveEndpoint } from '../scraper.js';
import type { Article } from './article.js';
import type { ListingItem } from './listing.js';

export const FAMILY = 'publisher';
const LOCKED = { sources: 'the publisher is the page read; filter news sources on /v1/news or /v1/match' };

export function publisherEndpoints(wireUrl: string, clock: () => number) {
  const wire: LiveEndpoint<{ section: string; page: number }, ListingItem> = {
    engine: 'wire_listing',
    family: FAMILY,
    params: {
      section: patternParam(/^[a-z0-9][a-z0-9-]{0,79}$/, 'a section slug such as world-news or technology', 'world-news', { required: true }),
      page: pageParam({ max: 10 }),
    },
    locked: LOCKED,
    async run(q, call) {
      const page = await call.get(fillTemplate(wireUrl, { section: q.section, page: q.page }));
      return call.parse('parseListing', page.html, page.url, new Date(clock()));
    },
  };

  const listing: LiveEndpoint<{ url: string; page: number }, ListingItem> = {
    engine: 'publisher_listing',
    family: FAMILY,
    params: { url: urlParam('https://example.com/news/', { required: true }), page: pageParam('single') },
    locked: LOCKED,
    async run(q, call) {
      const page = await call.get(q.url, { untrusted: true });
      return call.parse('parseListing', page.html, page.url, new Date(clock()));
    },
  };

  const article: LiveEndpoint<{ url: string }, Article> = {
    engine: 'publisher_article',
    family: FAMILY,
    params: { url: urlParam('https://example.com/news/2026/05/01/a-story', { required: true }) },
    locked: LOCKED,
    async run(q, call) {
      const page = await call.get(q.url, { untrusted: true });
      return [await call.parse('parseArticle', page.html, page.url)];
    },
  };

  return { wire, listing, article };
}
