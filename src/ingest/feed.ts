/**
 * One fetched feed body → normalised items. Decoding, format checks and field mapping live here;
 * XML parsing is feedsmith's (fast-xml-parser underneath).
 *
 *   parseFeed(bytes, { url: 'https://ledger.example/rss', contentType: 'text/xml; charset=windows-1252', now })
 *   → { format: 'rss', title: 'Daily Ledger', dropped: 1, items: [
 *       { url: 'https://ledger.example/a/1', title: 'Café reopens', snippet: 'The café on…',
 *         publishedAt: 1749528000, publishedFromFeed: true } ] }
 *
 * Items without a usable link or title are dropped (and counted), never guessed: an article is
 * identified by its canonical URL, so an item without one cannot be stored.
 */
import { decodeHTML } from 'entities';
import { DetectError, MalformedError, ParseError, parseAtomFeed, parseRdfFeed, parseRssFeed, type AtomFeed, type RdfFeed, type RssFeed } from 'feedsmith';
import { canonicalUrl } from '../store/index.js';
import { FeedError } from './feed-error.js';
import { monthIndex } from '../time.js';

export interface FeedItem {
  /** Canonical URL (the article's identity). */
  url: string;
  /** Plain-text headline. */
  title: string;
  /** Plain text, at most 300 characters (see snippetOf); may be empty. */
  snippet: string;
  /** Unix seconds. */
  publishedAt: number;
  /** False when the feed gave no usable date and `now` was used. */
  publishedFromFeed: boolean;
}

export interface ParsedFeed {
  format: 'rss' | 'rdf' | 'atom';
  title: string | null;
  items: FeedItem[];
  /** Items left out for want of an absolute http(s) link or a title. */
  dropped: number;
}

export { FeedError };

/** A feed date this far past `now` is the outlet's clock or time zone being wrong, not news from the future. */
const CLOCK_SKEW_SEC = 5 * 60;

/**
 * Parses a feed body. `contentType` is the HTTP Content-Type header (may carry a charset).
 *
 * The body is decoded here, not by the XML parser, so that any charset the WHATWG Encoding
 * standard knows works: a byte-order mark wins (it is the bytes themselves, as in the Encoding
 * standard's BOM sniffing), then the header's charset, then the XML declaration's encoding,
 * else UTF-8. The declaration is left in the decoded text; the parser ignores it.
 *
 * Throws FeedError, with the reason, for an unknown charset, an HTML page, a document that is
 * not RSS / RDF (RSS 1.0) / Atom, and XML that is malformed or truncated.
 */
export function parseFeed(body: Uint8Array, opts: { url: string; contentType?: string | null; now: number }): ParsedFeed {
  const text = decodeBody(body, opts.contentType ?? null);
  const root = rootElement(text);
  const format = formatOf(root);
  // fast-xml-parser accepts a document cut off mid-stream as long as the open element is whole;
  // a partial download must not pass for a short feed.
  if (!text.includes(`</${root}`)) throw new FeedError(`malformed XML: <${root}> is never closed (truncated document?)`);

  const ctx: ItemContext = { base: opts.url, now: opts.now };
  try {
    if (format === 'rss') {
      const feed = parseRssFeed(text);
      return collect('rss', plain(feed.title), feed.items, (i) => rssItem(i, ctx));
    }
    if (format === 'rdf') {
      // feedsmith returns only the items the channel's <items> table of contents lists (by
      // rdf:about, exactly) whenever any of them match; every <item> in the document is news.
      const feed = parseRdfFeed(text.replace(/<(?:[\w.-]+:)?items\b[^>]*>[\s\S]*?<\/(?:[\w.-]+:)?items\s*>/, ''));
      return collect('rdf', plain(feed.title), feed.items, (i) => rdfItem(i, ctx));
    }
    const feed = parseAtomFeed(text);
    return collect('atom', textConstruct(feed.title), feed.entries, (e) => atomEntry(e, ctx));
  } catch (e) {
    throw translate(e, format);
  }
}

