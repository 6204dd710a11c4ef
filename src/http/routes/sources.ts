import type { FastifyInstance } from 'fastify';
import type { Service } from '../../service.js';
import { formatTime } from '../../time.js';
import { errorResponses, noQuery, security } from '../schemas.js';

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

export function sourcesRoutes(app: FastifyInstance, service: Service): void {
  app.get('/v1/sources', {
    config: { auth: true },
    schema: { summary: 'The outlets served, sorted by name', security, querystring: noQuery, response: { 200: response200, ...errorResponses(401, 422) } },
    handler: async () => {
      // Outlets switched off with `sources disable` are not listed (their articles stay searchable).
      const disabled = service.outlets.disabledNames();
      const sources = service.store.listSources().filter((s) => !disabled.has(s.name)).map((s) => ({
        name: s.name,
        homepage: s.homepage,
        article_count: s.articleCount,
        last_event_time: s.lastEventTime === null ? null : formatTime(s.lastEventTime),
      }));
      return { count: sources.length, sources };
    },
  });
}
