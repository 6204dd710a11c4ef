/**
 * The products the service sells and the family each belongs to: plain data, so that config
 * (one MAX_INFLIGHT_<PRODUCT> setting each, PRODUCTS_DISABLED checked at load) and the
 * platform (prices, plans, metering: platform/products.ts) read one list.
 */

export type Family = 'indexed' | 'live_search' | 'live_page' | 'contacts' | 'marketplace';

export const PRODUCTS = {
  match: 'indexed',
  sources: 'indexed',
  news: 'indexed',
  jobs: 'indexed',
  taxonomies: 'indexed',
  market: 'indexed',
  web_search: 'live_search',
  web_news_search: 'live_search',
  publisher: 'live_page',
  launches: 'live_page',
  company_reviews: 'live_page',
  job_boards: 'live_page',
  contacts: 'contacts',
  marketplace: 'marketplace',
  monitors: 'indexed',
} as const satisfies Record<string, Family>;

export type Product = keyof typeof PRODUCTS;
export const PRODUCT_NAMES = Object.keys(PRODUCTS) as Product[];
export const isProduct = (s: string): s is Product => Object.hasOwn(PRODUCTS, s);
export const familyOf = (p: Product): Family => PRODUCTS[p];
