/**
 * JSON schemas shared by routes. They validate requests (Ajv, no coercion, unknown fields
 * rejected) and, through @fastify/swagger, are the published OpenAPI contract.
 */
import { catalogue } from '../errors.js';

export const errorBody = {
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

/** Error responses for the statuses a route can give (the shape is the same for all). */
export const errorResponses = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, { ...errorBody, description: `Error (${s})` }]));

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
