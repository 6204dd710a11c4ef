/**
 * Every live scraper, built from the configuration (each is an `engine=` of the API): the marketplace family and the others
 * (web search, publishers, launches, company reviews, job boards, contacts).
 */
import type { Config } from '../config.js';
import { contactsEndpoint } from './contacts/endpoints.js';
import { jobBoardEndpoints } from './job-board/endpoints.js';
import { launchEndpoints } from './launches/endpoints.js';
import { marketplaceEndpoints, siteBase } from './marketplace/endpoints.js';
import { publisherEndpoints } from './publisher/endpoints.js';
import { reviewEndpoints } from './reviews/endpoints.js';
import { webEndpoints } from './web/endpoints.js';

export function liveScrapers(config: Config, clock: () => number) {
  return {
    marketplace: marketplaceEndpoints(siteBase(config.marketplaceBaseUrl)),
    web: webEndpoints({ search: config.webSearchUrl, news: config.webNewsSearchUrl }, clock),
    publisher: publisherEndpoints(config.publisherWireUrl, clock),
    launches: launchEndpoints(config.launchesBaseUrl, clock),
    reviews: reviewEndpoints(config.companyReviewsUrl, clock),
    jobBoard: jobBoardEndpoints(config.jobBoardUrl, config.jobBoardLayout, clock),
    contacts: contactsEndpoint({ baseUrl: config.contactsBaseUrl, maxPages: config.contactsMaxPages, pageBytes: config.contactsPageBytes }),
  };
}

export type LiveScrapers = ReturnType<typeof liveScrapers>;
