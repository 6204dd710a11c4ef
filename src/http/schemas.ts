/**
 * JSON schemas shared by routes. They validate requests (Ajv, no coercion, unknown fields
 * rejected) and, through @fastify/swagger, are the published OpenAPI contract.
 */
import { catalogue, type ErrorName } from '../errors.js';

/**
 * Schemas registered once (app.ts `addSchema`) and referenced as `{ $ref: 'ErrorBody#' }`:
 * /openapi.json lists them under `components.schemas` by their `$id`.
 */
export const errorBody = {
  $id: 'ErrorBody',
  type: 'object',
  description: 'Every error. Branch on `error`; `message` and `detail` are the same human text.',
  required: ['error', 'message', 'detail'],
  properties: {
    error: { type: 'string', enum: [...new Set(Object.values(catalogue).map((e) => e.code))] },
    message: { type: 'string' },
    detail: { type: 'string' },
    matched_at_least: { type: 'integer', description: 'Only on too_many_matches: a floor on the matches found before giving up.' },
  },
} as const;

/**
 * The error responses for the catalogue entries a route can give, one per status: the error
 * body with `error` narrowed to those entries' codes, each listed with its meaning, and the
 * first as the example.
 */
export function errorResponses(names: Iterable<ErrorName>): Record<number, Record<string, unknown>> {
  const byStatus = new Map<number, ErrorName[]>();
  for (const name of new Set(names)) byStatus.set(catalogue[name].status, [...(byStatus.get(catalogue[name].status) ?? []), name]);
  return Object.fromEntries(
    [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([status, entries]) => {
        const codes = [...new Set(entries.map((n) => catalogue[n].code))];
        const first = catalogue[entries[0]];
        return [
          status,
          {
            description: entries.map((n) => `\`${catalogue[n].code}\`: ${catalogue[n].message}`).join('\n\n'),
            allOf: [{ $ref: 'ErrorBody#' }, { type: 'object', properties: { error: { type: 'string', enum: codes } } }],
            examples: [{ error: first.code, message: first.message, detail: first.message }],
          },
        ];
      }),
  );
}

export const sourceNames = {
  type: 'array',
  minItems: 1,
  maxItems: 50,
  items: { type: 'string', minLength: 1, maxLength: 200 },
} as const;

export const noQuery = { type: 'object', additionalProperties: false, properties: {} } as const;

export const security: { [name: string]: string[] }[] = [{ gatewayKey: [], gatewayHost: [] }, { bearer: [] }];

/**
 * A GET endpoint's query string: each parameter a string unless it says its type (integer,
 * number, boolean: Ajv coerces the text and fills in defaults, validation.ts), unknown
 * parameters refused.
 */
export function queryString(props: Record<string, Record<string, unknown>>, required: string[] = []) {
  return {
    type: 'object',
    additionalProperties: false,
    required,
    properties: Object.fromEntries(Object.entries(props).map(([k, v]) => [k, { type: 'string', ...v }])),
  } as const;
}

/** The fields every article row shares (a /v1/match item, a /v1/news result). */
export const articleProperties = {
  id: { type: 'string', format: 'uuid' },
  title: { type: 'string' },
  body: { type: 'string' },
  source_name: { type: 'string' },
  source_url: { type: 'string', format: 'uri' },
  event_time: { type: 'string', format: 'date-time' },
} as const;
/** Those fields as a shared schema; a row type adds its own beside it: `allOf: [{ $ref: 'Article#' }, { ...its fields }]`. */
export const articleSchema = {
  $id: 'Article',
  type: 'object',
  description: 'A stored article revision.',
  required: Object.keys(articleProperties),
  properties: articleProperties,
} as const;
export const ARTICLE_FIELD_NAMES = Object.keys(articleProperties) as (keyof typeof articleProperties)[];

/** A page of keyword results (/v1/news, /v1/jobs): the rows, keyset paging, and whether the index was still catching up. */
export const keywordPage = (result: Record<string, unknown>, partial: string) =>
  ({
    type: 'object',
    required: ['results', 'count', 'next_cursor', 'partial'],
    properties: {
      results: { type: 'array', items: result },
      count: { type: 'integer' },
      next_cursor: { type: ['string', 'null'] },
      partial: {
        type: 'boolean',
        description: `true while the keyword index is catching up with a large backlog: ${partial} stored meanwhile may be missing.`,
      },
    },
  }) as const;

/** The answer of every live scrape (live/scraper.ts): the engine's results and the query it ran. */
export const liveEnvelope = {
  $id: 'LiveEnvelope',
  type: 'object',
  description: 'A live scrape: the results of one page read, and the effective query. Some engines add fields of their own beside these.',
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
