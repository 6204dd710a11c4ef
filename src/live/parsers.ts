/**
 * Every live parser by name: what a parse worker can run. Each takes a page's HTML and plain
 * data (strings, numbers, Dates, plain objects) and returns plain data, so its call crosses
 * to a worker thread and back by structured clone.
 */
import { readContactsPage } from './contacts/extract.js';
import { parseJobListing } from './job-board/parse.js';
import { parseLaunch, parseLeaderboard } from './launches/parse.js';
import { parseBestsellers } from './marketplace/bestsellers.js';
import { parseDepartments } from './marketplace/categories.js';
import { parseOffers } from './marketplace/offers.js';
import { parseProductPage, parseProductReviews } from './marketplace/product.js';
import { parseSearchResults } from './marketplace/search.js';
import { parseSellerProfile } from './marketplace/sellers.js';
import { parseArticle } from './publisher/article.js';
import { parseListing } from './publisher/listing.js';
import { parseCompanyReviews } from './reviews/parse.js';
import { parseNewsResults } from './web/news.js';
import { parseWebResults } from './web/search.js';

export const PARSERS = {
  parseWebResults,
  parseNewsResults,
  parseListing,
  parseArticle,
  parseLeaderboard,
  parseLaunch,
  parseCompanyReviews,
  parseJobListing,
  readContactsPage,
  parseSearchResults,
  parseProductPage,
  parseProductReviews,
  parseOffers,
  parseSellerProfile,
  parseBestsellers,
  parseDepartments,
};

export type ParserName = keyof typeof PARSERS;
export type ParserArgs<K extends ParserName> = Parameters<(typeof PARSERS)[K]>;
export type ParserResult<K extends ParserName> = ReturnType<(typeof PARSERS)[K]>;
