import { describe, expect, it } from 'vitest';
import { readFixture, scrapeError } from '../../../test/helpers/pages.js';
import { parseSellerProfile, positivePercent, ratingsCount } from './sellers.js';

const ctx = { origin: 'https://www.amazon.com', currency: 'USD' };
const ROBOT = '<html><head><title>Robot Check</title></head><body><form action="/errors/validateCaptcha"></form></body></html>';

// The offers parser's tests are in offers.test.ts.

/**
 * Synthetic: no real capture of a seller profile (`/sp?seller=`) exists; the only real seller
 * page is a storefront search, which is not this layout (see test/fixtures/pages/PROVENANCE.md).
 */
describe('parseSellerProfile (synthetic)', () => {
  it('reads name, rating, feedback, about and the business details', () => {
    expect(parseSellerProfile(readFixture('synthetic/amazon-com-seller-A2JZ0S3QVWQECL.html'), 'A2JZ0S3QVWQECL', ctx)).toEqual({
      id: 'A2JZ0S3QVWQECL',
      name: 'Chen Ying Ke Ji',
      rating: 4.5,
      ratings_count: 1237,
      positive_percent: 93,
      about: 'Chen Ying Ke Ji is committed to providing each customer with the highest standard of customer service.',
      business_name: 'ShenZhen ChenYing KeJi YouXianGongSi',
      business_address: 'LongHuaQu MinZhiJieDao, ShenZhen, GuangDong, 518000, CN',
      storefront_url: 'https://www.amazon.com/s?me=A2JZ0S3QVWQECL&marketplaceID=ATVPDKIKX0DER',
    });
  });

  it('refuses a robot check and a page without a seller', () => {
    expect(scrapeError(() => parseSellerProfile(ROBOT, 'X', ctx)).detail).toMatch(/robot check/);
    expect(scrapeError(() => parseSellerProfile('<html><body>nothing</body></html>', 'X', ctx)).detail).toMatch(/no seller name \(#seller-name\)/);
  });

  it('refuses real pages that are not a seller profile: another site, and the seller storefront', () => {
    expect(
      scrapeError(() => parseSellerProfile(readFixture('publisher/apnews-article-presidential-campaigns-2024-09-03.html'), 'A2DP2EEPU3VU45', ctx)).detail,
    ).toMatch(/#seller-name/);
    expect(
      scrapeError(() => parseSellerProfile(readFixture('amazon-seller/amazon-com-seller-storefront-search-2020.html'), 'A2DP2EEPU3VU45', ctx)).detail,
    ).toMatch(/#seller-name/);
  });
});

describe('seller rating text', () => {
  it('reads the counts and percentages of both offers layouts and the profile', () => {
    expect(ratingsCount('(1,237 ratings)')).toBe(1237);
    expect(ratingsCount('97% positive over the past 12 months. (1,720 total ratings)')).toBe(1720);
    expect(ratingsCount('(1 rating)')).toBe(1);
    expect(ratingsCount('Just launched')).toBeNull();
    expect(positivePercent('93% positive over last 12 months')).toBe(93);
    expect(positivePercent('Just launched')).toBeNull();
  });
});
