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
  // libphonenumber costs about 60 µs a line it reads: hand it only the runs of digits and
  // separators that could be a number, so a 2 MiB page of prose costs milliseconds, not seconds.
  // Pages repeat themselves (a footer's number, a date in every teaser): each run is read once.
  const memo = new Map<string, ReturnType<typeof findPhoneNumbersInText>>();
  const find = (run: string, country: CountryCode | undefined) => {
    const key = `${country}\t${run}`;
    let found = memo.get(key);
    if (!found) memo.set(key, (found = findPhoneNumbersInText(run, country ? { defaultCountry: country } : {})));
    return found;
  };
  for (const [offset, run] of numberRuns(text)) {
    for (const country of hints.length ? hints : [undefined]) {
      for (const m of find(run, country)) {
        const [from, to] = [offset + m.startsAt, offset + m.endsAt];
        if (taken.some(([x, y]) => from < y && x < to)) continue;
        const shown = run.slice(m.startsAt, m.endsAt);
        const n = m.number;
        if (!n.isValid() || out.has(n.number)) continue;
        if (/^\d+$/.test(shown)) continue;
        const noTrunk = !shown.includes('+') && digits(shown) === n.nationalNumber && digits(n.formatNational()) !== n.nationalNumber;
        if (noTrunk && !TRUNK_OPTIONAL.has(n.country ?? '')) continue;
        taken.push([from, to]);
        out.set(n.number, { e164: n.number, shown, at: from });
      }
    }
  }
  // Page order, whichever hint found each.
  return [...out.values()].sort((a, b) => a.at - b.at).map(({ e164, shown }) => ({ e164, shown }));
}

/** A "+", "(" or digit, then digits and the separators numbers are written with, ending in a digit (a line break ends it). */
const MAX_RUNS = 2000;
/** A date as a run of digits: "12.03.2024", "2024-03-12", "03/12/2024". */
const DATE = /^(?:\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{4}-\d{2}-\d{2})$/;
const NUMBER_RUN = /[+(]?\d[\d \t().\/\u00a0-]*\d\)?/g;

/**
 * The runs in `text` that hold at least 5 digits (the least a phone number has), each with its
 * offset; a run glued to a letter ("ID12345678", "12345678px") is an id, as libphonenumber
 * would judge it in context.
 */
function numberRuns(text: string): [number, string][] {
  const out: [number, string][] = [];
  for (const m of text.matchAll(NUMBER_RUN)) {
    const [before, after] = [text[m.index! - 1] ?? ' ', text[m.index! + m[0].length] ?? ' '];
    if (digits(m[0]).length >= 5 && !DATE.test(m[0]) && !/\p{L}/u.test(before) && !/\p{L}/u.test(after)) out.push([m.index!, m[0]]);
  }
  // A page of thousands of numbers (a price list, a timetable) is read at its head and its
  // foot, where a site's own numbers stand: the parse stays within a few hundred milliseconds.
  return out.length > MAX_RUNS ? [...out.slice(0, MAX_RUNS / 2), ...out.slice(-MAX_RUNS / 2)] : out;
}
