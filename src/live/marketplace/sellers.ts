/**
 * A seller's public profile (`/v1/seller`), and the readers of a seller's rating that
 * the offers parser (offers.ts) shares.
 *
 * No real capture of the profile page (`/sp?seller=`) exists: the only real seller page is a
 * storefront search (`/s?me=`), which the seller-products endpoint parses as search results.
 * The profile parser follows the captured pages' markup conventions (`a-icon-alt` star text,
 * `seller=` ids in links) and is tested on a fixture marked synthetic.
 */
import { assertNotRobotCheck, loadPage, ScrapeError, textOf } from '../page.js';
import type { PageContext } from './types.js';

export interface SellerProfile {
  id: string;
  name: string;
  rating: number | null;
  ratings_count: number | null;
  positive_percent: number | null;
  about: string | null;
  business_name: string | null;
  business_address: string | null;
  storefront_url: string | null;
}

/** The stars of the first `.a-icon-alt` under `el` ("4.5 out of 5 stars" → 4.5). */
export const stars = (el: Element | null | undefined): number | null => {
  const m = /(\d+(?:[.,]\d)?) out of 5/.exec(textOf(el?.querySelector('.a-icon-alt')) ?? '');
  return m ? Number(m[1].replace(',', '.')) : null;
};

/** The ratings count: "(1,237 ratings)" in the panel and profile, "(1,720 total ratings)" on the offer-listing page. */
export const ratingsCount = (text: string | null): number | null => {
  const m = /\(?([\d.,]+)(?: total)? ratings?\)?/.exec(text ?? '');
  return m ? Number(m[1].replace(/[.,]/g, '')) : null;
};

/** "93% positive" → 93. */
export const positivePercent = (text: string | null): number | null => {
  const m = /(\d{1,3})% positive/.exec(text ?? '');
  return m ? Number(m[1]) : null;
};

/** The `seller=` id of a link (`/gp/aag/main?…&seller=A2JZ0S3QVWQECL`). */
export const sellerIdOf = (href: string | null | undefined): string | null => /[?&]seller=([A-Z0-9]+)/.exec(href ?? '')?.[1] ?? null;

export function parseSellerProfile(html: string, id: string, ctx: PageContext): SellerProfile {
  const doc = loadPage(html);
  assertNotRobotCheck(doc);
  const name = textOf(doc.querySelector('#seller-name'));
  if (!name) throw new ScrapeError('no seller name (#seller-name) on the page: the layout changed or the seller does not exist');
  const summary = textOf(doc.querySelector('#seller-info-feedback-summary'));
  // "Business Name: X", then "Business Address:" and its lines, in the detailed information.
  const rows = [...doc.querySelectorAll('#page-section-detail-seller-info .a-row')].map((r) => textOf(r) ?? '');
  const field = (label: string) =>
    rows
      .find((r) => r.startsWith(label))
      ?.slice(label.length)
      .trim() || null;
  const at = rows.findIndex((r) => r.startsWith('Business Address:'));
  const address = at < 0 ? [] : rows.slice(at + 1).filter((r) => !/^[A-Z][\w ]+:/.test(r));
  const storefront = doc.querySelector('#seller-info-storefront-link a')?.getAttribute('href');
  return {
    id,
    name,
    rating: stars(doc.querySelector('#effective-timeperiod-rating-year-description')),
    ratings_count: ratingsCount(summary) ?? ratingsCount(textOf(doc.querySelector('#effective-timeperiod-rating-year-description'))),
    positive_percent: positivePercent(summary),
    about: textOf(doc.querySelector('#spp-expander-about-seller .a-row')),
    business_name: field('Business Name:'),
    business_address: address.length ? address.join(', ') : null,
    storefront_url: storefront ? new URL(storefront, `${ctx.origin}/`).href : null,
  };
}
