import type { FastifyInstance } from 'fastify';
import { DIMS } from '../../dims.js';
import { match, MODEL, type MatchDeps, type MatchRequest } from '../../match/index.js';
import { TAGS } from '../openapi.js';
import { noQuery, security, sourceNames } from '../schemas.js';

const body = {
  type: 'object',
  additionalProperties: false,
  description: 'The whole body is optional: an empty request pages the corpus newest-first.',
  properties: {
    model: {
      type: 'string',
      maxLength: 100,
      default: MODEL,
      description: 'Embedding space of `vector`; only `bge-m3`. Ignored in text mode and with no query.',
    },
    vector: { type: 'array', minItems: DIMS, maxItems: DIMS, items: { type: 'number' }, description: 'A bge-m3 vector (normalised by the service).' },
    text: { type: 'string', minLength: 1, maxLength: 4000, description: 'Text embedded by the service.' },
    like: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description:
        "More like this: an item's `id`. The query is that article's latest revision's chunk vectors (a revision scores its best cosine to any of them); the article itself is left out. Not with `text` or `vector`.",
    },
    order: { type: 'string', enum: ['time', 'relevance'], default: 'time' },
    min_score: { type: 'number', minimum: -1, maximum: 1, default: 0.5, description: 'Cosine floor; ignored with no query.' },
    since: { type: 'string', maxLength: 64, description: "Inclusive lower bound on event_time: RFC 3339, or YYYY-MM-DD (from that UTC day's first second)." },
    until: { type: 'string', maxLength: 64, description: "Inclusive upper bound on event_time: RFC 3339, or YYYY-MM-DD (through that UTC day's last second)." },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 50 },
    cursor: { type: 'string', description: '`next_cursor` of the previous page; order=time only. A malformed one is 400 bad_cursor.' },
    include_edits: { type: 'boolean', default: false },
    sources: { ...sourceNames, description: 'Keep only these sources (names from GET /v1/sources).' },
    exclude_sources: { ...sourceNames, description: 'Drop these sources.' },
    after_seq: {
      type: 'integer',
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description:
        'order=time only: just the revisions that became searchable since this point (a `seq` of an earlier answer), whatever their event_time: the monitoring loop that never misses a late article.',
    },
  },
} as const;

const item = {
  allOf: [
    { $ref: 'Article#' },
    {
      type: 'object',
      required: ['score', 'best_chunk'],
      properties: {
        score: { type: ['number', 'null'], description: 'Cosine of the best chunk; null with no query.' },
        best_chunk: { type: ['string', 'null'], description: 'The text of the best-scoring chunk; null with no query.' },
      },
    },
  ],
} as const;

const response200 = {
  type: 'object',
  required: ['model', 'order', 'count', 'items', 'seq'],
  properties: {
    model: { type: 'string' },
    order: { type: 'string', enum: ['time', 'relevance'] },
    count: { type: 'integer' },
    items: { type: 'array', items: item },
    next_cursor: { type: ['string', 'null'], description: 'Only with order=time; null on the last page.' },
    seq: {
      type: 'integer',
      description: 'How far the ingest sequence was in reach of this answer: send it back as `after_seq` for what became searchable since.',
    },
  },
} as const;

export function matchRoutes(app: FastifyInstance, deps: MatchDeps): void {
  app.post<{ Body: MatchRequest }>('/v1/match', {
    config: {
      auth: true,
      product: 'match',
      errors: [
        'bad_cursor',
        'too_many_matches',
        'order_requires_query',
        'cursor_requires_time_order',
        'text_mode_unavailable',
        'embed_unavailable',
        'unknown_article',
        'article_not_embedded',
        'shard_unavailable',
      ],
    },
    schema: {
      summary: 'Match articles to a text, a vector, an article (like), or nothing',
      operationId: 'matchArticles',
      tags: [TAGS.match.name],
      security,
      querystring: noQuery,
      body,
      response: { 200: response200 },
    },
    // `default`s above document the contract; the core applies them, so Ajv must not. The
    // body comes back serialised (match.ts, `respond`): Fastify sends a Buffer as it is.
    handler: async (req, reply) => reply.type('application/json; charset=utf-8').send(await match(deps, req.body)),
  });
}
