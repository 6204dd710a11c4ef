import type { FastifyInstance } from 'fastify';
import type { Outlets } from '../../ingest/index.js';
import { newsVolumeByKeyword, newsVolumeByVector, skillsMarket, skillsTaxonomy, sourcesTaxonomy, type MarketDeps } from '../../market-intelligence/index.js';
import { DIMS } from '../../dims.js';
import { csv, timeRange, withDefaults } from '../params.js';
import { TAGS } from '../openapi.js';
import { noQuery, queryString, security, sourceNames } from '../schemas.js';

const volume200 = {
  type: 'object',
  required: ['total', 'days', 'sources'],
  properties: {
    total: { type: 'integer' },
    days: {
      type: 'array',
      items: {
        type: 'object',
        required: ['date', 'count', 'by_source'],
        properties: {
          date: { type: 'string', format: 'date' },
          count: { type: 'integer' },
          by_source: { type: 'object', additionalProperties: { type: 'integer' } },
        },
      },
    },
    sources: { type: 'array', items: { type: 'object', required: ['name', 'count'], properties: { name: { type: 'string' }, count: { type: 'integer' } } } },
  },
} as const;
const named = (extra: Record<string, unknown>) => ({
  type: 'object',
  required: ['name', ...Object.keys(extra)],
  properties: { name: { type: 'string' }, ...extra },
});
const skills200 = {
  type: 'object',
  required: ['interval', 'since', 'until', 'skills'],
  properties: {
    interval: { type: 'string', enum: ['week', 'month'] },
    since: { type: ['string', 'null'], format: 'date', description: 'First period shown.' },
    until: { type: ['string', 'null'], format: 'date', description: 'Last period shown.' },
    skills: {
      type: 'array',
      items: named({
        category: { type: 'string' },
        total: { type: 'integer' },
        series: {
          type: 'array',
          items: {
            type: 'object',
            required: ['period_start', 'postings'],
            properties: { period_start: { type: 'string', format: 'date' }, postings: { type: 'integer' } },
          },
        },
        co_occurring: { type: 'array', items: named({ postings: { type: 'integer' } }) },
      }),
    },
  },
} as const;
const taxonomySkills200 = {
  type: 'object',
  required: ['count', 'categories', 'skills'],
  properties: {
    count: { type: 'integer' },
    categories: { type: 'array', items: { type: 'string' } },
    skills: { type: 'array', items: named({ category: { type: 'string' }, aliases: { type: 'array', items: { type: 'string' } } }) },
  },
} as const;
const taxonomySources200 = {
  type: 'object',
  required: ['count', 'sources'],
  properties: {
    count: { type: 'integer' },
    sources: {
      type: 'array',
      items: named({
        homepage: { type: ['string', 'null'] },
        language: { type: ['string', 'null'], description: 'BCP 47, where known.' },
        country: { type: ['string', 'null'], description: 'ISO 3166-1 alpha-2, where known.' },
        article_count: { type: 'integer' },
      }),
    },
  },
} as const;
const range = {
  since: { description: 'Inclusive lower bound (RFC 3339).' },
  until: { description: 'Inclusive upper bound (RFC 3339).' },
};

const skillsQuery = queryString(
  { skills: { description: 'Comma-separated skills (vocabulary names or aliases).' }, ...range, interval: { enum: ['week', 'month'], default: 'month' } },
  ['skills'],
);
/** /v1/market/skills's query string as the schema lets it through: typed, defaults filled in. */
interface SkillsQueryString {
  skills: string;
  since?: string;
  until?: string;
  interval: 'week' | 'month';
}

const volumeQuery = queryString(
  {
    q: { maxLength: 1000, description: 'Keywords (the /v1/news query language).' },
    sources: { description: 'Comma-separated source names to keep.' },
    exclude_sources: { description: 'Comma-separated source names to drop.' },
    ...range,
    include_edits: { type: 'boolean', default: false, description: 'Every revision counted (true) or first publications only.' },
  },
  ['q'],
);
interface VolumeQueryString {
  q: string;
  sources?: string;
  exclude_sources?: string;
  since?: string;
  until?: string;
  include_edits: boolean;
}

