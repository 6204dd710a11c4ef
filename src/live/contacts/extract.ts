/**
 * The contacts one page shows: email addresses, phone numbers and social profiles, read
 * from its links, its visible text and its JSON-LD. Pure: the crawler fetches, loads the
 * page with loadPage, and tags what comes back with the page's URL.
 */
import { loadPage, renderedText } from '../page.js';
import { ldBlocks } from '../json-ld.js';
import { emailsFromMailto, emailsInText, decodeCfEmail, dedupe } from './emails.js';
import { countryHints, numberKind, phoneFromTel, phonesInText, type CountryCode, type Phone } from './phones.js';
import { contactPageLinks } from './links.js';
import { canonicalSocial, type Social } from './socials.js';

export { decodeCfEmail, cleanEmail, emailsInText, emailsFromMailto } from './emails.js';
export { countryHints, numberKind, phoneFromTel, phonesInText, type CountryCode, type Phone, type PhoneKind } from './phones.js';
export { canonicalSocial, type Social } from './socials.js';
export { contactPageLinks } from './links.js';

export interface PageContacts {
  /** "info@acme.de": domain lower-cased, local part as shown, no repeats in any case. */
  emails: string[];
  phones: Phone[];
  socials: Social[];
}

/** The page's visible text, a line per block element (so numbers in neighbouring cells do not run together). */
export function visibleText(doc: Document): string {
  return renderedText(doc)
    .replace(/[ \t\u00a0]+/g, ' ')
    .replace(/ ?\n\s*/g, '\n');
}

/** Every string under `key` anywhere in the page's JSON-LD blocks (in @graph, contactPoint, arrays …). */
function jsonLdValues(doc: Document, keys: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>(keys.map((k) => [k, []]));
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        const list = out.get(k);
        if (list && typeof x === 'string') list.push(x);
        else if (list && Array.isArray(x)) list.push(...x.filter((s): s is string => typeof s === 'string'));
        else walk(x);
      }
    }
  };
  for (const block of ldBlocks(doc)) {
    try {
      walk(block);
    } catch {
      // nested too deep to walk (a hostile page): skipped like a block that does not parse
    }
  }
  return out;
}

/** Elements that end a label: what stands before them does not label a link after them. */
const LABEL_BREAK = new Set([
  'BR',
  'P',
  'DIV',
  'LI',
  'TD',
  'TH',
  'TR',
  'DT',
  'DD',
  'HR',
  'TABLE',
  'UL',
  'OL',
  'SECTION',
  'ARTICLE',
  'HEADER',
  'FOOTER',
  'NAV',
  'ADDRESS',
  'H1',
  'H2',
  'H3',
  'H4',
  'H5',
  'H6',
]);

/**
 * The words that label a tel: link: the text before it in its line ("Fax: <a href=tel:…>"),
 * then its own text up to the number ("<a href=tel:…>Fax 030 …</a>"); where neither has a
 * word, a short cell or line just before its block ("<td>Fax</td><td><a href=tel:…>").
 */
function linkLabel(a: Element): string {
  let before = '';
  for (let n = a.previousSibling; n && before.length < 80; n = n.previousSibling) {
    if (n.nodeType === 1 && LABEL_BREAK.has((n as Element).tagName.toUpperCase())) break;
    before = (n.textContent ?? '') + before;
  }
  const own = (a.textContent ?? '').replace(/\d[\s\S]*$/, '');
  const label = `${before.replace(/^[\s\S]*\d/, '')} ${own}`;
  if (/\p{L}/u.test(label)) return label;
  let block: Element | null = a.parentElement;
  while (block && !LABEL_BREAK.has(block.tagName.toUpperCase())) block = block.parentElement;
  const cell = block?.previousElementSibling?.textContent?.replace(/\s+/g, ' ').trim() ?? '';
  return cell.length <= 30 && !/\d/.test(cell) ? `${cell} ${label}` : label;
}

/**
 * The contacts on one page. `hints` are the countries to read numbers written without "+"
 * in, strongest first (countryHints gives them). Emails come from mailto: links, Cloudflare
 * protected links, the visible text (obfuscated forms too) and JSON-LD `email`; phones from
 * tel: and fax: links, JSON-LD `telephone` and `faxNumber` and the visible text, each a fax
 * where the page labels it so; socials from links and JSON-LD `sameAs`. Each list is in that
 * order, without repeats (a number is kept with the kind it was first found as).
 */
export function extractContacts(doc: Document, pageUrl: string, hints: readonly CountryCode[], text = visibleText(doc)): PageContacts {
  const links = Array.from(doc.querySelectorAll('a[href], area[href]'));
  const ld = jsonLdValues(doc, ['email', 'telephone', 'faxNumber', 'sameAs']);

  const cf = [
    ...links.map((a) => a.getAttribute('href')!.match(/\/cdn-cgi\/l\/email-protection#([0-9a-f]+)/i)?.[1]),
    ...Array.from(doc.querySelectorAll('[data-cfemail]'), (e) => e.getAttribute('data-cfemail')),
  ];
  const emails = dedupe([
    ...links.flatMap((a) => (/^\s*mailto:/i.test(a.getAttribute('href')!) ? emailsFromMailto(a.getAttribute('href')!) : [])),
    ...cf.flatMap((hex) => emailsInText((hex && decodeCfEmail(hex)) ?? '')),
    ...emailsInText(text),
    ...ld.get('email')!.flatMap(emailsInText),
  ]);

  const phones = new Map<string, Phone>();
  const tels = links
    .filter((a) => /^\s*(?:tel|fax):/i.test(a.getAttribute('href')!))
    .map((a) => phoneFromTel(a.getAttribute('href')!, hints, a.textContent, numberKind(linkLabel(a))));
  const fromLd = [...ld.get('telephone')!.map((t) => phoneFromTel(t, hints)), ...ld.get('faxNumber')!.map((t) => phoneFromTel(t, hints, null, 'fax'))];
  for (const p of [...tels, ...fromLd, ...phonesInText(text, hints)]) {
    if (p && !phones.has(p.e164)) phones.set(p.e164, p);
  }

  const socials = new Map<string, Social>();
  for (const s of [...links.map((a) => canonicalSocial(a.getAttribute('href')!, pageUrl)), ...ld.get('sameAs')!.map((u) => canonicalSocial(u))]) {
    if (s && !socials.has(s.url)) socials.set(s.url, s);
  }

  return { emails, phones: [...phones.values()], socials: [...socials.values()] };
}

/**
 * One page of a contacts crawl, from its HTML: its contacts read under its own country hints
 * ahead of the home page's (`home`, for a linked page), and, for the home page, the pages it
 * links as contact, imprint, about or team (at most `maxLinks`). Plain data in and out, so it
 * runs in a parse worker.
 */
export function readContactsPage(
  html: string,
  pageUrl: string,
  home: { hints: CountryCode[] } | null,
  maxLinks: number,
): { contacts: PageContacts; hints: CountryCode[]; links: string[] } {
  const doc = loadPage(html);
  const text = visibleText(doc);
  const own = countryHints(doc, pageUrl, text);
  // The home page's hints end with the US fallback: a linked page's own come first.
  const hints = home ? [...new Set([...own.filter((c) => c !== 'US'), ...home.hints])] : own;
  return { contacts: extractContacts(doc, pageUrl, hints, text), hints, links: home ? [] : contactPageLinks(doc, pageUrl, maxLinks) };
}
