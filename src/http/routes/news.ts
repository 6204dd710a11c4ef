import type { FastifyInstance } from 'fastify';
import { NEWS_SORTS, Q_MAX, searchNews, type NewsDeps, type NewsQuery, type NewsSort } from '../../keyword/index.js';
import { csv, timeRange } from '../params.js';
import { TAGS } from '../openapi.js';
import { keywordPage, queryString, security } from '../schemas.js';

export const querystring = queryString(
  {
    q: { maxLength: Q_MAX, description: 'Keywords, all required; "a phrase", a OR b, -excluded, prefix*. Case, diacritics and width are folded.' },
    sources: { description: 'Comma-separated source names (GET /v1/sources) to keep.' },
    exclude_sources: { description: 'Comma-separated source names to drop.' },
    since: { description: 'Inclusive lower bound on event_time (RFC 3339).' },
    until: { description: 'Inclusive upper bound on event_time (RFC 3339).' },
    sort: { enum: [...NEWS_SORTS], default: 'time', description: 'time: newest first; relevance: BM25.' },
    include_edits: { type: 'boolean', default: false, description: 'Every revision a row (true) or first publications only.' },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
    cursor: { description: '`next_cursor` of the previous page, with every other parameter but limit unchanged.' },
  },
  ['q'],
);

const result = {
  allOf: [
    { $ref: 'Article#' },
    {
      type: 'object',
      required: ['highlight'],
      properties: {
        score: { type: 'number', description: 'BM25 (higher is better); only with sort=relevance.' },
        highlight: { type: ['string', 'null'], description: 'A passage with the matched words in <mark>…</mark>; the rest HTML-escaped.' },
      },
    },
  ],
} as const;

const response200 = keywordPage(result, 'articles (an import, a rebuild)');

/** The query string as the schema lets it through: typed, defaults filled in. */
export interface NewsQueryString {
  q: string;
  sources?: string;
  exclude_sources?: string;
  since?: string;
  until?: string;
  sort: NewsSort;
  include_edits: boolean;
  limit: number;
  cursor?: string;
}

/** The search the core runs for a checked query string: lists split, times read. */
export function newsQuery(p: NewsQueryString): NewsQuery {
  const { sources, exclude_sources, since, until, ...rest } = p;
  return { ...rest, sources: csv('sources', sources), exclude_sources: csv('exclude_sources', exclude_sources), ...timeRange(since, until) };
}

export function newsRoutes(app: FastifyInstance, deps: NewsDeps): void {
  app.get<{ Querystring: NewsQueryString }>('/v1/news', {
    config: { auth: true, product: 'news', badInput: 'bad_parameter', errors: ['empty_query', 'unknown_source', 'bad_cursor'] },
    schema: {
      summary: 'Keyword search over the news corpus',
      operationId: 'searchNews',
      tags: [TAGS.news.name],
      security,
      querystring,
      response: { 200: response200 },
    },
    handler: async (req) => searchNews(deps, newsQuery(req.query)),
  });
}
