import { beforeAll, describe, expect, it } from 'vitest';
import { readFixture, scrapeError } from '../../../test/helpers/pages.js';
import { parseSearchResults } from './search.js';
import type { Card } from './types.js';

/** Real pages: test/fixtures/pages/amazon-search and amazon-seller (see test/fixtures/pages/PROVENANCE.md). */
const COM_2026 = 'amazon-search/amazon-com-search-portable-charger-2026.html';
const DE_2022 = 'amazon-search/amazon-de-search-katzenfutter-2022.html';
const STORE_2020 = 'amazon-seller/amazon-com-seller-storefront-search-2020.html';
const US = { origin: 'https://www.amazon.com', currency: 'USD' };
const DE = { origin: 'https://www.amazon.de', currency: 'EUR' };

const byAsin = (cards: Card[], asin: string, nth = 0) => {
  const c = cards.filter((x) => x.asin === asin)[nth];
  if (!c) throw new Error(`no card ${asin} #${nth}`);
  return c;
};

/** Shape checks every card of every page must pass. */
function expectWellFormed(cards: Card[], origin: string, currency: string) {
  expect(cards.map((c) => c.position)).toEqual(cards.map((_, i) => i + 1));
  for (const c of cards) {
    expect(c.asin).toMatch(/^[A-Z0-9]{10}$/);
    expect(c.title.length).toBeGreaterThan(10);
    expect(c.title).not.toMatch(/^Sponsored/i);
    expect(c.url).toBe(`${origin}/dp/${c.asin}`);
    expect(c.currency).toBe(currency);
    expect(c.image_url).toMatch(/^https:\/\/m\.media-amazon\.com\/images\/I\//);
    if (c.price_text !== null) expect(c.price).toBeGreaterThan(0);
    if (c.original_price !== null) expect(c.original_price).toBeGreaterThan(c.price ?? 0);
    if (c.rating !== null) {
      expect(c.rating).toBeGreaterThanOrEqual(1);
      expect(c.rating).toBeLessThanOrEqual(5);
    }
  }
}

describe('parseSearchResults: amazon.com search, 2026 layout ("portable charger")', () => {
  let html: string;
  let cards: Card[];
  beforeAll(() => {
    html = readFixture(COM_2026);
    cards = parseSearchResults(html, US);
  });

  it('reads 22 cards, 6 of them sponsored, numbered 1..22 in page order', () => {
    expect(cards).toHaveLength(22);
    expect(cards.filter((c) => c.sponsored).map((c) => c.asin)).toEqual(['B0FQVG4RWW', 'B0DR8G428S', 'B0FQJH2XSY', 'B0CH7ZNF2W', 'B0D6RGPJZL', 'B0FCKLSC8Y']);
    expect(cards.slice(0, 3).map((c) => c.asin)).toEqual(['B0FQVG4RWW', 'B0DR8G428S', 'B0CB1FW5FC']);
    expectWellFormed(cards, US.origin, 'USD');
  });

  it('a sponsored card (B0FQVG4RWW): wrapper link decoded, list price, rating, count, sales volume', () => {
    const c = byAsin(cards, 'B0FQVG4RWW');
    expect(c).toMatchObject({
      position: 1,
      title:
        'Portable Charger with Wall Plug, Slim USB C Power Bank with Built-in Cables, 10000mah LED Display External Battery Pack Compatible with iPhone/Android & More (Black)',
      url: 'https://www.amazon.com/dp/B0FQVG4RWW',
      price_text: '$25.18',
      price: 25.18,
      original_price_text: '$34.99',
      original_price: 34.99,
      rating: 4.5,
      ratings_count: 381,
      sales_volume: '1K+ bought in past month',
      image_url: 'https://m.media-amazon.com/images/I/71IsOVic7kL._AC_UY218_.jpg',
      sponsored: true,
      badge: null,
      coupon: null,
      other_offers: null,
    });
    expect(c.delivery).toMatch(/^Join Prime to get FREE delivery Tue, Aug 18/);
    expect(c.is_prime).toBe(true);
  });

  it('an organic card with the "Overall Pick" badge and other offers (B0CB1FW5FC)', () => {
    const c = byAsin(cards, 'B0CB1FW5FC');
    expect(c).toMatchObject({
      position: 3,
      url: 'https://www.amazon.com/dp/B0CB1FW5FC',
      price_text: '$21.59',
      price: 21.59,
      original_price_text: '$23.99',
      original_price: 23.99,
      rating: 4.4,
      ratings_count: 84753,
      badge: 'Overall Pick',
      sales_volume: '10K+ bought in past month',
      sponsored: false,
      other_offers: { min_price_text: '$19.22', min_price: 19.22, count: 15 },
    });
    expect(c.title.startsWith('INIU 45W Fast Charging Portable Charger, Smaller 10000mAh Travel Power Bank')).toBe(true);
    expect(c.image_url).toBe('https://m.media-amazon.com/images/I/71gH0eRJcFL._AC_UY218_.jpg');
  });

  it('the "Best Seller" badge (B0FW34MF6F), the coupon (B0FTZ46NF8), a non-prime card (B0D7PPG25F)', () => {
    expect(byAsin(cards, 'B0FW34MF6F')).toMatchObject({
      badge: 'Best Seller',
      price: 22.49,
      original_price: 24.99,
      other_offers: { min_price: 19.12, count: 5 },
    });

    const coupon = byAsin(cards, 'B0FTZ46NF8');
    expect(coupon).toMatchObject({
      title: expect.stringMatching(/^CIO SMARTCOBY EX04 5000mAh Power Bank with Built-in USB-C Cable/),
      price_text: '$61.99',
      price: 61.99,
      original_price_text: null,
      original_price: null,
      rating: 4.6,
      ratings_count: 236,
      sales_volume: null,
      sponsored: false,
      coupon: { text: 'You pay $55.79 with coupon', price_text: '$55.79', price: 55.79 },
    });

    const jackery = byAsin(cards, 'B0D7PPG25F');
    expect(jackery).toMatchObject({
      title: expect.stringMatching(/^Jackery Explorer 1000 v2 Portable Power Station/),
      price_text: '$499.00',
      price: 499,
      original_price_text: '$559.00',
      original_price: 559,
      rating: 4.7,
      ratings_count: 3553,
      is_prime: false,
      delivery: 'FREE delivery Aug 19 - 21',
      image_url: expect.stringMatching(/^https:\/\/m\.media-amazon\.com\/images\/I\/61JVKysP1/),
    });
  });

  it('a "Typical:" struck price counts as the original price (B0DRVSB42V)', () => {
    expect(byAsin(cards, 'B0DRVSB42V')).toMatchObject({ price: 12.99, original_price_text: '$13.99', original_price: 13.99, rating: 3.8, ratings_count: 1143 });
  });

  it('dropSponsored leaves out exactly the 6 sponsored cards and renumbers 1..16', () => {
    const organic = parseSearchResults(html, US, { dropSponsored: true });
    expect(organic).toHaveLength(16);
    expect(organic.map((c) => c.asin)).toEqual(cards.filter((c) => !c.sponsored).map((c) => c.asin));
    expect(organic.map((c) => c.position)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    expect(organic.some((c) => c.sponsored)).toBe(false);
    expect(byAsin(organic, 'B0CB1FW5FC').position).toBe(1);
  });
});

describe('parseSearchResults: amazon.de search, 2022 layout, English session ("katzenfutter")', () => {
  let html: string;
  let cards: Card[];
  beforeAll(() => {
    html = readFixture(DE_2022);
    cards = parseSearchResults(html, DE);
  });

  it('reads 60 cards, the 12 AdHolder cards sponsored', () => {
    expect(cards).toHaveLength(60);
    expect(cards.filter((c) => c.sponsored)).toHaveLength(12);
    expectWellFormed(cards, DE.origin, 'EUR');
  });

  it('a sponsored card (B013JF5F0C): "€2.95" with the RRP €3.39, "4.7 out of 5 stars", 111 ratings', () => {
    expect(byAsin(cards, 'B013JF5F0C')).toMatchObject({
      position: 1,
      title: 'FELIX Countryside Sensations Dry Cat Food with Beef and Chicken, Pack of 1 (1 x 1 kg)',
      url: 'https://www.amazon.de/dp/B013JF5F0C',
      price_text: '€2.95',
      price: 2.95,
      currency: 'EUR',
      original_price_text: '€3.39',
      original_price: 3.39,
      rating: 4.7,
      ratings_count: 111,
      image_url: 'https://m.media-amazon.com/images/I/81j2n1ziQcL._AC_UL320_.jpg',
      sponsored: true,
      is_prime: false,
      delivery: 'FREE Delivery for Prime members',
      // "10% off your first subscription order" is a Subscribe & Save offer, not a coupon
      coupon: null,
    });
  });

  it("an organic Amazon's Choice card (B00C7SCAP6), thousands in the count", () => {
    expect(byAsin(cards, 'B00C7SCAP6')).toMatchObject({
      position: 5,
      title: 'Kitekat cat food market mix in jelly, 48 bags (2 x 24 x 100 g)',
      url: 'https://www.amazon.de/dp/B00C7SCAP6',
      price_text: '€12.90',
      price: 12.9,
      original_price_text: '€13.98',
      original_price: 13.98,
      rating: 4.6,
      ratings_count: 5177,
      badge: "Amazon's Choice",
      image_url: 'https://m.media-amazon.com/images/I/91jjonv2vmL._AC_UL320_.jpg',
      sponsored: false,
      is_prime: true,
    });
    expect(byAsin(cards, 'B00C7SCAP6').delivery).toMatch(/^FREE One-Day; Get it tomorrow, Dec 17/);
  });

  it('a card without a price (B019FILDS0), a "Was:" price (B08VMVV6GQ), a voucher (B07ZNNT54W), other offers (B074KCXXDG)', () => {
    expect(byAsin(cards, 'B019FILDS0')).toMatchObject({
      title: expect.stringMatching(/^Whiskas Cat Food Dry Adult 1\+/),
      price_text: null,
      price: null,
      original_price: null,
      rating: 4.7,
      ratings_count: 9582,
      sponsored: false,
    });
    expect(byAsin(cards, 'B08VMVV6GQ')).toMatchObject({
      title: 'MjAMjAM Natural Salmon Oil for Dogs and Cats 500 ml',
      price_text: '€13.51',
      original_price_text: '€15.14',
      original_price: 15.14,
      rating: 4.4,
      ratings_count: 186,
      sponsored: true,
    });
    // "Save 15% with voucher" on €7.49: the price the voucher gives, written like the card's price
    expect(byAsin(cards, 'B07ZNNT54W')).toMatchObject({
      price_text: '€7.49',
      original_price_text: '€7.85',
      rating: 4.3,
      ratings_count: 373,
      coupon: { text: 'Save 15% with voucher', price_text: '€6.37', price: 6.37 },
    });
    expect(byAsin(cards, 'B074KCXXDG').other_offers).toEqual({ min_price_text: '€40.96', min_price: 40.96, count: 6 });
  });

  it('the same product as an ad and as an organic result (B07D4RV7PQ) gives two cards', () => {
    const ad = byAsin(cards, 'B07D4RV7PQ', 0);
    const organic = byAsin(cards, 'B07D4RV7PQ', 1);
    expect([ad.position, ad.sponsored, ad.badge]).toEqual([18, true, 'Best Seller']);
    expect([organic.position, organic.sponsored]).toEqual([55, false]);
    expect(organic.price).toBe(17.88);
  });

  it('dropSponsored leaves out the 12 AdHolder cards and renumbers 1..48', () => {
    const organic = parseSearchResults(html, DE, { dropSponsored: true });
    expect(organic).toHaveLength(48);
    expect(organic.map((c) => c.asin)).toEqual(cards.filter((c) => !c.sponsored).map((c) => c.asin));
    expect(organic.map((c) => c.position)).toEqual(Array.from({ length: 48 }, (_, i) => i + 1));
    expect(organic.filter((c) => c.asin === 'B07D4RV7PQ').map((c) => c.sponsored)).toEqual([false]);
    expect(byAsin(organic, 'B00C7SCAP6').position).toBe(1);
  });
});

describe('parseSearchResults: amazon.com seller storefront search, 2020 layout', () => {
  let cards: Card[];
  beforeAll(() => {
    cards = parseSearchResults(readFixture(STORE_2020), US, { dropSponsored: true });
  });

  it('reads the 16 cards of "1-16 of 28 results" (none sponsored)', () => {
    expect(cards).toHaveLength(16);
    expectWellFormed(cards, US.origin, 'USD');
    expect(cards[0]!.asin).toBe('B07Y4Z6LBD');
    expect(cards[15]!.asin).toBe('B07Z5L6WZX');
  });

  it('reads price (not the unit price), stars, the bare count, prime and delivery (B07Y4Z6LBD)', () => {
    expect(byAsin(cards, 'B07Y4Z6LBD')).toMatchObject({
      position: 1,
      title: expect.stringMatching(/^Blackhead Remover Mask, Blackhead Peel off Mask, Peel off Face Masks/),
      url: 'https://www.amazon.com/dp/B07Y4Z6LBD',
      price_text: '$17.99',
      price: 17.99,
      original_price_text: null,
      rating: 4.4,
      ratings_count: 71,
      image_url: 'https://m.media-amazon.com/images/I/61Kx7PCZyeL._AC_UY218_.jpg',
      sponsored: false,
      is_prime: true,
      delivery: 'Get it as soon as Sat, Jun 13; FREE Shipping on orders over $25 shipped by Amazon',
      coupon: null,
    });
  });

  it('a "Save 7% with coupon" card (B07WPBVBDY) and a later delivery (B07VRZT8BM)', () => {
    expect(byAsin(cards, 'B07WPBVBDY')).toMatchObject({
      title: expect.stringMatching(/^V Line Serum, Chin Up Serum/),
      price: 19.99,
      rating: 4,
      ratings_count: 91,
      coupon: { text: 'Save 7% with coupon', price_text: '$18.59', price: 18.59 },
    });
    expect(byAsin(cards, 'B07VRZT8BM')).toMatchObject({
      price_text: '$25.99',
      rating: 3.1,
      ratings_count: 70,
      delivery: 'Get it as soon as Tue, Jun 16; FREE Shipping by Amazon',
      image_url: 'https://m.media-amazon.com/images/I/41C2Q2FIPAL._AC_UY218_.jpg',
    });
  });
});

describe('parseSearchResults: small pages', () => {
  it('a robot check is a ScrapeError', () => {
    const html =
      '<html><head><title>Robot Check</title></head><body><form method="get" action="/errors/validateCaptcha"><input id="captchacharacters" name="field-keywords"></form></body></html>';
    expect(scrapeError(() => parseSearchResults(html, US)).detail).toBe('the site answered with a robot check (captcha) instead of the page');
  });

  it('a page without cards and without a no-results message is a ScrapeError', () => {
    const html = '<html><head><title>Example Domain</title></head><body><h1>Example Domain</h1><p>Nothing to see.</p></body></html>';
    expect(scrapeError(() => parseSearchResults(html, US)).detail).toBe(
      'no search result cards on the page: the layout changed or the page is not a search page',
    );
    // a real page of another kind: the detail page of the search result B0DR8G428S
    const product = readFixture('amazon-product/amazon-com-product-portable-charger-2026.html');
    expect(scrapeError(() => parseSearchResults(product, US)).detail).toMatch(/^no search result cards on the page/);
  });

  it('an explicit "No results for" search page gives []', () => {
    const html = `<html><body><div id="search"><div class="s-main-slot s-result-list">
      <div data-component-type="s-messaging-widget-results-header"><div class="a-section"><span>No results for </span><span class="a-text-bold">"qwxzzq"</span></div></div>
      </div></div></body></html>`;
    expect(parseSearchResults(html, US)).toEqual([]);
  });

  it('a card with an empty data-asin is skipped; relative and wrapped links, localized numbers, unit prices, a money coupon', () => {
    const html = `<html><body><div class="s-main-slot">
      <div data-component-type="s-search-result" data-asin=""><h2><a href="/x"><span>placeholder</span></a></h2></div>
      <div data-component-type="s-search-result" data-asin="B000000001" class="s-result-item AdHolder">
        <h2><a class="a-link-normal" href="/-/de/sspa/click?ie=UTF8&amp;spc=abc&amp;url=%2FSome-Thing%2Fdp%2FB000000001%2Fref%3Dsr_1_1_sspa%3Fkeywords%3Dx"><span>Ein Produkt</span></a></h2>
        <span aria-label="4,5 von 5 Sternen"><i class="a-icon a-icon-star-small a-star-small-4-5"><span class="a-icon-alt">4,5 von 5 Sternen</span></i></span>
        <span aria-label="1.234"><a href="#"><span class="a-size-base s-underline-text">1.234</span></a></span>
        <span class="a-price"><span class="a-offscreen">1.299,00&nbsp;€</span></span>
        <span class="a-price a-text-price" data-a-strike="true"><span class="a-offscreen">1.499,00&nbsp;€</span></span>
        <span data-component-type="s-coupon-component"><span class="s-coupon-unclipped"><span>Spare 100,00 €</span> <span>mit Coupon</span></span></span>
      </div>
      <div data-component-type="s-search-result" data-asin="B000000002" data-props='{"adLabel":"Sponsored"}'>
        <script type="application/json">{"label":"Sponsored","feedback":"Sponsored ad feedback"}</script>
        <h2><a href="/gp/slredirect/picassoRedirect.html?x=1"><span>Zweites Produkt</span></a></h2>
        <img class="s-image" src="/images/I/abc.jpg">
        <span class="a-price"><span class="a-offscreen">24,99 €</span></span>
        <span class="a-size-base a-color-secondary">(<span class="a-price a-text-price" data-a-size="b"><span class="a-offscreen">49,98 €</span></span>/kg)</span>
      </div></div></body></html>`;
    const cards = parseSearchResults(html, { origin: 'https://www.amazon.de/', currency: 'EUR' });
    expect(cards).toHaveLength(2);
    expect(cards[0]).toMatchObject({
      position: 1,
      asin: 'B000000001',
      title: 'Ein Produkt',
      url: 'https://www.amazon.de/dp/B000000001',
      price: 1299,
      original_price: 1499,
      rating: 4.5,
      ratings_count: 1234,
      sponsored: true,
      is_prime: false,
      image_url: null,
      coupon: { text: 'Spare 100,00 € mit Coupon', price_text: '1.199,00 €', price: 1199 },
    });
    expect(cards[1]).toMatchObject({
      position: 2,
      url: 'https://www.amazon.de/gp/slredirect/picassoRedirect.html?x=1',
      image_url: 'https://www.amazon.de/images/I/abc.jpg',
      // the unit price "(49,98 €/kg)" is neither the price nor an original price
      price_text: '24,99 €',
      price: 24.99,
      original_price: null,
      rating: null,
      ratings_count: null,
      // the word "Sponsored" in the card's JSON is no sponsored marker
      sponsored: false,
    });
    expect(parseSearchResults(html, DE, { dropSponsored: true }).map((c) => [c.position, c.asin])).toEqual([[1, 'B000000002']]);
  });
});
