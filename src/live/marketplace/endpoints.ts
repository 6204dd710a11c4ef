/**
 * The marketplace family (engine=marketplace) as live
 * endpoints: each builds the public page's URL on the country's site (MARKETPLACE_BASE_URL,
 * `{domain}` / `{country}` filled in), reads it in the call's session and parses it.
 *
 * Search refinements use the US site's browse-node ids (prime, star rating, condition, deals);
 * the other sites take the same parameter names, and a mirror may map the ids.
 */
import { AppError } from '../../errors.js';
import { bad, boolParam, enumParam, intParam, numberParam, pageParam, patternParam, stringParam } from '../declare.js';
import type { LiveCall, LiveEndpoint } from '../scraper.js';
import { ScrapeError } from '../scrape-error.js';
import type { BestsellerItem, BestsellersPage } from './bestsellers.js';
import type { Department } from './categories.js';
import { COUNTRIES, MARKETPLACES, type Country } from './countries.js';
import type { Offer } from './offers.js';
import type { ProductPage, Review } from './product.js';
import type { SellerProfile } from './sellers.js';
import type { Card, PageContext } from './types.js';

export const FAMILY = 'ecommerce';
const ENGINE = 'marketplace';

export const SORTS = {
  relevance: 'relevanceblender',
  price_low_to_high: 'price-asc-rank',
  price_high_to_low: 'price-desc-rank',
  reviews: 'review-rank',
  newest: 'date-desc-rank',
  best_sellers: 'exact-aware-popularity-rank',
} as const;
const STARS: Record<number, string> = { 4: '1248879011', 3: '1248880011', 2: '1248881011', 1: '1248882011' };
const CONDITIONS = { new: '6461716011', used: '6461718011', renewed: '16907720011' } as const;
const DEALS = {
  coupons: 'p_n_specials_match:21213697011',
  todays_deals: 'p_n_deal_type:23566065011',
  all_discounts: 'p_n_pct-off-with-tax:2665399011',
} as const;
const PRIME = 'p_85:2470955011';

const ASIN = /^[A-Z0-9]{10}$/;

/** Where a country's pages are read from. */
export type SiteBase = (country: Country) => string;
export const siteBase =
  (template: string): SiteBase =>
  (country) =>
    template.replace(/\{domain\}/g, MARKETPLACES[country].domain).replace(/\{country\}/g, country);

const context = (base: SiteBase, country: Country): PageContext => ({ origin: new URL(base(country)).origin, currency: MARKETPLACES[country].currency });

const country = enumParam(COUNTRIES, { default: 'us', description: 'The marketplace site: its domain, currency and conditions.' });
const zipCode = stringParam(12, { description: 'A postal code of the country: prices, stock and delivery follow it (two extra page reads).' });
const nodeId = patternParam(/^\d{1,20}$/, 'a numeric browse node id', '2407749011');
const categorySlug = /^[a-z0-9-]{1,60}$/;
const CATEGORY = 'a department slug such as hi or electronics';

function checkZip(q: { country: Country; zip_code: string | null }): void {
  if (q.zip_code !== null && !MARKETPLACES[q.country].zip.test(q.zip_code))
    throw bad(`zip_code: not a postal code of ${q.country}, got ${JSON.stringify(q.zip_code)}`);
}

/**
 * A delivery-location session: the site's home page for its cookies, then its address-change
 * form with the postal code; prices, stock and delivery on the next page follow it.
 */
async function setLocation(call: LiveCall, base: string, zip: string | null): Promise<void> {
  if (zip === null) return;
  await call.get(`${base}/`);
  const body = JSON.stringify({
    locationType: 'LOCATION_INPUT',
    zipCode: zip,
    storeContext: 'generic',
    deviceType: 'web',
    pageType: 'Search',
    actionSource: 'glow',
  });
  const res = await call.get(`${base}/portal-migration/hz/glow/address-change?actionSource=glow`, { method: 'POST', body, contentType: 'application/json' });
  if (!/"isValidAddress"\s*:\s*1|"successful"\s*:\s*1/.test(res.html)) throw new ScrapeError(`the site did not accept the delivery postal code ${zip}`);
}

export interface SearchQuery extends Record<string, unknown> {
  q: string | null;
  category_id: string | null;
  sort_by: keyof typeof SORTS;
  min_price: number | null;
  max_price: number | null;
  brand: string | null;
  prime: boolean | null;
  min_rating: number | null;
  condition: keyof typeof CONDITIONS | null;
  deals: keyof typeof DEALS | null;
  page: number;
  country: Country;
  zip_code: string | null;
}

