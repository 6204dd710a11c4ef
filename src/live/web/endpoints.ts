/**
 * The web search family (`GET /v1/search?engine=web_search|web_news_search`, 5 credits): one
 * results page of the configured upstream (WEB_SEARCH_URL, WEB_NEWS_SEARCH_URL) read and parsed.
 * Web search pages 1–10 of 10 organic results; news search is a single page.
 */
import { pageParam, stringParam } from '../declare.js';
import { fillTemplate, type LiveEndpoint } from '../scraper.js';
import type { NewsResult } from './news.js';
import type { WebResult } from './search.js';

export const FAMILY = 'web';
const PAGE_SIZE = 10;

interface WebQuery extends Record<string, unknown> {
  q: string;
  page: number;
}

export function webEndpoints(urls: { search: string; news: string }, clock: () => number) {
  const search: LiveEndpoint<WebQuery, WebResult> = {
    engine: 'web_search',
    family: FAMILY,
    params: { q: stringParam(500, { required: true, description: 'The search terms.' }), page: pageParam({ max: 10 }) },
    async run(q, call) {
      const start = (q.page - 1) * PAGE_SIZE;
      const page = await call.get(fillTemplate(urls.search, { q: q.q, start, page: q.page }));
      return call.parse('parseWebResults', page.html, { pageUrl: page.url, offset: start, fetchedAt: new Date(clock()) });
    },
  };

  const news: LiveEndpoint<WebQuery, NewsResult> = {
    engine: 'web_news_search',
    family: FAMILY,
    params: { q: stringParam(500, { required: true, description: 'The search terms.' }), page: pageParam('single') },
    async run(q, call) {
      const page = await call.get(fillTemplate(urls.news, { q: q.q }));
      return call.parse('parseNewsResults', page.html, { pageUrl: page.url, fetchedAt: new Date(clock()) });
    },
  };

  return { search, news };
}
