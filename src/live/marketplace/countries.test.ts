import { describe, expect, it } from 'vitest';
import { MARKETPLACES, parsePrice } from './countries.js';

describe('parsePrice', () => {
  it('reads every site convention', () => {
    const cases: [string, number | null][] = [
      ['$1,234.56', 1234.56],
      ['1.234,56 €', 1234.56],
      ['24,99 €', 24.99],
      ['€2.95', 2.95],
      ['￥1,980', 1980],
      ['EUR 1.234', 1234],
      ['₹1,23,456.00', 123456],
      ['1 234,50 €', 1234.5],
      ['£7', 7],
      ['$0.99', 0.99],
      ['Free', null],
      ['', null],
    ];
    for (const [text, n] of cases) expect([text, parsePrice(text)]).toEqual([text, n]);
  });

  it('gives each country its site, currency and postal code form', () => {
    expect(MARKETPLACES.de).toMatchObject({ domain: 'www.amazon.de', currency: 'EUR' });
    expect(MARKETPLACES.jp.currency).toBe('JPY');
    expect(MARKETPLACES.us.zip.test('10001')).toBe(true);
    expect(MARKETPLACES.gb.zip.test('SW1A 1AA')).toBe(true);
    expect(MARKETPLACES.de.zip.test('SW1A 1AA')).toBe(false);
  });
});
