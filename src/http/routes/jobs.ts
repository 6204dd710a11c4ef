import type { FastifyInstance } from 'fastify';
import { searchJobs, type JobsDeps, type JobsQuery } from '../../keyword/index.js';
import { csv, timeRange } from '../params.js';
import { TAGS } from '../openapi.js';
import { keywordPage, queryString, security } from '../schemas.js';

const querystring = queryString({
  q: { maxLength: 1000, description: 'Keywords over title, company, location, skills and description (the /v1/news query language).' },
  skills: { description: 'Comma-separated skills (names or aliases from GET /v1/taxonomies/skills), all required.' },
  location: { maxLength: 200, description: 'Words of the location, in order (e.g. "San Francisco").' },
  remote: { type: 'boolean', description: 'true: remote postings only; false: postings stated as not remote.' },
  since: { description: 'Postings from this time (RFC 3339).' },
  limit: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
  cursor: { description: '`next_cursor` of the previous page, with every other parameter but limit unchanged.' },
});

const nullable = (type: string) => ({ type: [type, 'null'] });
const result = {
  type: 'object',
  required: [
    'id',
    'url',
    'title',
    'company',
    'location',
    'remote',
    'employment_type',
    'salary_min',
    'salary_max',
    'salary_currency',
    'skills',
    'posted_at',
    'source',
    'snippet',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    url: { type: 'string', format: 'uri' },
    title: { type: 'string' },
    company: { type: 'string' },
    location: nullable('string'),
    remote: nullable('boolean'),
    employment_type: nullable('string'),
    salary_min: nullable('number'),
    salary_max: nullable('number'),
    salary_currency: nullable('string'),
    skills: { type: 'array', items: { type: 'string' }, description: 'Vocabulary names.' },
    posted_at: { type: 'string', format: 'date-time' },
    source: { type: 'string' },
    snippet: { type: 'string' },
    highlight: { type: ['string', 'null'], description: 'With q: a passage with the matched words in <mark>…</mark>; the rest HTML-escaped.' },
  },
} as const;

/** The query string as the schema lets it through: typed, defaults filled in. */
interface JobsQueryString {
  q?: string;
  skills?: string;
  location?: string;
  remote?: boolean;
  since?: string;
  limit: number;
  cursor?: string;
}

/** The search the core runs for a checked query string: skills split (at most 20), `since` read. */
function jobsQuery(p: JobsQueryString): JobsQuery {
  const { skills, since, ...rest } = p;
  return { ...rest, skills: csv('skills', skills, 20) ?? [], since: timeRange(since, undefined).since };
}

export function jobsRoutes(app: FastifyInstance, deps: JobsDeps): void {
  app.get<{ Querystring: JobsQueryString }>('/v1/jobs', {
    config: { auth: true, product: 'jobs', badInput: 'bad_parameter', errors: ['empty_query', 'unknown_skill', 'bad_cursor'] },
    schema: {
      summary: 'Search job postings, newest first',
      operationId: 'searchJobs',
      tags: [TAGS.jobs.name],
      security,
      querystring,
      response: { 200: keywordPage(result, 'postings') },
    },
    handler: async (req) => searchJobs(deps, jobsQuery(req.query)),
  });
}
