import { beforeAll, describe, expect, it } from 'vitest';
import { readFixture, scrapeError } from '../../../test/helpers/pages.js';
import { parseOffers, type Offer } from './offers.js';

const US = { origin: 'https://www.amazon.com', currency: 'USD' };
const ROBOT = '<html><head><title>Robot Check</title></head><body><form action="/errors/validateCaptcha"></form></body></html>';

/**
 * Real page: amazon.com /gp/offer-listing/B07L6P7J2M (AsaVea teeth whitening pen), June 2020
 * (test/fixtures/pages/PROVENANCE.md, amazon-offers/). Every expected value below was read by
 * hand from the HTML; the line numbers are the file's.
 */
describe('parseOffers: the offer-listing page (real, amazon.com 2020)', () => {
  let offers: Offer[];
  beforeAll(() => {
    offers = parseOffers(readFixture('amazon-offers/amazon_us_offer_listing_B07L6P7J2M_2020-06.html'), US);
  });

  it('reads every row of the grid', () => {
    // Three `<div class="a-row a-spacing-mini olpOffer" role="row">` in #olpOfferList (lines 2253, 2577, 2891).
    expect(offers).toHaveLength(3);
    expect(offers.map((o) => o.position)).toEqual([1, 2, 3]);
  });

  it('reads the first offer', () => {
    expect(offers[0]).toEqual({
      position: 1,
      pinned: false, // the offer-listing page has no pinned (buy box) row
      condition: 'New', // span.olpCondition "New" (line 2389)
      price_text: '$19.99', // span.olpOfferPrice "$19.99" (line 2300)
      price: 19.99,
      currency: 'USD',
      // The row's only shipping statement: span.supersaver > i.a-icon-prime aria-label (line 2331);
      // p.olpShippingInfo holds only "+ $1.65 estimated tax" (line 2339), which is tax, not shipping.
      delivery: 'Eligible for free shipping with Amazon Prime.',
      // The delivery column holds only the "Fulfillment by Amazon" badge and "Shipping rates and return policy." (lines 2424, 2454): no "Ships from".
      ships_from: null,
      is_prime: true, // i.a-icon-prime in the price column (line 2331)
      fulfilled_by_amazon: true, // a.olpFbaPopoverTrigger "Fulfillment by Amazon" (line 2424); the seller link has isAmazonFulfilled=1 (line 2488)
      seller: {
        name: 'Oasis1270', // h3.olpSellerName a "Oasis1270" (line 2488)
        id: 'A1WNZAYT9WQDYM', // its href …&seller=A1WNZAYT9WQDYM
        rating: 5, // span.a-icon-alt "5 out of 5 stars" (line 2497)
        ratings_count: 1720, // "(1,720 total ratings)" after the rating link (line 2498)
        positive_percent: 97, // <b>97% positive</b> (line 2498)
      },
    });
  });

  it('reads the last offer', () => {
    expect(offers[2]).toEqual({
      position: 3,
      pinned: false,
      condition: 'New', // span.olpCondition "New" (line 3018)
      price_text: '$29.99', // span.olpOfferPrice "$29.99" (line 2938)
      price: 29.99,
      currency: 'USD',
      delivery: 'Eligible for free shipping with Amazon Prime.', // i.a-icon-prime aria-label (line 2966); "+ $2.47 estimated tax" left out (line 2974)
      ships_from: null,
      is_prime: true, // line 2966
      fulfilled_by_amazon: true, // a.olpFbaPopoverTrigger (line 3053)
      seller: {
        name: 'Novilex', // h3.olpSellerName a "Novilex" (line 3116)
        id: 'AYDAPDJLLWM0W', // href …&seller=AYDAPDJLLWM0W (line 3116)
        rating: 5, // "5 out of 5 stars" (line 3125)
        ratings_count: 515, // "(515 total ratings)" (line 3126)
        positive_percent: 97, // <b>97% positive</b> (line 3126)
      },
    });
  });

  it('reads a half-star rating, its percentage and a two-digit "total ratings" count (the second row)', () => {
    // Line 2811: <span class="a-icon-alt">4.5 out of 5 stars</span>; line 2812: <b>92% positive</b> … (26 total ratings).
    expect(offers[1].seller).toEqual({ name: 'RULTO', id: 'APF0ST32AI5H2', rating: 4.5, ratings_count: 26, positive_percent: 92 });
    // span.olpOfferPrice "$24.99" (line 2624).
    expect(offers[1]).toMatchObject({ price_text: '$24.99', price: 24.99 });
  });

  it('does not read the page-level product rating or the estimated tax as an offer field', () => {
    // The product's "4.6 out of 5 stars" and "7,821 customer ratings" (line 1813) sit above the grid.
    expect(offers.map((o) => o.seller?.rating)).not.toContain(4.6);
    expect(offers.map((o) => o.delivery).join(' ')).not.toMatch(/tax/);
  });

  it('fails on a row that lost its price rather than answer an empty one', () => {
    const html = readFixture('amazon-offers/amazon_us_offer_listing_B07L6P7J2M_2020-06.html').replace('olpOfferPrice', 'olpRenamedPrice');
    expect(scrapeError(() => parseOffers(html, US)).detail).toMatch(/offer 1 of the offer-listing page has no price \(\.olpOfferPrice\)/);
  });
});

