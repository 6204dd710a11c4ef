/**
 * The marketplace countries (README, "Live scrapes: the marketplace family"): each sets the site domain, the
 * currency prices are read in, and how that site writes a price.
 */

export const COUNTRIES = ['us', 'gb', 'ca', 'au', 'in', 'de', 'es', 'nl', 'be', 'jp'] as const;
export type Country = (typeof COUNTRIES)[number];

export interface Marketplace {
  country: Country;
  /** The public site's host (its base URL is configurable: MARKETPLACE_BASE_URL_<COUNTRY>). */
  domain: string;
  /** ISO 4217. */
  currency: string;
  /** Conditions the site offers as a search filter (another one is 400). */
  conditions: readonly ('new' | 'used' | 'renewed')[];
  /** A postal code the site accepts for a delivery location, as a pattern. */
  zip: RegExp;
}

const ALL = ['new', 'used', 'renewed'] as const;

export const MARKETPLACES: Record<Country, Marketplace> = {
  us: { country: 'us', domain: 'www.amazon.com', currency: 'USD', conditions: ALL, zip: /^\d{5}(-\d{4})?$/ },
  gb: { country: 'gb', domain: 'www.amazon.co.uk', currency: 'GBP', conditions: ALL, zip: /^[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}$/i },
  ca: { country: 'ca', domain: 'www.amazon.ca', currency: 'CAD', conditions: ALL, zip: /^[A-Z]\d[A-Z] ?\d[A-Z]\d$/i },
  au: { country: 'au', domain: 'www.amazon.com.au', currency: 'AUD', conditions: ['new', 'used'], zip: /^\d{4}$/ },
  in: { country: 'in', domain: 'www.amazon.in', currency: 'INR', conditions: ['new', 'renewed'], zip: /^\d{6}$/ },
  de: { country: 'de', domain: 'www.amazon.de', currency: 'EUR', conditions: ALL, zip: /^\d{5}$/ },
  es: { country: 'es', domain: 'www.amazon.es', currency: 'EUR', conditions: ALL, zip: /^\d{5}$/ },
  nl: { country: 'nl', domain: 'www.amazon.nl', currency: 'EUR', conditions: ['new', 'used'], zip: /^\d{4} ?[A-Z]{2}$/i },
  be: { country: 'be', domain: 'www.amazon.com.be', currency: 'EUR', conditions: ['new', 'used'], zip: /^\d{4}$/ },
  jp: { country: 'jp', domain: 'www.amazon.co.jp', currency: 'JPY', conditions: ['new', 'used'], zip: /^\d{3}-?\d{4}$/ },
};

/**
 * A display price as a number: "$1,234.56" → 1234.56, "1.234,56 €" → 1234.56, "€2.95" (an
 * English session on a euro site) → 2.95, "￥1,980" → 1980, "24,99 €" → 24.99. When both
 * separators appear the later one is the decimal mark; a lone one followed by one or two
 * digits is decimal, by three a thousands mark (no site prices in thousandths). Null when the
 * text holds no digits.
 */
export function parsePrice(text: string | null | undefined): number | null {
  if (!text) return null;
  const m = text.replace(/[\u00a0\u202f]/g, ' ').match(/\d(?:[\d.,' ]*\d)?/);
  if (!m) return null;
  const raw = m[0].replace(/[ ']/g, '');
  const last = Math.max(raw.lastIndexOf('.'), raw.lastIndexOf(','));
  const both = raw.includes('.') && raw.includes(',');
  const decimalAt = last >= 0 && (both || raw.length - last - 1 <= 2) ? last : -1;
  const whole = (decimalAt < 0 ? raw : raw.slice(0, decimalAt)).replace(/[.,]/g, '');
  const n = Number(decimalAt < 0 ? whole : `${whole}.${raw.slice(decimalAt + 1)}`);
  return Number.isFinite(n) ? n : null;
}
