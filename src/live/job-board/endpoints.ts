/**
 * Job-board listings (8 credits a page): the board's search results (JOB_BOARD_URL, read in
 * the JOB_BOARD_LAYOUT layout) for `q` and `location`, `page` forwarded as a `{start}` offset
 * of 10 a page (Indeed's step and LinkedIn's page size alike).
 */
import { bad, pageParam, stringParam } from '../declare.js';
import { fillTemplate, type LiveEndpoint } from '../scraper.js';
import type { JobBoardLayout, JobItem } from './parse.js';

const PAGE_SIZE = 10;

export function jobBoardEndpoints(url: string, layout: JobBoardLayout, clock: () => number) {
  const listing: LiveEndpoint<{ q: string | null; location: string | null; page: number }, JobItem> = {
    engine: 'job_boards',
    family: 'jobs',
    params: {
      q: stringParam(200, { description: 'Search terms (q, location or both).' }),
      location: stringParam(200, { description: 'Where (q, location or both).' }),
      page: pageParam('forwarded'),
    },
    check(q) {
      if (q.q === null && q.location === null) throw bad('q or location is required');
    },
    async run(q, call) {
      const start = (q.page - 1) * PAGE_SIZE;
      const page = await call.get(fillTemplate(url, { q: q.q ?? '', location: q.location ?? '', start, page: q.page }));
      return call.parse('parseJobListing', page.html, page.url, new Date(clock()), layout);
    },
  };
  return { listing };
}
