/**
 * Phone numbers: tel: links, numbers in a page's text, and the countries a page hints at,
 * which decide how a number written without "+" is read ("030 1234567" is Berlin under DE);
 * and whether the page labels a number as a fax.
 */
import {
  findPhoneNumbersInText,
  getCountries,
  isSupportedCountry,
  parsePhoneNumberFromString,
  type CountryCode,
  type PhoneNumber,
} from 'libphonenumber-js/max';
import { ldBlocks } from '../json-ld.js';
import { renderedText } from '../page.js';

export type { CountryCode };

/** A fax where the page labels the number so ("Fax", "Telefax", "F:", a `fax:` link, JSON-LD `faxNumber`); else a phone. */
export type PhoneKind = 'phone' | 'fax';

export interface Phone {
  /** "+49301234567" */
  e164: string;
  /** As the page wrote it: "030 123 45 67". */
  shown: string;
  kind: PhoneKind;
}

// Two-letter TLDs sold as generic names, which say nothing about where a site is.
const VANITY_TLD = new Set(['ac', 'ai', 'cc', 'co', 'fm', 'gg', 'io', 'la', 'ly', 'me', 'sh', 'so', 'tk', 'to', 'tv', 'vc', 'ws']);

/** The region subtag of a BCP 47 / POSIX locale: "de-DE" → "DE", "zh-Hant-TW" → "TW", "de" → null. */
function regionOf(locale: string | null | undefined): string | null {
  const parts = (locale ?? '').trim().split(/[-_]/);
  return (
    parts
      .slice(1)
      .find((p) => /^[a-z]{2}$/i.test(p))
      ?.toUpperCase() ?? null
  );
}

