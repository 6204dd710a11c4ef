/**
 * The live scrape endpoints: thin routes over src/live's framework. Every one is Bearer-only
 * (live scrapes need the Bearer key), metered per page read, and answers the envelope of
 * live/scraper.ts.
 */
import type { FastifyInstance } from 'fastify';
import { refuseLocked, runLive, type LiveEndpoint, type LiveScrapers, type Param, type ParsePool } from '../../live/index.js';
import type { HttpClient } from '../../net/index.js';
import type { ErrorName } from '../../errors.js';
import type { Product } from '../../platform/index.js';
import { familyTag } from '../openapi.js';

// biome-ignore lint/suspicious/noExplicitAny: the table holds every engine's endpoint, each with its own query and result types
type Endpoint = LiveEndpoint<any, any>;
type Query = Record<string, unknown>;

/** One live path: the engine(s) it serves, each metered as its product. */
export interface LiveRoute {
  path: string;
  summary: string;
  /** By engine name (`engine=` picks one where there are several). */
  engines: ReadonlyMap<string, { endpoint: Endpoint; product: Product }>;
  /** Must `engine` be sent? Where a path serves several, or on the marketplace paths ; elsewhere it may be left out. */
  engineRequired: boolean;
}

/** The live routes: which path serves which engine(s). */
export function liveRouteTable(e: LiveScrapers): LiveRoute[] {
  const one = (path: string, summary: string, endpoint: Endpoint, product: Product, engine: 'required' | 'optional'): LiveRoute => ({
    path,
    summary,
    engines: new Map([[endpoint.engine, { endpoint, product }]]),
    engineRequired: engine === 'required',
  });
  const several = (path: string, summary: string, engines: [Endpoint, Product][]): LiveRoute => ({
    path,
    summary,
    engines: new Map(engines.map(([endpoint, product]) => [endpoint.engine, { endpoint, product }])),
    engineRequired: true,
  });
  const m = e.marketplace;
  return [
    several('/v1/search', 'Live search: engine=web_search (10 a page, page 1–10), web_news_search (one page) or marketplace', [
      [e.web.search, 'web_search'],
      [e.web.news, 'web_news_search'],
      [m.search, 'marketplace'],
    ]),
    one('/v1/product', 'A marketplace product page: price, availability, gallery, bullets, details', m.product, 'marketplace', 'required'),
    one('/v1/product/reviews', 'The reviews shown on a marketplace product page', m.reviews, 'marketplace', 'required'),
    one('/v1/product/offers', 'The all-offers panel: condition, price, delivery, ships-from, seller with rating', m.offers, 'marketplace', 'required'),
    one('/v1/seller', "A seller's public profile: rating, feedback, business details", m.seller, 'marketplace', 'required'),
    one('/v1/product/lookup', 'Product cards for a barcode (GTIN), on the US site; sponsored cards dropped', m.lookup, 'marketplace', 'required'),
    one('/v1/seller/products', "A seller's storefront results; sponsored cards dropped", m.sellerProducts, 'marketplace', 'required'),
    one('/v1/categories', "Top-level departments, or a node's children", m.categories, 'marketplace', 'required'),
    one('/v1/bestsellers', 'One best-sellers page: 30 ranked products, and the subcategories', m.bestsellers, 'marketplace', 'required'),
    several(
      '/v1/publisher/listing',
      "A publisher's article listing: engine=wire_listing (a wire section, 20 a page) or publisher_listing (any listing page by url, one page)",
      [
        [e.publisher.wire, 'publisher'],
        [e.publisher.listing, 'publisher'],
      ],
    ),
    one(
      '/v1/publisher/article',
      'One news article: headline, byline, times, section, canonical URL, body paragraphs',
      e.publisher.article,
      'publisher',
      'optional',
    ),
    one(
      '/v1/launches',
      "A day's launch leaderboard (today on the site's Pacific-time calendar, or date=YYYY-MM-DD), q filtering",
      e.launches.list,
      'launches',
      'optional',
    ),
    one('/v1/launches/product', 'One launch by slug: hunter, makers, description, images, comments, contact links', e.launches.product, 'launches', 'optional'),
    one(
      '/v1/company/reviews',
      "A company's review profile by domain: rating summary and one page of reviews",
      e.reviews.reviews,
      'company_reviews',
      'optional',
    ),
    one('/v1/job-board/jobs', "One page of a job board's search results for q and location", e.jobBoard.listing, 'job_boards', 'optional'),
    one(
      '/v1/contacts',
      'The emails, phones and social profiles a domain publishes, each with the page it was found on',
      e.contacts.contacts,
      'contacts',
      'optional',
    ),
  ];
}

