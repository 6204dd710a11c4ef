/**
 * What /openapi.json says beyond the route schemas: the document's header (servers, tags,
 * security schemes), the shared schemas, and, per route, the error responses it can give and
 * its examples. Routes declare an `operationId`, `tags` and their own error codes
 * (`config.errors`); the codes that follow from how a route is reached (a key, metering, a
 * schema to pass, a body to parse) are added here, from its config, so no route lists them by
 * hand and none lists one it cannot give.
 */
import type { SwaggerOptions } from '@fastify/swagger';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import type { ErrorName } from '../errors.js';
import { familyOf, type Family, type Product } from '../products.js';
import { EXAMPLES } from './examples.js';
import { articleSchema, errorBody, errorResponses, liveEnvelope } from './schemas.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Catalogue entries the route's own work can throw (the core's domain codes), beside the implied ones (routeErrors). */
    errors?: readonly ErrorName[];
  }
}

/** The operation groups of /docs, one a product family. */
export const TAGS = {
  match: { name: 'Match', description: 'Semantic match over the stored corpus: a bge-m3 vector, a text (text mode), or no query at all.' },
  news: { name: 'News', description: 'Keyword search over the stored articles, and the outlets they come from.' },
  jobs: { name: 'Jobs', description: 'Keyword search over stored job postings.' },
  market: { name: 'Market intelligence', description: 'Counts over the stored corpora: skills asked for over time, article volume per day and source.' },
  taxonomies: { name: 'Taxonomies', description: 'The vocabularies the other endpoints take: skills and news sources.' },
  live_search: { name: 'Live search', description: 'Live web and news search results, scraped per call (Bearer keys only).' },
  live_page: { name: 'Live pages', description: 'Publisher listings and articles, launches, company reviews and job boards, read live (Bearer keys only).' },
  marketplace: { name: 'Marketplace', description: 'Live marketplace products, reviews, offers, sellers, categories and best sellers (Bearer keys only).' },
  contacts: { name: 'Contacts', description: 'The emails, phones and social profiles a domain publishes, read live (Bearer keys only).' },
  monitors: {
    name: 'Monitors',
    description: 'Standing match queries: every new article that matches is pushed, by a signed webhook or a Server-Sent Events stream (Bearer keys only).',
  },
  account: { name: 'Account', description: "The calling key's account: credits, subscriptions, usage and rate limits." },
  ops: { name: 'Operations', description: 'Liveness and readiness probes and Prometheus metrics: no key for the probes.' },
} as const;

/** The tag of a live product's family (indexed products are tagged by their routes). */
export const familyTag = (product: Product): string => TAGS[familyOf(product) as Exclude<Family, 'indexed'>]?.name ?? TAGS.match.name;

const INFO_DESCRIPTION = `Semantic news match, keyword search and live scrapes over one API.

**Keys.** Send \`Authorization: Bearer <key>\`, or \`X-Gateway-Key\` with \`X-Gateway-Host\` (the gateway door: indexed products only). The probes need no key.

**Errors.** Every error is \`{"error", "message", "detail"}\`: branch on \`error\`. Each operation lists the codes it can give. Any request may also get \`503 shutting_down\`, \`503 too_many_connections\`, \`408 request_timeout\`, \`431 headers_too_large\` (the connection and server state, not the operation), or \`500 internal\` (a bug: report it with the \`X-Request-ID\`).

**Billing.** Metered calls answer \`X-Credits-Charged\` and \`X-Credits-Remaining\`; a refused or failed call is not charged. \`Idempotency-Key\` replays a kept answer without a second charge.`;

/** The @fastify/swagger options: the document's header; the paths come from the route schemas. */
export function swaggerOptions(): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'newsmatch', version: '1.0.0', description: INFO_DESCRIPTION },
      // The service's own origin, whatever it is reached by (the host is not known when the document is built).
      servers: [{ url: '/', description: 'This server' }],
      tags: Object.values(TAGS).map((t) => ({ ...t })),
      components: {
        securitySchemes: {
          gatewayKey: { type: 'apiKey', in: 'header', name: 'X-Gateway-Key', description: 'A gateway key; with X-Gateway-Host.' },
          gatewayHost: { type: 'apiKey', in: 'header', name: 'X-Gateway-Host', description: "The service's GATEWAY_HOST; with X-Gateway-Key." },
          bearer: { type: 'http', scheme: 'bearer', description: 'A key from `newsmatch keys create`.' },
        },
      },
    },
    // Shared schemas keep their `$id` as their name under components.schemas.
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  };
}

type Route = Pick<RouteOptions, 'schema' | 'config'>;

/**
 * Every catalogue entry a route can answer with: what its door implies (a key: unauthorized;
 * Bearer only: forbidden), metering (authorise, rate limit, charge, concurrency, a bad or reused
 * Idempotency-Key), its schemas (a failed check; a body that is not JSON, too large or of
 * another type), and its own `config.errors`. Door-level answers any request may get are in
 * the document's description instead (INFO_DESCRIPTION).
 */
export function routeErrors({ schema = {}, config = {} }: Route): ErrorName[] {
  const out: ErrorName[] = [];
  const s = schema as FastifySchema;
  if (s.body) out.push('bad_request', 'payload_too_large', 'unsupported_media_type');
  if (s.body || s.querystring) out.push(config.badInput ?? 'invalid_request');
  if (config.auth) out.push('unauthorized');
  if (config.auth === 'bearer') out.push('forbidden');
  if (config.auth && config.product !== undefined) {
    out.push('forbidden', 'not_subscribed', 'quota_exceeded', 'product_unavailable', 'overloaded', 'invalid_request');
    // Only gateway keys have a key-level rate limit; Bearer-only routes never see one.
    if (config.auth === true) out.push('rate_limited');
  }
  return [...new Set([...out, ...(config.errors ?? [])])];
}

/**
 * Registers the shared schemas and completes each documented route's schema as it is
 * registered (before Fastify compiles it, so the error bodies are serialised by the schema
 * they are documented with): its error responses and its examples. A route without an
 * operationId or a tag is refused at startup.
 */
export function documentRoutes(app: FastifyInstance): void {
  for (const s of [errorBody, articleSchema, liveEnvelope]) app.addSchema(s);
  app.addHook('onRoute', (route) => {
    const schema = route.schema;
    if (!schema || schema.hide) return;
    if (!schema.operationId || !schema.tags?.length) {
      throw new Error(`${String(route.method)} ${route.url}: a documented route needs an operationId and a tag (src/http/openapi.ts)`);
    }
    const example = EXAMPLES[schema.operationId];
    const response = { ...(schema.response as Record<string, Record<string, unknown>>) };
    if (example?.response !== undefined && response[200]) response[200] = withExample(response[200], example.response);
    const body = schema.body && example?.request !== undefined ? { body: { ...(schema.body as object), examples: [example.request] } } : {};
    // Billed per call (X-Credits-Charged): what the metering codes in its errors come from.
    const metered = route.config?.auth && route.config.product !== undefined ? { 'x-metered': true } : {};
    route.schema = { ...schema, ...body, ...metered, response: { ...response, ...errorResponses(routeErrors(route)) } };
  });
}

/** A response with its example: in the schema (`examples`, moved beside it by @fastify/swagger), or in each media type of a `content` response. */
function withExample(response: Record<string, unknown>, example: unknown): Record<string, unknown> {
  const content = response.content as Record<string, Record<string, unknown>> | undefined;
  if (!content) return { ...response, examples: [example] };
  return { ...response, content: Object.fromEntries(Object.entries(content).map(([type, media]) => [type, { ...media, example }])) };
}
