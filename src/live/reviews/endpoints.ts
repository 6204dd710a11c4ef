/**
 * Company reviews (8 credits a page): a company's public review profile (COMPANY_REVIEWS_URL)
 * by its domain, `page` forwarded to the site; the rating summary beside the page's reviews,
 * 404 not_found when the site has no profile for the company.
 */
import { AppError } from '../../errors.js';
import { pageParam, patternParam } from '../declare.js';
import { fillTemplate, type LiveEndpoint } from '../scraper.js';
import type { Review } from './parse.js';

export function reviewEndpoints(url: string, clock: () => number) {
  const reviews: LiveEndpoint<{ company: string; page: number }, Review> = {
    engine: 'company_reviews',
    family: 'reviews',
    params: {
      company: patternParam(/^(?=.{3,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, "the company's domain, e.g. example.com", 'example.com', {
        required: true,
      }),
      page: pageParam('forwarded'),
    },
    async run(q, call) {
      const page = await call.get(fillTemplate(url, { company: q.company, page: q.page }), { accept404: true });
      const parsed = page.status === 404 ? null : await call.parse('parseCompanyReviews', page.html, page.url, new Date(clock()));
      if (parsed === null) throw new AppError('not_found', `the review site has no profile for ${q.company}`);
      return { results: parsed.reviews, extra: { company: parsed.company, page: parsed.page ?? q.page, total_pages: parsed.total_pages } };
    },
  };
  return { reviews };
}