const volumeBody = {
  type: 'object',
  additionalProperties: false,
  required: ['vector'],
  properties: {
    vector: { type: 'array', minItems: DIMS, maxItems: DIMS, items: { type: 'number' } },
    min_score: { type: 'number', minimum: -1, maximum: 1, default: 0.5 },
    sources: sourceNames,
    exclude_sources: sourceNames,
    since: { type: 'string' },
    until: { type: 'string' },
    include_edits: { type: 'boolean', default: false },
  },
} as const;
/** The body as the schema lets it through; withDefaults fills in min_score and include_edits. */
interface VolumeBody {
  vector: number[];
  min_score: number;
  sources?: string[];
  exclude_sources?: string[];
  since?: string;
  until?: string;
  include_edits: boolean;
}

export function marketRoutes(app: FastifyInstance, deps: MarketDeps & { outlets: Pick<Outlets, 'list'> }): void {
  const config = { auth: true, product: 'market', badInput: 'bad_parameter' } as const;
  const tags = [TAGS.market.name];
  app.get<{ Querystring: SkillsQueryString }>('/v1/market/skills', {
    config: { ...config, errors: ['unknown_skill'] },
    schema: {
      summary: 'Postings per skill per week or month, and the skills asked for beside each',
      operationId: 'getSkillsMarket',
      tags,
      security,
      querystring: skillsQuery,
      response: { 200: skills200 },
    },
    handler: async (req) => {
      const { skills, since, until, interval } = req.query;
      return skillsMarket(deps, { skills: csv('skills', skills, 20)!, ...timeRange(since, until), interval });
    },
  });
  app.get<{ Querystring: VolumeQueryString }>('/v1/market/news-volume', {
    config: { ...config, errors: ['empty_query', 'unknown_source'] },
    schema: {
      summary: 'Articles per day and source matching a keyword query',
      operationId: 'getNewsVolume',
      tags,
      security,
      querystring: volumeQuery,
      response: { 200: volume200 },
    },
    handler: async (req) => {
      const { sources, exclude_sources, since, until, ...rest } = req.query;
      return newsVolumeByKeyword(deps, {
        ...rest,
        sources: csv('sources', sources),
        exclude_sources: csv('exclude_sources', exclude_sources),
        ...timeRange(since, until),
      });
    },
  });
  app.post<{ Body: VolumeBody }>('/v1/market/news-volume', {
    config: { ...config, errors: ['unknown_source'] },
    schema: {
      summary: 'Articles per day and source within a cosine floor of a bge-m3 vector',
      operationId: 'getNewsVolumeByVector',
      tags,
      security,
      querystring: noQuery,
      body: volumeBody,
      response: { 200: volume200 },
    },
    handler: async (req) => {
      const { since, until, ...rest } = withDefaults(volumeBody, req.body);
      return newsVolumeByVector(deps, { ...rest, ...timeRange(since, until) });
    },
  });
  app.get<{ Querystring: { category?: string } }>('/v1/taxonomies/skills', {
    config: { auth: true, product: 'taxonomies', badInput: 'bad_parameter' },
    schema: {
      summary: 'The reviewed skill vocabulary',
      operationId: 'getSkillsTaxonomy',
      tags: [TAGS.taxonomies.name],
      security,
      querystring: queryString({ category: { enum: [...deps.vocabulary.categories] } }),
      response: { 200: taxonomySkills200 },
    },
    handler: async (req) => skillsTaxonomy(deps.vocabulary, req.query),
  });
  app.get('/v1/taxonomies/sources', {
    config: { auth: true, product: 'taxonomies', badInput: 'bad_parameter' },
    schema: {
      summary: 'News sources with language and country where known',
      operationId: 'getSourcesTaxonomy',
      tags: [TAGS.taxonomies.name],
      security,
      querystring: queryString({}),
      response: { 200: taxonomySources200 },
    },
    handler: async () => sourcesTaxonomy(deps.store.listSources(), deps.outlets.list()),
  });
}