/** The search page's URL for a query (exported for tests). */
export function searchUrl(base: string, q: SearchQuery): string {
  const u = new URL(`${base}/s`);
  if (q.q !== null) u.searchParams.set('k', q.q);
  const rh: string[] = [];
  if (q.category_id !== null) rh.push(`n:${q.category_id}`);
  if (q.brand !== null) rh.push(`p_89:${q.brand}`);
  if (q.prime) rh.push(PRIME);
  if (q.min_rating !== null) rh.push(`p_72:${STARS[q.min_rating]}`);
  if (q.condition !== null) rh.push(`p_n_condition-type:${CONDITIONS[q.condition]}`);
  if (q.deals !== null) rh.push(DEALS[q.deals]);
  if (rh.length) u.searchParams.set('rh', rh.join(','));
  if (q.sort_by !== 'relevance') u.searchParams.set('s', SORTS[q.sort_by]);
  if (q.min_price !== null) u.searchParams.set('low-price', String(q.min_price));
  if (q.max_price !== null) u.searchParams.set('high-price', String(q.max_price));
  if (q.page > 1) u.searchParams.set('page', String(q.page));
  return u.href;
}

export function marketplaceEndpoints(base: SiteBase) {
  const search: LiveEndpoint<SearchQuery, Card> = {
    engine: ENGINE,
    family: FAMILY,
    params: {
      q: stringParam(500, { description: 'Search terms (required unless category_id is set).' }),
      category_id: nodeId,
      sort_by: enumParam(Object.keys(SORTS) as (keyof typeof SORTS)[], { default: 'relevance' }),
      min_price: numberParam(0, 1e9),
      max_price: numberParam(0, 1e9),
      brand: stringParam(100),
      prime: boolParam({ description: 'Fast delivery only (us only).' }),
      min_rating: intParam(1, 4, { description: 'Stars and up.' }),
      condition: enumParam(Object.keys(CONDITIONS) as (keyof typeof CONDITIONS)[], { description: 'As the country offers.' }),
      deals: enumParam(Object.keys(DEALS) as (keyof typeof DEALS)[]),
      page: pageParam({ max: 10 }),
      country,
      zip_code: zipCode,
    },
    check(q) {
      if (q.q === null && q.category_id === null) throw bad('q is required unless category_id is set');
      if (q.prime !== null && q.country !== 'us') throw bad(`prime: the fast-delivery filter exists on the us marketplace only, not ${q.country}`);
      if (q.condition !== null && !MARKETPLACES[q.country].conditions.includes(q.condition))
        throw bad(`condition: the ${q.country} marketplace offers ${MARKETPLACES[q.country].conditions.join(', ')}, not ${q.condition}`);
      if (q.min_price !== null && q.max_price !== null && q.min_price > q.max_price) throw bad('min_price is above max_price');
      checkZip(q);
    },
    async run(q, call) {
      const b = base(q.country);
      await setLocation(call, b, q.zip_code);
      const page = await call.get(searchUrl(b, q));
      return call.parse('parseSearchResults', page.html, context(base, q.country));
    },
  };

  interface ProductQuery extends Record<string, unknown> {
    asin: string;
    country: Country;
    zip_code: string | null;
  }
  const productParams = { asin: patternParam(ASIN, 'a 10-character ASIN such as B0DR8G428S', 'B0DR8G428S', { required: true }), country, zip_code: zipCode };
  const readProduct = async (q: ProductQuery, call: LiveCall) => {
    const b = base(q.country);
    await setLocation(call, b, q.zip_code);
    const page = await call.get(`${b}/dp/${q.asin}`, { accept404: true });
    if (page.status === 404) throw new AppError('not_found', `no product ${q.asin} on the ${q.country} marketplace`);
    return page.html;
  };
  const product: LiveEndpoint<ProductQuery, ProductPage> = {
    engine: ENGINE,
    family: FAMILY,
    params: productParams,
    check: checkZip,
    run: async (q, call) => [await call.parse('parseProductPage', await readProduct(q, call), context(base, q.country))],
  };
  const reviews: LiveEndpoint<ProductQuery, Review> = {
    ...product,
    run: async (q, call) => call.parse('parseProductReviews', await readProduct(q, call)),
  } as LiveEndpoint<ProductQuery, Review>;

  const offers: LiveEndpoint<ProductQuery, Offer> = {
    ...product,
    run: async (q, call) => {
      const b = base(q.country);
      await setLocation(call, b, q.zip_code);
      return call.parse('parseOffers', (await call.get(`${b}/gp/product/ajax/aodAjaxMain/?asin=${q.asin}&pc=dp`)).html, context(base, q.country));
    },
  } as LiveEndpoint<ProductQuery, Offer>;

  interface SellerQuery extends Record<string, unknown> {
    seller_id: string;
    country: Country;
  }
  const sellerId = patternParam(/^[A-Z0-9]{8,20}$/, 'a seller id such as A2DP2EEPU3VU45, from the offers endpoint', 'A2DP2EEPU3VU45', { required: true });
  const seller: LiveEndpoint<SellerQuery, SellerProfile> = {
    engine: ENGINE,
    family: FAMILY,
    params: { seller_id: sellerId, country },
    run: async (q, call) => {
      const page = await call.get(`${base(q.country)}/sp?seller=${q.seller_id}`, { accept404: true });
      if (page.status === 404) throw new AppError('not_found', `no seller ${q.seller_id} on the ${q.country} marketplace`);
      return [await call.parse('parseSellerProfile', page.html, q.seller_id, context(base, q.country))];
    },
  };

  interface LookupQuery extends Record<string, unknown> {
    gtin: string;
  }
  const lookup: LiveEndpoint<LookupQuery, Card> = {
    engine: ENGINE,
    family: FAMILY,
    params: { gtin: patternParam(/^(\d{8}|\d{12,14})$/, 'a GTIN: 8, 12, 13 or 14 digits', '0885909950805', { required: true }) },
    check(q) {
      if (!gtinValid(q.gtin)) throw bad(`gtin: the check digit of ${q.gtin} is wrong`);
    },
    run: async (q, call) =>
      call.parse('parseSearchResults', (await call.get(`${base('us')}/s?k=${q.gtin}`)).html, context(base, 'us'), { dropSponsored: true }),
  };

  interface SellerProductsQuery extends Record<string, unknown> {
    seller_id: string;
    page: number;
    country: Country;
  }
  const sellerProducts: LiveEndpoint<SellerProductsQuery, Card> = {
    engine: ENGINE,
    family: FAMILY,
    params: { seller_id: sellerId, page: pageParam({ max: 10 }), country },
    run: async (q, call) => {
      const url = `${base(q.country)}/s?me=${q.seller_id}${q.page > 1 ? `&page=${q.page}` : ''}`;
      return call.parse('parseSearchResults', (await call.get(url)).html, context(base, q.country), { dropSponsored: true });
    },
  };

  interface BestsellersQuery extends Record<string, unknown> {
    category: string;
    node_id: string | null;
    page: number;
    country: Country;
  }
  const bestsellers: LiveEndpoint<BestsellersQuery, BestsellerItem> = {
    engine: ENGINE,
    family: FAMILY,
    params: { category: patternParam(categorySlug, CATEGORY, 'electronics', { required: true }), node_id: nodeId, page: pageParam({ max: 2 }), country },
    run: async (q, call) => {
      const path = `/gp/bestsellers/${q.category}${q.node_id ? `/${q.node_id}` : ''}${q.page > 1 ? `?pg=${q.page}` : ''}`;
      const { items, ...extra } = await call.parse('parseBestsellers', (await call.get(`${base(q.country)}${path}`)).html, context(base, q.country));
      return { results: items, extra };
    },
  };

  interface CategoriesQuery extends Record<string, unknown> {
    category: string | null;
    node_id: string | null;
    country: Country;
  }
  /** No parameters: the top-level departments (the site's department menu); with category and node_id: that node's children. */
  const categories: LiveEndpoint<CategoriesQuery, Department | BestsellersPage['subcategories'][number]> = {
    engine: ENGINE,
    family: FAMILY,
    params: { category: patternParam(categorySlug, CATEGORY, 'electronics'), node_id: nodeId, country },
    check(q) {
      if ((q.category === null) !== (q.node_id === null))
        throw bad("send both category and node_id (a node's children), or neither (the top-level departments)");
    },
    run: async (q, call) => {
      const b = base(q.country);
      if (q.category === null) return call.parse('parseDepartments', (await call.get(`${b}/`)).html);
      return (await call.parse('parseBestsellers', (await call.get(`${b}/gp/bestsellers/${q.category}/${q.node_id}`)).html, context(base, q.country)))
        .subcategories;
    },
  };

  return { search, product, reviews, offers, lookup, seller, sellerProducts, bestsellers, categories };
}

/** GS1 check digit. */
function gtinValid(gtin: string): boolean {
  const digits = [...gtin].map(Number);
  const check = digits.pop()!;
  const sum = digits.reverse().reduce((a, d, i) => a + d * (i % 2 === 0 ? 3 : 1), 0);
  return (10 - (sum % 10)) % 10 === check;
}
