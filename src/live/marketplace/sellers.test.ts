import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ScrapeError } from '../page.js';
import { parseOffers, parseSellerProfile } from './sellers.js';

// Synthetic: no real capture of these pages exists (see test/fixtures/pages/PROVENANCE.md).
const PAGES = path.resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../test/fixtures/pages/synthetic');
const read = (f: string) => fs.readFileSync(path.join(PAGES, f), 'utf8');
const ctx = { origin: 'https://www.amazon.com', currency: 'USD' };
const ROBOT = '<html><head><title>Robot Check</title></head><body><form action="/errors/validateCaptcha"></form></body></html>';

describe('parseOffers', () => {
  it('reads the pinned offer and the list: condition, price, delivery, ships from, seller and rating', () => {
    const offers = parseOffers(read('amazon-com-offers-B0DR8G428S.html'), ctx);
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
      seller: { name: 'Chen Ying Ke Ji', id: 'A2JZ0S3QVWQECL', rating: 4.5, ratings_count: 1237, positive_percent: 93 },
    });
    expect(offers[1]).toMatchObject({ pinned: false, condition: 'Used - Like New', price: 29.41, delivery: '$6.99 delivery August 21 - 25', ships_from: 'Gadget Resale' });
    expect(offers[1].seller).toEqual({ name: 'Gadget Resale', id: 'A1Q2W3E4R5T6Y7', rating: 4, ratings_count: 88, positive_percent: 85 });
    expect(offers[2].seller).toEqual({ name: 'Shenzhen Direct', id: 'AZX9Y8W7V6U5T', rating: null, ratings_count: null, positive_percent: null });
  });

  it('refuses a robot check and a page without the panel', () => {
    expect(() => parseOffers(ROBOT, ctx)).toThrow(ScrapeError);
    expect(() => parseOffers('<html><body>nothing</body></html>', ctx)).toThrow(/no offers panel/);
  });
});

describe('parseSellerProfile', () => {
  it('reads name, rating, feedback, about and the business details', () => {
    expect(parseSellerProfile(read('amazon-com-seller-A2JZ0S3QVWQECL.html'), 'A2JZ0S3QVWQECL', ctx)).toEqual({
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
    expect(() => parseSellerProfile(ROBOT, 'X', ctx)).toThrow(ScrapeError);
    expect(() => parseSellerProfile('<html><body>nothing</body></html>', 'X', ctx)).toThrow(/no seller name/);
  });
});
