/**
 * The offers of a product (`/v1/product/offers`): each offer's condition, price,
 * delivery, where it ships from, its Prime and FBA flags, and the seller with its rating.
 *
 * Two layouts, told apart by their markers:
 * - the offer-listing page (`/gp/offer-listing/<asin>`): `div.olpOffer[role=row]` rows in
 *   `#olpOfferList`, with a price column (price, shipping, estimated tax), a condition column, a
 *   delivery column (the "Fulfillment by Amazon" badge, shipping notes) and a seller column.
 *   Checked against a real 2020 capture (test/fixtures/pages/amazon-offers/).
 * - the all-offers panel (AOD) that replaced it, which the endpoint reads
 *   (`/gp/product/ajax/aodAjaxMain`): `#aod-pinned-offer`, then the `#aod-offer-list` blocks.
 *   No real capture of it exists: it is read as the synthetic fixture imitates it.
 *
 * Product and search pages carry an empty `#all-offers-display` shell that the panel is loaded
 * into (on the real 2022 and 2026 captures), so that id alone does not make a page the panel.
 * A page with neither layout, or a row without its price, condition or seller, throws
 * ScrapeError: never offers with empty fields.
 */
import { assertNotRobotCheck, loadPage, renderedText, ScrapeError, textOf } from '../page.js';
import { parsePrice } from './countries.js';
import { positivePercent, ratingsCount, sellerIdOf, stars } from './sellers.js';
import type { PageContext } from './types.js';

export interface OfferSeller {
  name: string;
  id: string | null;
  rating: number | null;
  ratings_count: number | null;
  positive_percent: number | null;
}

export interface Offer {
  position: number;
  /** The pinned (buy box) offer of the panel; the offer-listing page pins none. */
  pinned: boolean;
  condition: string | null;
  price_text: string | null;
  price: number | null;
  currency: string;
  /**
   * Shipping cost and arrival as the offer states them ("FREE delivery Tuesday, August 18",
   * "+ $5.99 shipping"). A Prime row of the offer-listing page states its shipping only in its
   * badge: "Eligible for free shipping with Amazon Prime.".
   */
  delivery: string | null;
  /** Where it ships from, as the page states it; null where it does not (the offer-listing page's FBA rows: see fulfilled_by_amazon). */
  ships_from: string | null;
  /** The offer carries the Prime badge. */
  is_prime: boolean;
  /** Fulfilled by Amazon: the "Fulfillment by Amazon" badge, or `isAmazonFulfilled=1` on the seller's link. */
  fulfilled_by_amazon: boolean;
  seller: OfferSeller | null;
}

const PANEL = '#aod-container, #aod-offer-list, #aod-pinned-offer';

/** The offers on an offer-listing page or in the all-offers panel, in the page's order. */
export function parseOffers(html: string, ctx: PageContext): Offer[] {
  const doc = loadPage(html);
  assertNotRobotCheck(doc);
  if (doc.querySelector('#olpOfferList')) return readOfferListing(doc, ctx);
  if (doc.querySelector(PANEL)) return readPanel(doc, ctx);
  throw new ScrapeError(
    'no offers on the page: neither the offer-listing rows (#olpOfferList) nor the all-offers panel (#aod-container) is there; the layout changed or this is not an offers page',
  );
}

/** The element a row must have; without it the layout changed, so the parse fails rather than answer an empty field. */
function required(row: Element, selector: string, what: string, where: string, withText = true): Element {
  const el = row.querySelector(selector);
  if (!el || (withText && !textOf(el))) throw new ScrapeError(`${where} has no ${what} (${selector}): the layout changed`);
  return el;
}

/** Text of `el` without its descendants matching `drop`; null when empty. */
function textWithout(el: Element | null, drop: string): string | null {
  if (!el) return null;
  const copy = el.cloneNode(true) as Element;
  for (const d of copy.querySelectorAll(drop)) d.remove();
  return textOf(copy);
}

const amazonFulfilled = (href: string | null | undefined): boolean => /[?&]isAmazonFulfilled=1(?:&|$)/.test(href ?? '');

const seller = (name: string | null | undefined, href: string | null | undefined, ratingEl: Element | null, ratingText: string | null): OfferSeller | null =>
  name ? { name, id: sellerIdOf(href), rating: stars(ratingEl), ratings_count: ratingsCount(ratingText), positive_percent: positivePercent(ratingText) } : null;

