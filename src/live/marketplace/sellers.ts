/**
 * The all-offers panel of a product (spec 4.3 `/v1/product/offers`: condition, price,
 * delivery, ships-from, seller with rating) and a seller's public profile (`/v1/seller`).
 * No real capture of either page exists: the parsers follow the markup conventions of the
 * captured pages (`a-price`/`a-offscreen` prices, `a-icon-alt` star text, `seller=` ids in
 * seller links) and are tested on fixtures marked synthetic.
 */
import { assertNotRobotCheck, loadPage, ScrapeError, textOf } from '../page.js';
import { parsePrice } from './countries.js';
import type { PageContext } from './types.js';

export interface Offer {
  position: number;
  /** The pinned (buy box) offer. */
  pinned: boolean;
  condition: string | null;
  price_text: string | null;
  price: number | null;
  currency: string;
  delivery: string | null;
  ships_from: string | null;
  seller: { name: string; id: string | null; rating: number | null; ratings_count: number | null; positive_percent: number | null } | null;
}

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

const stars = (el: Element | null): number | null => {
  const m = /(\d+(?:[.,]\d)?) out of 5/.exec(textOf(el?.querySelector('.a-icon-alt')) ?? '');
  return m ? Number(m[1].replace(',', '.')) : null;
};
const ratingsCount = (text: string | null): number | null => {
  const m = /\(?([\d.,]+) ratings?\)?/.exec(text ?? '');
  return m ? Number(m[1].replace(/[.,]/g, '')) : null;
};
const positive = (text: string | null): number | null => {
  const m = /(\d{1,3})% positive/.exec(text ?? '');
  return m ? Number(m[1]) : null;
};
const sellerId = (href: string | null | undefined): string | null => /[?&]seller=([A-Z0-9]+)/.exec(href ?? '')?.[1] ?? null;

export function parseOffers(html: string, ctx: PageContext): Offer[] {
  const doc = loadPage(html);
  assertNotRobotCheck(doc);
  // The pinned offer, then the list's (ids repeat in this markup: every offer is #aod-offer).
  const blocks = [...doc.querySelectorAll('#aod-pinned-offer, #aod-offer-list .aod-information-block')];
  if (blocks.length === 0 && !doc.querySelector('#aod-container, #all-offers-display')) {
    throw new ScrapeError('no offers panel (#aod-container) on the page: the layout changed or the product has no offers page');
  }
  return blocks.map((b, i): Offer => {
    const priceText = textOf(b.querySelector('#aod-offer-price .a-price .a-offscreen'));
    const soldBy = b.querySelector('#aod-offer-soldBy a');
    const rating = b.querySelector('#aod-offer-seller-rating');
    const ratingText = textOf(rating);
    return {
      position: i + 1,
      pinned: b.id === 'aod-pinned-offer',
      condition: textOf(b.querySelector('#aod-offer-heading h5')),
      price_text: priceText,
      price: parsePrice(priceText),
      currency: ctx.currency,
      delivery: textOf(b.querySelector('#mir-layout-DELIVERY_BLOCK')),
      ships_from: textOf(b.querySelector('#aod-offer-shipsFrom .a-col-right .a-size-small')),
      seller: soldBy
        ? { name: textOf(soldBy) ?? '', id: sellerId(soldBy.getAttribute('href')), rating: stars(rating), ratings_count: ratingsCount(ratingText), positive_percent: positive(ratingText) }
        : null,
    };
  });
}

export function parseSellerProfile(html: string, id: string, ctx: PageContext): SellerProfile {
  const doc = loadPage(html);
  assertNotRobotCheck(doc);
  const name = textOf(doc.querySelector('#seller-name'));
  if (!name) throw new ScrapeError('no seller name (#seller-name) on the page: the layout changed or the seller does not exist');
  const summary = textOf(doc.querySelector('#seller-info-feedback-summary'));
  // "Business Name: X", then "Business Address:" and its lines, in the detailed information.
  const rows = [...doc.querySelectorAll('#page-section-detail-seller-info .a-row')].map((r) => textOf(r) ?? '');
  const field = (label: string) => rows.find((r) => r.startsWith(label))?.slice(label.length).trim() || null;
  const at = rows.findIndex((r) => r.startsWith('Business Address:'));
  const address = at < 0 ? [] : rows.slice(at + 1).filter((r) => !/^[A-Z][\w ]+:/.test(r));
  const storefront = doc.querySelector('#seller-info-storefront-link a')?.getAttribute('href');
  return {
    id,
    name,
    rating: stars(doc.querySelector('#effective-timeperiod-rating-year-description')),
    ratings_count: ratingsCount(summary) ?? ratingsCount(textOf(doc.querySelector('#effective-timeperiod-rating-year-description'))),
    positive_percent: positive(summary),
    about: textOf(doc.querySelector('#spp-expander-about-seller .a-row')),
    business_name: field('Business Name:'),
    business_address: address.length ? address.join(', ') : null,
    storefront_url: storefront ? new URL(storefront, `${ctx.origin}/`).href : null,
  };
}
