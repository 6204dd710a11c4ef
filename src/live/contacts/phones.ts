/**
 * Phone numbers: tel: links, numbers in a page's text, and the countries a page hints at,
 * which decide how a number written without "+" is read ("030 1234567" is Berlin under DE).
 */
import { findPhoneNumbersInText, isSupportedCountry, parsePhoneNumberFromString, type CountryCode, type PhoneNumber } from 'libphonenumber-js/max';

export type { CountryCode };

export interface Phone {
  /** "+49301234567" */
  e164: string;
  /** As the page wrote it: "030 123 45 67". */
  shown: string;
}

// Two-letter TLDs sold as generic names, which say nothing about where a site is.
const VANITY_TLD = new Set(['ac', 'ai', 'cc', 'co', 'fm', 'gg', 'io', 'la', 'ly', 'me', 'sh', 'so', 'tk', 'to', 'tv', 'vc', 'ws']);

/** The region subtag of a BCP 47 / POSIX locale: "de-DE" → "DE", "zh-Hant-TW" → "TW", "de" → null. */
function regionOf(locale: string | null | undefined): string | null {
  const parts = (locale ?? '').trim().split(/[-_]/);
  return parts.slice(1).find((p) => /^[a-z]{2}$/i.test(p))?.toUpperCase() ?? null;
}

const sameUrl = (a: string, b: string): boolean => a.replace(/#.*$/, '').replace(/\/$/, '') === b.replace(/#.*$/, '').replace(/\/$/, '');

/**
 * The countries a page hints at, strongest first: `<html lang>` region, og:locale, the
 * hreflang the page gives itself, then its host's country TLD (.co.uk → GB); US last as the
 * fallback. Only countries libphonenumber knows.
 */
export function countryHints(doc: Document, pageUrl: string): CountryCode[] {
  const found: (string | null)[] = [regionOf(doc.documentElement?.getAttribute('lang')), regionOf(doc.querySelector('meta[property="og:locale"]')?.getAttribute('content'))];
  for (const link of doc.querySelectorAll('link[hreflang][href]')) {
    try {
      if (sameUrl(new URL(link.getAttribute('href')!, pageUrl).href, new URL(pageUrl).href)) found.push(regionOf(link.getAttribute('hreflang')));
    } catch {
      // An unreadable href hints nothing.
    }
  }
  try {
    const tld = new URL(pageUrl).hostname.split('.').pop()!.toLowerCase();
    if (/^[a-z]{2}$/.test(tld) && !VANITY_TLD.has(tld)) found.push(tld === 'uk' ? 'GB' : tld.toUpperCase());
  } catch {
    // No host, no TLD hint.
  }
  found.push('US');
  return [...new Set(found.filter((c): c is CountryCode => c !== null && isSupportedCountry(c)))];
}

const digits = (s: string): string => s.replace(/\D/g, '');
// Where numbers are commonly written without the trunk prefix: Indian mobiles ("98765 43210"), Russian "(495) 123-45-67".
const TRUNK_OPTIONAL = new Set(['IN', 'RU', 'KZ', 'BY']);

/**
 * A tel: link's number (or a JSON-LD telephone), read under the first hint that makes it
 * valid, else the first that makes it possible: the site typed it as a phone number, so
 * it is trusted more than text. `shown` is the link's text when that holds the number.
 */
export function phoneFromTel(value: string, hints: readonly CountryCode[], text?: string | null): Phone | null {
  let raw = value.replace(/^\s*tel:(?:\/\/)?/i, '');
  try {
    raw = decodeURIComponent(raw);
  } catch {
    // A stray "%" leaves the text as it is.
  }
  raw = raw.split(/[;?]/)[0]!.trim();
  if (digits(raw).length < 5) return null;
  const parsed = (hints.length ? hints : [undefined]).map((c) => parsePhoneNumberFromString(raw, c)).filter((p): p is PhoneNumber => !!p);
  const best = parsed.find((p) => p.isValid()) ?? parsed.find((p) => p.isPossible());
  if (!best) return null;
  const shown = text?.replace(/\s+/g, ' ').trim();
  return { e164: best.number, shown: shown && digits(shown).length >= 5 ? shown : raw };
}

/**
 * The valid numbers in a page's text, each read under the first hint that finds it. Beyond
 * libphonenumber's validity, two guards against ids and dates that happen to be valid
 * numbers: a run of bare digits ("Order 4155552671"), and a national number written without
 * its trunk prefix (the "2024 - 31" of "01.01.2024 - 31.12.2024" is valid in Wuppertal,
 * which is written "0202 431…"; this also lets "(212) 555-0123" fall through DE to US).
 */
export function phonesInText(text: string, hints: readonly CountryCode[]): Phone[] {
  const taken: [number, number][] = [];
  const out = new Map<string, Phone & { at: number }>();
  for (const country of hints.length ? hints : [undefined]) {
    for (const m of findPhoneNumbersInText(text, country ? { defaultCountry: country } : {})) {
      if (taken.some(([a, b]) => m.startsAt < b && a < m.endsAt)) continue;
      const shown = text.slice(m.startsAt, m.endsAt);
      const n = m.number;
      if (!n.isValid() || out.has(n.number)) continue;
      if (/^\d+$/.test(shown)) continue;
      const noTrunk = !shown.includes('+') && digits(shown) === n.nationalNumber && digits(n.formatNational()) !== n.nationalNumber;
      if (noTrunk && !TRUNK_OPTIONAL.has(n.country ?? '')) continue;
      taken.push([m.startsAt, m.endsAt]);
      out.set(n.number, { e164: n.number, shown, at: m.startsAt });
    }
  }
  // Page order, whichever hint found each.
  return [...out.values()].sort((a, b) => a.at - b.at).map(({ e164, shown }) => ({ e164, shown }));
}