const sameUrl = (a: string, b: string): boolean => a.replace(/#.*$/, '').replace(/\/$/, '') === b.replace(/#.*$/, '').replace(/\/$/, '');

/**
 * The countries a page hints at, strongest first: `<html lang>` region, og:locale, the
 * hreflang the page gives itself, the country of its postal address (JSON-LD or microdata
 * `addressCountry`, `<meta name="geo.region">`), its host's country TLD (.co.uk → GB), then
 * DE where numbers are labelled with words only German uses ("Telefon", "Fon", "Telefax" …)
 * on a page not declared in another language; US last as the fallback. Only countries
 * libphonenumber knows. `text` is the page's visible text, when the caller has it.
 */
export function countryHints(doc: Document, pageUrl: string, text?: string): CountryCode[] {
  const lang = doc.documentElement?.getAttribute('lang');
  const found: (string | null)[] = [regionOf(lang), regionOf(doc.querySelector('meta[property="og:locale"]')?.getAttribute('content'))];
  for (const link of doc.querySelectorAll('link[hreflang][href]')) {
    try {
      if (sameUrl(new URL(link.getAttribute('href')!, pageUrl).href, new URL(pageUrl).href)) found.push(regionOf(link.getAttribute('hreflang')));
    } catch {
      // An unreadable href hints nothing.
    }
  }
  found.push(...addressCountries(doc));
  try {
    const tld = new URL(pageUrl).hostname.split('.').pop()!.toLowerCase();
    if (/^[a-z]{2}$/.test(tld) && !VANITY_TLD.has(tld)) found.push(tld === 'uk' ? 'GB' : tld.toUpperCase());
  } catch {
    // No host, no TLD hint.
  }
  const language = (lang ?? '').trim().split(/[-_]/)[0]!.toLowerCase();
  if (!found.includes('DE') && (language === '' || language === 'de') && GERMAN_LABEL.test(text ?? renderedText(doc.body ?? doc))) found.push('DE');
  found.push('US');
  return [...new Set(found.filter((c): c is CountryCode => c !== null && isSupportedCountry(c)))];
}

/**
 * A phone label German alone writes right before a number: "Telefon: 030 …", "Fon 05191 …".
 * ("Tel." and "Fax" are written in English, French and Dutch too, so they hint no country.)
 */
const GERMAN_LABEL = /(?:^|[^\p{L}])(?:Telefon(?:nummer)?|Telefax|Faxnummer|Rufnummer|Fon|Handy)\b[ \t.:]*[+(]?\d/u;

/** The country codes of the page's postal address: JSON-LD and microdata `addressCountry` (a code or a name), `geo.region` ("DE-NI"). */
function addressCountries(doc: Document): string[] {
  const out: string[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth > 8 || !v || typeof v !== 'object') return;
    if (Array.isArray(v)) return v.forEach((x) => walk(x, depth + 1));
    for (const [k, x] of Object.entries(v)) {
      if (k === 'addressCountry')
        out.push(
          ...[x]
            .flat()
            .map((c) => countryCode(typeof c === 'string' ? c : (c as { name?: unknown })?.name))
            .filter((c): c is string => !!c),
        );
      else walk(x, depth + 1);
    }
  };
  walk(ldBlocks(doc), 0);
  for (const el of doc.querySelectorAll('[itemprop="addressCountry"]')) {
    const c = countryCode(el.getAttribute('content') ?? el.textContent);
    if (c) out.push(c);
  }
  const region = /^([a-z]{2})(?:-|$)/i.exec(doc.querySelector('meta[name="geo.region" i]')?.getAttribute('content')?.trim() ?? '');
  if (region) out.push(region[1]!.toUpperCase());
  return out;
}

let countryNames: Map<string, string> | undefined;

/** "DE", "Germany", "Deutschland" → "DE"; null for what names no country. */
function countryCode(v: unknown): string | null {
  const t = typeof v === 'string' ? v.trim() : '';
  if (/^[a-z]{2}$/i.test(t)) return t.toUpperCase() === 'UK' ? 'GB' : t.toUpperCase();
  if (!t) return null;
  if (!countryNames) {
    // Every country's name in the languages address blocks are written in, built once.
    countryNames = new Map();
    for (const language of ['en', 'de', 'fr', 'it', 'es', 'nl', 'pt', 'pl', 'sv', 'da']) {
      const names = new Intl.DisplayNames([language], { type: 'region' });
      for (const code of getCountries()) {
        const name = names.of(code);
        if (name && name !== code) countryNames.set(name.toLowerCase(), code);
      }
    }
  }
  return countryNames.get(t.toLowerCase()) ?? null;
}

const digits = (s: string): string => s.replace(/\D/g, '');
// Where numbers are commonly written without the trunk prefix: Indian mobiles ("98765 43210"), Russian "(495) 123-45-67".
const TRUNK_OPTIONAL = new Set(['IN', 'RU', 'KZ', 'BY']);

/**
 * A tel: or fax: link's number (or a JSON-LD telephone or faxNumber), read under the first
 * hint that makes it valid, else the first that makes it possible: the site typed it as a
 * phone number, so it is trusted more than text. `shown` is the link's text when that holds
 * the number; `kind` is what the page labels it (a `fax:` link is a fax whatever its label).
 */
export function phoneFromTel(value: string, hints: readonly CountryCode[], text?: string | null, kind: PhoneKind = 'phone'): Phone | null {
  if (/^\s*fax:/i.test(value)) kind = 'fax';
  let raw = value.replace(/^\s*(?:tel|fax):(?:\/\/)?/i, '');
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
  return { e164: best.number, shown: shown && digits(shown).length >= 5 ? shown : raw, kind };
}

/**
 * The valid numbers in a page's text, each read under the first hint that finds it. Beyond
 * libphonenumber's validity, two guards against ids and dates that happen to be valid
 * numbers: a run of bare digits ("Order 4155552671"), and a national number written without
 * its trunk prefix (the "2024 - 31" of "01.01.2024 - 31.12.2024" is valid in Wuppertal,
 * which is written "0202 431…"; this also lets "(212) 555-0123" fall through DE to US).
 * Each is a fax where the label before it says so (numberKind).
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
        out.set(n.number, { e164: n.number, shown, kind: numberKind(labelBefore(text, from)), at: from });
      }
    }
  }
  // Page order, whichever hint found each.
  return [...out.values()].sort((a, b) => a.at - b.at).map(({ e164, shown, kind }) => ({ e164, shown, kind }));
}

/**
 * The words that label the number at `at` in `text`: what stands between it and the number
 * before it on its line ("Tel. 030 1 / Fax: 030 2" labels the second "/ Fax:"); a number
 * that follows another with no word between takes the line's own label; a number alone on
 * its line, the line before when that is a short label without digits (a table's "Fax" cell).
 */
function labelBefore(text: string, at: number): string {
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  const line = text.slice(lineStart, at);
  const sinceNumber = line.replace(/^[\s\S]*\d/, '');
  if (/\p{L}/u.test(sinceNumber)) return sinceNumber;
  if (/\d/.test(line)) return line.replace(/\d[\s\S]*$/, '');
  const prevStart = text.lastIndexOf('\n', lineStart - 2) + 1;
  const prev = lineStart > 0 ? text.slice(prevStart, lineStart - 1) : '';
  return prev.length <= 30 && !/\d/.test(prev) ? `${prev} ${line}` : line;
}

/** Labels that end in a fax word: "Fax", "Fax:", "Telefax", "Fax-Nr.", "Faxnummer", a letterhead's "F:". */
const FAX_LABEL = /(?:^|[^\p{L}])(?:(?:tele)?fax(?:[-\s]?(?:nr|nummer|no|number))?|F(?=\s*[:.]))[^\p{L}\d]*$/iu;
/** "Tel./Fax", "Telefon und Fax": one number for both, which is a phone that answers. */
const PHONE_AND_FAX = /(?:tel|telefon|phone|fon)[^\p{L}\d]*(?:\/|&|\+|und|and|u\.)[^\p{L}\d]*(?:tele)?fax[^\p{L}\d]*$/iu;

/** Whether the words before a number (`label`) make it a fax; any other label, or none, is a phone's. */
export function numberKind(label: string): PhoneKind {
  return FAX_LABEL.test(label) && !PHONE_AND_FAX.test(label) ? 'fax' : 'phone';
}

/** A "+", "(" or digit, then digits and the separators numbers are written with, ending in a digit (a line break ends it). */
const MAX_RUNS = 2000;
/** A date as a run of digits: "12.03.2024", "2024-03-12", "03/12/2024". */
const DATE = /^(?:\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{4}-\d{2}-\d{2})$/;
const NUMBER_RUN = /[+(]?\d[\d \t()./\u00a0-]*\d\)?/g;

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
