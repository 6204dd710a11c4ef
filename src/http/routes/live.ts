/**
 * The live scrape endpoints: thin routes over src/live's framework. Every one is Bearer-only
 * (spec 5.5: live scrapes need the Bearer key), metered per page read, and answers the
 * envelope of spec 2.1.
 */
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors.js';
import { runLive, type LiveEndpoint } from '../../live/engine.js';
import type { Product } from '../../platform/index.js';
import type { Service } from '../../service.js';
import { errorResponses } from '../schemas.js';

type Query = Record<string, string | undefined>;

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

/**
 * The query string of endpoints taking `params`: each a string, declared (so OpenAPI lists
 * them). Others are strings too: the framework answers them (unknown, or locked like `limit`)
 * by name. A repeated parameter is an array and fails here, named (error-handler.ts).
 */
function liveQuery(params: Iterable<string>) {
  const names = ['engine', ...new Set(params)];
  return {
    type: 'object',
    properties: Object.fromEntries(names.map((n) => [n, { type: 'string' }])),
    additionalProperties: { type: 'string' },
  } as const;
}

/** `engine` must be sent and name this family: anything else is 400 before a page is read. */
function requireEngine(q: Query, allowed: readonly string[]): void {
  if (q.engine === undefined) throw new AppError('bad_parameter', `engine is required: ${allowed.join(', ')}`);
  if (!allowed.includes(q.engine)) throw new AppError('bad_parameter', `engine: one of ${allowed.join(', ')}, got ${JSON.stringify(q.engine)}`);
}

/** Runs `endpoint` on the query less `engine` (which chose it). */
const run = (endpoint: LiveEndpoint<any, any>, q: Query, service: Service) => {
  const { engine: _engine, ...rest } = q;
  return runLive(endpoint, rest, service.live, service.parsers);
};

export function liveRoutes(app: FastifyInstance, service: Service): void {
  const e = service.engines;
  /**
   * One endpoint on its own path, metered as `product`. The marketplace paths require
   * `engine=marketplace` (spec 4.3); the others take `engine` optionally, naming their own.
   */
  const route = (path: string, summary: string, endpoint: LiveEndpoint<any, any>, product: Product, engine: 'required' | 'optional') =>
    app.get<{ Querystring: Query }>(path, {
      config: { auth: 'bearer', product, badInput: 'bad_parameter' },
      schema: { summary, security: [{ bearer: [] }], querystring: liveQuery(Object.keys(endpoint.params)), response: { 200: envelope, ...errors } },
      handler: async (req) => {
        if (engine === 'required' || req.query.engine !== undefined) requireEngine(req.query, [endpoint.engine]);
        return run(endpoint, req.query, service);
      },
    });
  /** Several engines on one path, `engine` choosing (and metering as) one. */
  const choose = (path: string, summary: string, engines: Record<string, { endpoint: LiveEndpoint<any, any>; product: Product }>) => {
    const byName = new Map(Object.entries(engines));
    const names = [...byName.keys()];
    const any = byName.get(names[0])!;
    app.get<{ Querystring: Query }>(path, {
      config: {
        auth: 'bearer',
        badInput: 'bad_parameter',
        // An unknown engine (`constructor` included: a Map has no inherited keys) still needs a
        // product to authorise against; the handler answers 400.
        product: (req) => {
          const engine = (req.query as Query).engine;
          return (typeof engine === 'string' ? byName.get(engine) : undefined)?.product ?? any.product;
        },
      },
      schema: { summary, security: [{ bearer: [] }], querystring: liveQuery(names.flatMap((n) => Object.keys(byName.get(n)!.endpoint.params))), response: { 200: envelope, ...errors } },
      handler: async (req) => {
        requireEngine(req.query, names);
        return run(byName.get(req.query.engine!)!.endpoint, req.query, service);
      },
    });
  };

  const m = e.marketplace;
  choose('/v1/search', 'Live search: engine=web_search (10 a page, page 1–10), web_news_search (one page) or marketplace', {
    web_search: { endpoint: e.web.search, product: 'web_search' },
    web_news_search: { endpoint: e.web.news, product: 'web_news_search' },
    marketplace: { endpoint: m.search, product: 'marketplace' },
  });
  route('/v1/product', 'A marketplace product page: price, availability, gallery, bullets, details', m.product, 'marketplace', 'required');
  route('/v1/product/reviews', 'The reviews shown on a marketplace product page', m.reviews, 'marketplace', 'required');
  route('/v1/product/offers', 'The all-offers panel: condition, price, delivery, ships-from, seller with rating', m.offers, 'marketplace', 'required');
  route('/v1/seller', "A seller's public profile: rating, feedback, business details", m.seller, 'marketplace', 'required');
  route('/v1/product/lookup', 'Product cards for a barcode (GTIN), on the US site; sponsored cards dropped', m.lookup, 'marketplace', 'required');
  route('/v1/seller/products', "A seller's storefront results; sponsored cards dropped", m.sellerProducts, 'marketplace', 'required');
  route('/v1/categories', "Top-level departments, or a node's children", m.categories, 'marketplace', 'required');
  route('/v1/bestsellers', 'One best-sellers page: 30 ranked products, and the subcategories', m.bestsellers, 'marketplace', 'required');

  choose('/v1/publisher/listing', "A publisher's article listing: engine=wire_listing (a wire section, 20 a page) or publisher_listing (any listing page by url, one page)", {
    wire_listing: { endpoint: e.publisher.wire, product: 'publisher' },
    publisher_listing: { endpoint: e.publisher.listing, product: 'publisher' },
  });
  route('/v1/publisher/article', 'One news article: headline, byline, times, section, canonical URL, body paragraphs', e.publisher.article, 'publisher', 'optional');
  route('/v1/launches', "A day's launch leaderboard (today on the site's Pacific-time calendar, or date=YYYY-MM-DD), q filtering", e.launches.list, 'launches', 'optional');
  route('/v1/launches/product', "One launch by slug: hunter, makers, description, images, comments, contact links", e.launches.product, 'launches', 'optional');
  route('/v1/company/reviews', "A company's review profile by domain: rating summary and one page of reviews", e.reviews.reviews, 'company_reviews', 'optional');
  route('/v1/job-board/jobs', 'One page of a job board\'s search results for q and location', e.jobBoard.listing, 'job_boards', 'optional');
  route('/v1/contacts', 'The emails, phones and social profiles a domain publishes, each with the page it was found on', e.contacts.contacts, 'contacts', 'optional');
}