/**
 * The offer-listing page. A row (as captured in 2020, an FBA offer):
 *
 *   .olpPriceColumn      span.olpOfferPrice "$19.99"; span.supersaver i.a-icon-prime[aria-label];
 *                        p.olpShippingInfo "+ $1.65 estimated tax" (span.olpEstimatedTaxText)
 *   .olpConditionColumn  span.olpCondition "New"
 *   .olpDeliveryColumn   .olpBadge "Fulfillment by Amazon"; ul.olpFastTrack li "Shipping rates and return policy."
 *   .olpSellerColumn     h3.olpSellerName a[href*="seller="] "Oasis1270";
 *                        i.a-icon-star "5 out of 5 stars", "97% positive over the past 12 months. (1,720 total ratings)"
 *
 * A merchant-fulfilled row's shipping price ("+ $5.99 shipping", in p.olpShippingInfo) and its
 * "Ships from …" line (in the delivery column) are not in the capture: they are read as text
 * from where the capture puts shipping and delivery notes.
 */
function readOfferListing(doc: Document, ctx: PageContext): Offer[] {
  return [...doc.querySelectorAll('#olpOfferList .olpOffer')].map((row, i): Offer => {
    const where = `offer ${i + 1} of the offer-listing page`;
    const priceText = textOf(required(row, '.olpOfferPrice', 'price', where));
    const condition = textOf(required(row, '.olpCondition', 'condition', where));
    const nameCell = required(row, '.olpSellerName', 'seller', where, false);
    const link = nameCell.querySelector('a[href*="seller="]');
    // Amazon's own offers show its logo for a name (not in the capture).
    const name = textOf(link) ?? (nameCell.querySelector('img[alt]')?.getAttribute('alt')?.trim() || textOf(nameCell));
    const sellerCell = row.querySelector('.olpSellerColumn');
    // Tax is not shipping: "+ $1.65 estimated tax" shares the shipping line.
    const shipping = textWithout(row.querySelector('.olpShippingInfo'), '.olpEstimatedTaxText');
    const prime = row.querySelector('.olpPriceColumn .a-icon-prime');
    // The delivery column less the FBA badge and the "Shipping rates and return policy" links.
    const notes = row.querySelector('.olpDeliveryColumn')?.cloneNode(true) as Element | undefined;
    for (const d of notes?.querySelectorAll('.olpBadgeContainer, li') ?? []) {
      if (d.matches('.olpBadgeContainer') || d.querySelector('a[href*="sshmPath="]')) d.remove();
    }
    const lines = notes
      ? renderedText(notes)
          .split('\n')
          .map((l) => l.replace(/\s+/g, ' ').trim())
          .filter(Boolean)
      : [];
    const shipsFrom = lines.find((l) => /^Ships from\s/i.test(l));
    const delivery = [shipping ?? prime?.getAttribute('aria-label')?.trim(), ...lines.filter((l) => l !== shipsFrom)].filter(Boolean).join(' ');
    return {
      position: i + 1,
      pinned: false,
      condition,
      price_text: priceText,
      price: parsePrice(priceText),
      currency: ctx.currency,
      delivery: delivery || null,
      ships_from: shipsFrom?.replace(/^Ships from\s+/i, '').replace(/\.$/, '') ?? null,
      is_prime: prime !== null,
      fulfilled_by_amazon: row.querySelector('.olpFbaPopoverTrigger') !== null || amazonFulfilled(link?.getAttribute('href')),
      seller: seller(name, link?.getAttribute('href'), sellerCell, textWithout(sellerCell, '.olpSellerName')),
    };
  });
}

/** The all-offers panel: the pinned offer, then the list's (ids repeat in this markup: every listed offer is #aod-offer). */
function readPanel(doc: Document, ctx: PageContext): Offer[] {
  return [...doc.querySelectorAll('#aod-pinned-offer, #aod-offer-list .aod-information-block')].map((b, i): Offer => {
    const where = `offer ${i + 1} of the all-offers panel`;
    const priceText = textOf(required(b, '#aod-offer-price .a-price .a-offscreen', 'price', where));
    const soldBy = required(b, '#aod-offer-soldBy', 'seller', where, false);
    const link = soldBy.querySelector('a');
    const rating = b.querySelector('#aod-offer-seller-rating');
    return {
      position: i + 1,
      pinned: b.id === 'aod-pinned-offer',
      condition: textOf(required(b, '#aod-offer-heading h5', 'condition', where)),
      price_text: priceText,
      price: parsePrice(priceText),
      currency: ctx.currency,
      delivery: textOf(b.querySelector('#mir-layout-DELIVERY_BLOCK')),
      ships_from: textOf(b.querySelector('#aod-offer-shipsFrom .a-col-right .a-size-small')),
      is_prime: b.querySelector('.a-icon-prime') !== null,
      fulfilled_by_amazon: amazonFulfilled(link?.getAttribute('href')),
      // A seller without a link (Amazon itself) is plain text in the right column.
      seller: seller(textOf(link) ?? textOf(soldBy.querySelector('.a-col-right > span')), link?.getAttribute('href'), rating, textOf(rating)),
    };
  });
}