const paramOf = (endpoint: Endpoint, name: string) => (endpoint.params as Record<string, Param<unknown> | undefined>)[name];
const declared = (endpoint: Endpoint) => Object.keys(endpoint.params).map((name) => [name, paramOf(endpoint, name)!] as const);
const requiredOf = (endpoint: Endpoint) =>
  declared(endpoint)
    .filter(([, p]) => p.required)
    .map(([name]) => name);

/**
 * One parameter of a path serving several engines, for the top-level schema (what
 * /openapi.json lists): the widest bounds, every allowed value and example any engine takes, a
 * default only where every engine on the path declares that same one (Ajv fills it in whatever
 * the engine), and a description naming the engines that take or require it and their
 * defaults. Each engine's exact schema is its `then` branch.
 */
function unionParam(name: string, route: Endpoint[]): Record<string, unknown> {
  const takers = route.filter((e) => paramOf(e, name));
  // biome-ignore lint/suspicious/noExplicitAny: JSON Schema fragments, merged field by field
  const schemas = takers.map((e) => paramOf(e, name)!.schema as Record<string, any>);
  // biome-ignore lint/suspicious/noExplicitAny: as above
  const out: Record<string, any> = { ...schemas[0] };
  for (const s of schemas.slice(1)) {
    if (s.type !== out.type) throw new Error(`live parameter ${name}: ${s.type} on one engine, ${out.type} on another`);
    if (out.minimum !== undefined) out.minimum = Math.min(out.minimum, s.minimum);
    if (out.maximum !== undefined) out.maximum = Math.max(out.maximum, s.maximum);
    if (out.maxLength !== undefined) out.maxLength = s.maxLength === undefined ? undefined : Math.max(out.maxLength, s.maxLength);
    if (out.minLength !== undefined) out.minLength = s.minLength === undefined ? undefined : Math.min(out.minLength, s.minLength);
    if (out.enum !== undefined) out.enum = s.enum === undefined ? undefined : [...new Set([...out.enum, ...s.enum])];
    if (out.pattern !== s.pattern) out.pattern = undefined;
    if (out.examples !== undefined || s.examples !== undefined) out.examples = [...new Set([...(out.examples ?? []), ...(s.examples ?? [])])];
  }
  if (!schemas.every((s) => s.description === schemas[0].description)) {
    out.description =
      takers
        .map((e, i) => (schemas[i].description ? `${e.engine}: ${schemas[i].description}` : ''))
        .filter(Boolean)
        .join(' ') || undefined;
  }
  const defaults = route.map((e) => paramOf(e, name)?.schema.default);
  if (!defaults.every((d) => d !== undefined && d === defaults[0])) delete out.default;

  const requires = (e: Endpoint) => paramOf(e, name)!.required === true;
  const notes: string[] = [];
  if (takers.length < route.length) notes.push(`engine=${takers.map((e) => `${e.engine}${requires(e) ? ' (required)' : ''}`).join(' or ')}`);
  else if (takers.some(requires))
    notes.push(
      `required on ${takers
        .filter(requires)
        .map((e) => e.engine)
        .join(', ')}`,
    );
  if (out.default === undefined && schemas.some((s) => s.default !== undefined))
    notes.push(takers.map((e, i) => `default ${schemas[i].default ?? 'none'} on ${e.engine}`).join(', '));
  if (notes.length) out.description = `${notes.join('; ')}${out.description ? `: ${out.description}` : '.'}`;
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
}

/**
 * The querystring schema of a live route, built from its engines' declarations. `engine` is
 * checked first. One engine: its parameters. Several: `engine` picks one, and an if/then branch
 * per engine holds that engine's exact parameters, required ones and defaults (an unknown
 * parameter for it is refused naming the engine); the top-level properties are their union
 * (unionParam), which /openapi.json lists. Ajv checks, coerces and defaults all of it
 * (validation.ts); `limit`, `cursor` and the engines' locked filters are refused before it.
 */
