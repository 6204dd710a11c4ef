import type { FastifyInstance } from 'fastify';
import { NEWS_SORTS, Q_MAX, searchNews, type NewsParams } from '../../keyword/search-news.js';
import type { Service } from '../../service.js';
import { ARTICLE_FIELDS, articleFields, errorResponses, keywordPage, queryString, security } from '../schemas.js';

const querystring = queryString({
  q: { maxLength: Q_MAX, description: 'Keywords, all required; "a phrase", a OR b, -excluded, prefix*. Case, diacritics and width are folded.' },
  sources: { description: 'Comma-separated source names (GET /v1/sources) to keep.' },
  exclude_sources: { description: 'Comma-separated source names to drop.' },
  since: { description: 'Inclusive lower bound on event_time (RFC 3339).' },
  until: { description: 'Inclusive upper bound on event_time (RFC 3339).' },
  sort: { enum: [...NEWS_SORTS], default: 'time', description: 'time: newest first; relevance: BM25.' },
  include_edits: { enum: ['true', 'false'], default: 'false', description: 'Every revision a row (true) or first publications only.' },
  limit: { pattern: '^[0-9]+$', default: '25', description: '1 to 100.' },
  cursor: { description: '`next_cursor` of the previous page, with every other parameter but limit unchanged.' },
}, ['q']);

const result = {
  type: 'object',
  required: [...ARTICLE_FIELDS, 'highlight'],
  properties: {
    ...articleFields,
    score: { type: 'number', description: 'BM25 (higher is better); only with sort=relevance.' },
    highlight: { type: ['string', 'null'], description: 'A passage with the matched words in <mark>…</mark>; the rest HTML-escaped.' },
  },
} as const;

const response200 = keywordPage(result, 'articles (an import, a rebuild)');

export function newsRoutes(app: FastifyInstance, service: Service): void {
  app.get<{ Querystring: NewsParams }>('/v1/news', {
    config: { auth: true, product: 'news', badInput: 'bad_parameter' },
    schema: { summary: 'Keyword search over the news corpus', security, querystring, response: { 200: response200, ...errorResponses(400, 401, 403, 429, 503) } },
    handler: async (req) => searchNews(service, req.query),
  });
}