/**
 * Synthetic (test/fixtures/pages/synthetic/): the all-offers (AOD) panel, the layout the
 * endpoint reads today. No real capture of it exists; the offer-listing page above is the only
 * real offers page, so this fixture stays for the panel's layout alone.
 */
describe('parseOffers: the all-offers panel (synthetic)', () => {
  it('reads the pinned offer and the list: condition, price, delivery, ships from, flags, seller and rating', () => {
    const offers = parseOffers(readFixture('synthetic/amazon-com-offers-B0DR8G428S.html'), US);
    expect(offers).toHaveLength(3);
    expect(offers[0]).toEqual({
      position: 1,
      pinned: true,
      condition: 'New',
      price_text: '$35.99',
      price: 35.99,
      currency: 'USD',
      delivery: 'FREE delivery Tuesday, August 18',
      ships_from: 'Amazon.com',
      is_prime: false, // no a-icon-prime in the fixture
      fulfilled_by_amazon: true, // the sold-by link has isAmazonFulfilled=1
      seller: { name: 'Chen Ying Ke Ji', id: 'A2JZ0S3QVWQECL', rating: 4.5, ratings_count: 1237, positive_percent: 93 },
    });
    expect(offers[1]).toMatchObject({
      pinned: false,
      condition: 'Used - Like New',
      price: 29.41,
      delivery: '$6.99 delivery August 21 - 25',
      ships_from: 'Gadget Resale',
      fulfilled_by_amazon: false,
    });
    expect(offers[1].seller).toEqual({ name: 'Gadget Resale', id: 'A1Q2W3E4R5T6Y7', rating: 4, ratings_count: 88, positive_percent: 85 });
    expect(offers[2].seller).toEqual({ name: 'Shenzhen Direct', id: 'AZX9Y8W7V6U5T', rating: null, ratings_count: null, positive_percent: null });
  });
});

describe('parseOffers: pages that are not offers', () => {
  it('refuses a robot check', () => {
    expect(scrapeError(() => parseOffers(ROBOT, US)).detail).toMatch(/robot check/);
  });

  it('refuses a real page of another site, naming the markers it looked for', () => {
    const e = scrapeError(() => parseOffers(readFixture('publisher/reuters-article-israeli-tank-2024-03-07.html'), US));
    expect(e.detail).toMatch(/#olpOfferList/);
    expect(e.detail).toMatch(/#aod-container/);
  });

  it('refuses a real product page, whose empty #all-offers-display shell is not the panel', () => {
    // amazon-product/…-2026.html has `<div class="a-section" id="all-offers-display">` holding only a spinner and a form.
    expect(scrapeError(() => parseOffers(readFixture('amazon-product/amazon-com-product-portable-charger-2026.html'), US)).detail).toMatch(
      /no offers on the page/,
    );
  });
});