export function liveQuerystring(route: LiveRoute): Record<string, unknown> {
  const endpoints = [...route.engines.values()].map((x) => x.endpoint);
  const names = [...route.engines.keys()];
  const engine = {
    type: 'string',
    enum: names,
    description:
      names.length > 1 ? 'The engine that answers (and is metered).' : route.engineRequired ? `Must be ${names[0]}.` : `May be left out; ${names[0]} if sent.`,
  };
  const engineRequired = route.engineRequired ? ['engine'] : [];
  // First of all (Ajv applies allOf before the rest): `engine`, so a wrong one is named as such.
  const pick = { type: 'object', required: engineRequired, properties: { engine } };
  if (endpoints.length === 1) {
    const [endpoint] = endpoints;
    return {
      type: 'object',
      additionalProperties: false,
      required: [...engineRequired, ...requiredOf(endpoint)],
      properties: { engine, ...Object.fromEntries(declared(endpoint).map(([name, p]) => [name, p.schema])) },
      allOf: [pick],
    };
  }
  const all = [...new Set(endpoints.flatMap((e) => Object.keys(e.params)))];
  return {
    type: 'object',
    additionalProperties: false,
    required: [...engineRequired, ...all.filter((name) => endpoints.every((e) => requiredOf(e).includes(name)))],
    properties: { engine, ...Object.fromEntries(all.map((name) => [name, unionParam(name, endpoints)])) },
    allOf: [
      pick,
      ...endpoints.map((e) => ({
        if: { type: 'object', required: ['engine'], properties: { engine: { const: e.engine } } },
        // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, not a thenable
        then: {
          type: 'object',
          additionalProperties: false,
          required: requiredOf(e),
          properties: { engine: { const: e.engine }, ...Object.fromEntries(declared(e).map(([name, p]) => [name, p.schema])) },
        },
      })),
    ],
  };
}

/**
 * Each live path's operationId, and the catalogue entries beside those every live scrape can
 * give (a failed or slow upstream, a locked parameter): not_found where the page read names
 * one thing that may not exist.
 */
const DOCS: Record<string, { operationId: string; errors?: ErrorName[] }> = {
  '/v1/search': { operationId: 'searchLive' },
  '/v1/product': { operationId: 'getProduct', errors: ['not_found'] },
  '/v1/product/reviews': { operationId: 'getProductReviews', errors: ['not_found'] },
  '/v1/product/offers': { operationId: 'getProductOffers' },
  '/v1/seller': { operationId: 'getSeller', errors: ['not_found'] },
  '/v1/product/lookup': { operationId: 'lookupProduct' },
  '/v1/seller/products': { operationId: 'getSellerProducts' },
  '/v1/categories': { operationId: 'getCategories' },
  '/v1/bestsellers': { operationId: 'getBestsellers' },
  '/v1/publisher/listing': { operationId: 'getPublisherListing' },
  '/v1/publisher/article': { operationId: 'getPublisherArticle' },
  '/v1/launches': { operationId: 'getLaunches' },
  '/v1/launches/product': { operationId: 'getLaunch', errors: ['not_found'] },
  '/v1/company/reviews': { operationId: 'getCompanyReviews', errors: ['not_found'] },
  '/v1/job-board/jobs': { operationId: 'searchJobBoard' },
  '/v1/contacts': { operationId: 'getContacts' },
};
const LIVE_ERRORS: ErrorName[] = ['locked_parameter', 'scrape_failed', 'timeout'];

/** What the live routes need: the scrapers, the client they read pages with, the parser threads. */
export interface LiveDeps {
  scrapers: LiveScrapers;
  live: HttpClient;
  parsers: ParsePool;
}

export function liveRoutes(app: FastifyInstance, deps: LiveDeps): void {
  for (const route of liveRouteTable(deps.scrapers)) {
    const { engines } = route;
    const first = engines.values().next().value!;
    /** The engine a request names; with none sent, the path's only engine where `engine` may be left out. */
    const chosen = (q: Query) => (typeof q.engine === 'string' ? engines.get(q.engine) : q.engine === undefined && !route.engineRequired ? first : undefined);
    app.get<{ Querystring: Query }>(route.path, {
      config: {
        auth: 'bearer',
        badInput: 'bad_parameter',
        errors: [...LIVE_ERRORS, ...(DOCS[route.path]?.errors ?? [])],
        // An unknown engine (`constructor` included: a Map has no inherited keys) still needs a
        // product to authorise against; validation answers 400.
        product: (req) => (chosen(req.query as Query) ?? first).product,
      },
      schema: {
        summary: route.summary,
        operationId: DOCS[route.path]?.operationId,
        tags: [...new Set([...engines.values()].map((x) => familyTag(x.product)))],
        security: [{ bearer: [] }],
        querystring: liveQuerystring(route),
        // allOf, not a bare $ref: @fastify/swagger drops the siblings of a bare one (the example).
        response: { 200: { description: 'The results of the page read, and the effective query.', allOf: [{ $ref: 'LiveEnvelope#' }] } },
      },
      // `limit`, `cursor` and locked filters are 400 locked_parameter, before the schema would call them unknown.
      preValidation: async (req) => {
        const endpoint = chosen(req.query)?.endpoint;
        if (endpoint) refuseLocked(endpoint, Object.keys(req.query));
      },
      handler: async (req) => {
        const { engine: _engine, ...sent } = req.query;
        return runLive(chosen(req.query)!.endpoint, sent, deps.live, deps.parsers);
      },
    });
  }
}
