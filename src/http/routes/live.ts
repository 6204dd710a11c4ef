/**
 * The live scrape endpoints: thin routes over src/live's framework. Every one is Bearer-only
 * (spec 5.5: live scrapes need the Bearer key), metered per page read, and answers the
 * envelope of spec 2.1.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { runLive, type LiveEndpoint } from '../../live/engine.js';
import type { Product } from '../../platform/index.js';
import type { Service } from '../../service.js';
import { errorResponses } from '../schemas.js';

type Query = Record<string, string | undefined>;

const SEARCH_ENGINES = ['web_search', 'web_news_search', 'marketplace'] as const;

const errors = errorResponses(400, 401, 403, 429, 502, 503, 504);
const envelope = {
  type: 'object',
  required: ['engine', 'family', 'query', 'count', 'results', 'next_cursor'],
  properties: {
    engine: { type: 'string' },
    family: { type: 'string' },
    query: { type: 'object', additionalProperties: true, description: 'The effective query: unsent parameters null, defaults shown.' },
    count: { type: 'integer' },
    results: { type: 'array', items: { type: 'object', additionalProperties: true } },
    next_cursor: { type: 'null', description: 'Always null: live scrapes page with `page`.' },
  },
  additionalProperties: true,
} as const;

/** `engine` must be sent and name this family: anything else is 400 before a page is read. */
function requireEngine(q: Query, allowed: readonly string[]): void {
  if (q.engine === undefined) throw new AppError('bad_parameter', `engine is required: ${allowed.join(', ')}`);
  if (!allowed.includes(q.engine)) throw new AppError('bad_parameter', `engine: one of ${allowed.join(', ')}, got ${JSON.stringify(q.engine)}`);
}

export function liveRoutes(app: FastifyInstance, service: Service): void {
  const m = service.marketplace;
  const route = (path: string, summary: string, endpoint: LiveEndpoint<any, any>, product: Product | ((req: FastifyRequest) => Product) = 'marketplace') =>
    app.get<{ Querystring: Query }>(path, {
      config: { auth: 'bearer', product, badInput: 'bad_parameter' },
      schema: { summary, security: [{ bearer: [] }], response: { 200: envelope, ...errors } },
      handler: async (req) => {
        requireEngine(req.query, [endpoint.engine]);
        const { engine: _engine, ...rest } = req.query;
        return runLive(endpoint, rest, service.live);
      },
    });

  app.get<{ Querystring: Query }>('/v1/search', {
    config: {
      auth: 'bearer',
      badInput: 'bad_parameter',
      product: (req) => {
        const e = (req.query as Query).engine;
        return (SEARCH_ENGINES as readonly string[]).includes(e ?? '') ? (e as Product) : 'marketplace';
      },
    },
    schema: { summary: 'Live search: engine=marketplace (web_search and web_news_search to come)', security: [{ bearer: [] }], response: { 200: envelope, ...errors } },
    handler: async (req) => {
      requireEngine(req.query, SEARCH_ENGINES);
      if (req.query.engine !== 'marketplace') throw new AppError('product_unavailable', `engine=${req.query.engine} is not offered by this service yet`);
      const { engine: _engine, ...rest } = req.query;
      return runLive(m.search, rest, service.live);
    },
  });
  route('/v1/product', 'A marketplace product page: price, availability, gallery, bullets, details', m.product);
  route('/v1/product/reviews', 'The reviews shown on a marketplace product page', m.reviews);
  route('/v1/product/offers', 'The all-offers panel: condition, price, delivery, ships-from, seller with rating', m.offers);
  route('/v1/seller', "A seller's public profile: rating, feedback, business details", m.seller);
  route('/v1/product/lookup', 'Product cards for a barcode (GTIN), on the US site; sponsored cards dropped', m.lookup);
  route('/v1/seller/products', "A seller's storefront results; sponsored cards dropped", m.sellerProducts);
  route('/v1/categories', "Top-level departments, or a node's children", m.categories);
  route('/v1/bestsellers', 'One best-sellers page: 30 ranked products, and the subcategories', m.bestsellers);
}