/** The snippet rule: plain text cut to at most `max` characters at a word boundary, with "…" when cut. */
export function snippetOf(htmlOrText: string, max = 300, min = 100): string {
  const text = stripHtml(htmlOrText);
  if (text.length <= max || text.length < min) return text;
  const room = max - 1; // the ellipsis takes one
  let head = text.slice(0, room);
  if (text[room] !== ' ') {
    const space = head.lastIndexOf(' ');
    head = space > 0 ? head.slice(0, space) : '';
  }
  head = head.replace(/[\s,;:\-–—]+$/, '');
  // One word longer than max - min (a URL, CJK text without spaces): cut inside it rather than
  // return a too-short snippet, keeping a surrogate pair whole.
  if (head.length < min) head = text.slice(0, /[\ud800-\udbff]/.test(text[room - 1]) ? room - 1 : room).trimEnd();
  return `${head}…`;
}

/** HTML → plain text: comments, script and style removed, tags removed (block tags become spaces), entities decoded, whitespace collapsed. */
export function stripHtml(html: string): string {
  const out: string[] = [];
  const lower = html.toLowerCase();
  let i = 0;
  // A hand-written scanner rather than regexes: it is linear on hostile input (a regex for tags
  // backtracks quadratically over a long run of unclosed "<a").
  while (i < html.length) {
    const lt = html.indexOf('<', i);
    if (lt === -1) {
      out.push(html.slice(i));
      break;
    }
    out.push(html.slice(i, lt));
    const next = html[lt + 1] ?? '';
    if (html.startsWith('<!--', lt)) {
      const end = html.indexOf('-->', lt + 4);
      if (end === -1) break;
      i = end + 3;
    } else if (html.startsWith('<![CDATA[', lt)) {
      const end = html.indexOf(']]>', lt + 9);
      if (end === -1) {
        out.push(html.slice(lt + 9));
        break;
      }
      out.push(html.slice(lt + 9, end));
      i = end + 3;
    } else if (/[A-Za-z/!?]/.test(next)) {
      const end = tagEnd(html, lt + 1);
      if (end === -1) break; // an unclosed tag at the end is dropped, as browsers do
      const name = /^\/?([A-Za-z][^\s/>]*)/.exec(html.slice(lt + 1, Math.min(end, lt + 40)))?.[1]?.toLowerCase() ?? '';
      i = end + 1;
      if ((name === 'script' || name === 'style') && next !== '/') {
        const close = lower.indexOf(`</${name}`, i);
        if (close === -1) break;
        const closeEnd = html.indexOf('>', close);
        i = closeEnd === -1 ? html.length : closeEnd + 1;
        out.push(' ');
      } else if (BLOCK.has(name)) {
        out.push(' ');
      }
    } else {
      out.push('<'); // "5 < 6" is text
      i = lt + 1;
    }
  }
  return decodeHTML(out.join(''))
    .replace(/[\u00ad\u200b\ufeff\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

const BLOCK = new Set(
  (
    'address article aside blockquote br dd div dl dt figcaption figure footer h1 h2 h3 h4 h5 h6 header hr img ' +
    'li main nav ol p pre section table tbody td tfoot th thead tr ul'
  ).split(' '),
);

/** Index of the `>` closing the tag whose name starts at `from`, skipping quoted attribute values; -1 if none. */
function tagEnd(html: string, from: number): number {
  let quote = '';
  for (let j = from; j < html.length; j++) {
    const c = html[j];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '>') {
      return j;
    }
  }
  return -1;
}

// ---- decoding -------------------------------------------------------------------------------

function decodeBody(body: Uint8Array, contentType: string | null): string {
  const label = bomLabel(body) ?? headerCharset(contentType) ?? declaredEncoding(body) ?? 'utf-8';
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label);
  } catch {
    throw new FeedError(`unknown character encoding "${label}"`);
  }
  // TextDecoder drops the BOM it was chosen by; a U+FEFF left at the start is dropped here.
  let text = decoder.decode(body);
  if (decoder.encoding === 'windows-1252') text = text.replace(/[\u0080-\u009f]/g, (c) => CP1252_C1[c.charCodeAt(0) - 0x80]);
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Bytes 0x80–0x9F of windows-1252 (the WHATWG target of the latin1 / iso-8859-1 / us-ascii
 * labels too). Node 20.18.3+ and 22.13+ decode windows-1252 as ISO-8859-1, giving C1 controls
 * (0x92 → U+0092, not ’): nodejs/node#56542, #60888. Mapping C1 controls afterwards is right
 * whether or not the runtime has the bug: a correct decoder yields only the five undefined
 * bytes as C1 controls, and those map to themselves.
 */
const CP1252_C1 = [
  '\u20ac',
  '\u0081',
  '\u201a',
  '\u0192',
  '\u201e',
  '\u2026',
  '\u2020',
  '\u2021',
  '\u02c6',
  '\u2030',
  '\u0160',
  '\u2039',
  '\u0152',
  '\u008d',
  '\u017d',
  '\u008f',
  '\u0090',
  '\u2018',
  '\u2019',
  '\u201c',
  '\u201d',
  '\u2022',
  '\u2013',
  '\u2014',
  '\u02dc',
  '\u2122',
  '\u0161',
  '\u203a',
  '\u0153',
  '\u009d',
  '\u017e',
  '\u0178',
];

function bomLabel(b: Uint8Array): string | null {
  if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return 'utf-8';
  if (b[0] === 0xfe && b[1] === 0xff) return 'utf-16be';
  if (b[0] === 0xff && b[1] === 0xfe) return 'utf-16le';
  return null;
}

function headerCharset(contentType: string | null): string | null {
  const m = contentType ? /;\s*charset\s*=\s*["']?([^"';\s]+)/i.exec(contentType) : null;
  return m ? m[1] : null;
}

/**
 * The XML declaration's encoding, read from the raw bytes as Latin-1 (every ASCII-compatible
 * encoding spells the declaration the same way). A declaration readable that way cannot be in
 * UTF-16, so a "UTF-16" there is a mislabel and is ignored.
 */
function declaredEncoding(b: Uint8Array): string | null {
  const head = new TextDecoder('latin1').decode(b.subarray(0, 512));
  const m = /^\s*<\?xml\s[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(head);
  if (!m || /^utf-?16/i.test(m[1])) return null;
  return m[1];
}

// ---- format -------------------------------------------------------------------------------

/** The root element's name as written (`rss`, `rdf:RDF`, `feed`, `html`), after the prolog. */
function rootElement(text: string): string {
  let i = 0;
  for (;;) {
    while (i < text.length && /\s/.test(text[i])) i++;
    if (text.startsWith('<?', i)) {
      const end = text.indexOf('?>', i);
      if (end === -1) break;
      i = end + 2;
    } else if (text.startsWith('<!--', i)) {
      const end = text.indexOf('-->', i);
      if (end === -1) break;
      i = end + 3;
    } else if (/^<!doctype\s+html\b/i.test(text.slice(i, i + 20))) {
      throw new FeedError('an HTML page, not a feed');
    } else if (text.startsWith('<!', i)) {
      const subset = text.indexOf('[', i);
      const close = text.indexOf('>', i);
      if (close === -1) break;
      // A DOCTYPE with an internal subset ends at "]>", not at the first ">".
      const end = subset !== -1 && subset < close ? text.indexOf(']>', subset) + 1 : close;
      if (end === 0) break;
      i = end + 1;
    } else {
      break;
    }
  }
  const m = /^<([A-Za-z_][\w.:-]*)/.exec(text.slice(i, i + 100));
  if (!m) throw new FeedError(text.slice(i).trim() === '' ? 'empty document' : 'not XML: no root element');
  return m[1];
}

function formatOf(root: string): ParsedFeed['format'] {
  const local = root.slice(root.indexOf(':') + 1).toLowerCase();
  if (local === 'rss') return 'rss';
  if (local === 'rdf') return 'rdf';
  if (local === 'feed') return 'atom';
  if (local === 'html') throw new FeedError('an HTML page, not a feed');
  throw new FeedError(`not an RSS, RDF or Atom feed (root element <${root}>)`);
}

function translate(e: unknown, format: ParsedFeed['format']): Error {
  if (e instanceof FeedError) return e;
  if (e instanceof MalformedError) {
    const cause = e.cause instanceof Error ? e.cause.message : String(e.cause ?? e.message);
    return new FeedError(`malformed XML: ${cause}`);
  }
  if (e instanceof ParseError) return new FeedError(`${format} document has no channel or feed content`);
  if (e instanceof DetectError) return new FeedError(`not a valid ${format} feed`);
  return new FeedError(`unreadable ${format} feed: ${e instanceof Error ? e.message : String(e)}`);
}

// ---- items --------------------------------------------------------------------------------

interface ItemContext {
  base: string;
  now: number;
}

function collect<T>(format: ParsedFeed['format'], title: string | null, raw: T[] | undefined, map: (item: T) => FeedItem | null): ParsedFeed {
  const items: FeedItem[] = [];
  let dropped = 0;
  for (const r of raw ?? []) {
    const item = map(r);
    if (item) items.push(item);
    else dropped++;
  }
  return { format, title, items, dropped };
}

function rssItem(i: RssFeed.Item<string>, ctx: ItemContext): FeedItem | null {
  // A guid is the article's URL unless isPermaLink="false" (the RSS 2.0 default is true), and
  // only when absolute: a relative guid is an opaque id, not a path.
  const guid = i.guid?.value && i.guid.isPermaLink !== false ? canonicalUrl(i.guid.value) : null;
  return item(ctx, {
    url: resolve(i.link, ctx.base) ?? guid,
    title: plain(i.title),
    body: i.description || i.content?.encoded,
    dates: [i.pubDate, ...(i.dc?.dates ?? [])],
  });
}

function rdfItem(i: RdfFeed.Item<string>, ctx: ItemContext): FeedItem | null {
  return item(ctx, {
    url: resolve(i.link, ctx.base) ?? canonicalUrl(i.rdf?.about ?? ''),
    title: plain(i.title),
    body: i.description || i.content?.encoded,
    dates: [...(i.dc?.dates ?? [])],
  });
}

function atomEntry(e: AtomFeed.Entry<string>, ctx: ItemContext): FeedItem | null {
  const links = e.links ?? [];
  const link = links.find((l) => l.rel === 'alternate') ?? links.find((l) => !l.rel);
  // Content of another media type (type="image/png", base64) or out of line (src=) is no snippet.
  const body = [e.summary, e.content].find((t) => t?.value && ['text', 'html', 'xhtml'].includes(t.type ?? 'text'));
  return item(ctx, {
    url: resolve(link?.href, ctx.base),
    title: textConstruct(e.title),
    body: body?.value,
    dates: [e.published, e.updated, ...(e.dc?.dates ?? [])],
  });
}

function item(ctx: ItemContext, f: { url: string | null; title: string | null; body: string | undefined; dates: (string | undefined)[] }): FeedItem | null {
  if (!f.url || !f.title) return null;
  const published = f.dates.map((d) => (d ? parseFeedDate(d) : NaN)).find((t) => !Number.isNaN(t));
  const fromFeed = published !== undefined && published <= ctx.now + CLOCK_SKEW_SEC;
  return {
    url: f.url,
    title: f.title,
    snippet: f.body ? snippetOf(f.body) : '',
    publishedAt: fromFeed ? published : ctx.now,
    publishedFromFeed: fromFeed,
  };
}

/** An RSS/RDF text field is HTML in practice (titles arrive with escaped tags and entities). */
function plain(s: string | undefined): string | null {
  return s ? stripHtml(s) || null : null;
}

/** An Atom text construct: type="html"/"xhtml" is markup, type="text" (the default) is already text. */
function textConstruct(t: AtomFeed.Text | undefined): string | null {
  if (!t?.value) return null;
  const text = t.type === 'html' || t.type === 'xhtml' ? stripHtml(t.value) : t.value.replace(/\s+/g, ' ').trim();
  return text || null;
}

function resolve(link: string | undefined, base: string): string | null {
  if (!link?.trim()) return null;
  try {
    return canonicalUrl(new URL(link.trim(), base).href);
  } catch {
    return null; // neither absolute nor resolvable against the feed URL
  }
}

// ---- dates --------------------------------------------------------------------------------

/** RFC 822 zone names, plus the ones outlets write anyway. Any other name (military letters included) counts as UTC: hours off beats days off. */
const ZONES: Record<string, number> = {
  ut: 0,
  utc: 0,
  gmt: 0,
  z: 0,
  wet: 0,
  est: -5,
  edt: -4,
  cst: -6,
  cdt: -5,
  mst: -7,
  mdt: -6,
  pst: -8,
  pdt: -7,
  akst: -9,
  akdt: -8,
  hst: -10,
  bst: 1,
  cet: 1,
  cest: 2,
  west: 1,
  met: 1,
  mest: 2,
  eet: 2,
  eest: 3,
  msk: 3,
  jst: 9,
  kst: 9,
  aest: 10,
  aedt: 11,
};

const RFC822 =
  /^(?:[A-Za-z]+,?\s*)?(\d{1,2})[\s-]+([A-Za-z]{3,})\.?[\s-]+(\d{4}|\d{2})\s+(\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?\s*([A-Za-z]+|[+-]\d{2}:?\d{2})?$/;
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt]|\s+)(\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?\s*([Zz]|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?$|^(\d{4})-(\d{2})-(\d{2})$/;

/** Unix seconds of an RFC 822 (RSS) or RFC 3339 / W3C-DTF (Atom, dc:date) date; NaN if neither. A time without a zone is UTC. */
export function parseFeedDate(raw: string): number {
  const s = raw.trim();
  let m = RFC3339.exec(s);
  if (m) {
    if (m[8]) return utc(+m[8], +m[9], +m[10], 0, 0, 0, 0);
    return utc(+m[1], +m[2], +m[3], +m[4], +m[5], +(m[6] ?? 0), offsetMinutes(m[7]));
  }
  m = RFC822.exec(s);
  if (m) {
    const month = monthIndex(m[2]) + 1;
    if (month === 0) return NaN;
    const year = m[3].length === 2 ? (+m[3] < 50 ? 2000 : 1900) + +m[3] : +m[3];
    return utc(year, month, +m[1], +m[4], +m[5], +(m[6] ?? 0), offsetMinutes(m[7]));
  }
  return NaN;
}

function offsetMinutes(zone: string | undefined): number {
  if (!zone) return 0;
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
  if (m) return (m[1] === '-' ? -1 : 1) * (+m[2] * 60 + +(m[3] ?? 0));
  return (ZONES[zone.toLowerCase()] ?? 0) * 60;
}

function utc(year: number, month: number, day: number, h: number, min: number, sec: number, offsetMin: number): number {
  if (month < 1 || month > 12 || h > 23 || min > 59 || sec > 60) return NaN;
  const ms = Date.UTC(year, month - 1, day, h, min, Math.min(sec, 59));
  if (new Date(ms).getUTCDate() !== day) return NaN; // 31 June, 30 February
  return Math.floor(ms / 1000) - offsetMin * 60;
}
