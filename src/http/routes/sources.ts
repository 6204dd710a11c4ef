import type { FastifyInstance } from 'fastify';
import type { Outlets } from '../../ingest/index.js';
import type { Store } from '../../store/index.js';
import { formatTime } from '../../time.js';
import { TAGS } from '../openapi.js';
import { noQuery, security } from '../schemas.js';

const response200 = {
  type: 'object',
  required: ['count', 'sources'],
  properties: {
    count: { type: 'integer' },
    sources: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'homepage', 'article_count', 'last_event_time'],
        properties: {
          name: { type: 'string', description: 'Exact name to pass in sources / exclude_sources.' },
          homepage: { type: ['string', 'null'] },
          article_count: { type: 'integer' },
          last_event_time: { type: ['string', 'null'], format: 'date-time' },
        },
      },
    },
  },
} as const;

/** The stored sources and the configured outlets. */
export interface SourcesDeps {
  store: Pick<Store, 'listSources'>;
  outlets: Pick<Outlets, 'list'>;
}

export function sourcesRoutes(app: FastifyInstance, deps: SourcesDeps): void {
  app.get('/v1/sources', {
    config: { auth: true, product: 'sources' },
    schema: {
      summary: 'The outlets served, sorted by name',
      operationId: 'listSources',
      tags: [TAGS.news.name],
      security,
      querystring: noQuery,
      response: { 200: response200 },
    },
    handler: async () => {
      // Every source with articles and every enabled outlet (one not polled yet has none);
      // outlets switched off with `sources disable` are left out (their articles stay searchable).
      const outlets = deps.outlets.list();
      const disabled = new Set(outlets.filter((o) => !o.enabled).map((o) => o.name));
      const stored = deps.store.listSources().filter((s) => !disabled.has(s.name));
      const have = new Set(stored.map((s) => s.name));
      const sources = [
        ...stored.map((s) => ({
          name: s.name,
          homepage: s.homepage,
          article_count: s.articleCount,
          last_event_time: s.lastEventTime === null ? null : formatTime(s.lastEventTime),
        })),
        ...outlets.filter((o) => o.enabled && !have.has(o.name)).map((o) => ({ name: o.name, homepage: o.homepage, article_count: 0, last_event_time: null })),
      ].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      return { count: sources.length, sources };
    },
  });
}
