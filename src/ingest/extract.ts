/**
 * Pulls the headline, main text and dates out of a fetched article page, for chunking and embedding.
 *
 *   extractArticle('<html>…<script type="application/ld+json">{"@type":"NewsArticle","headline":"Port strike ends",
 *     "articleBody":"Dock workers returned on Monday.\nShips …","datePublished":"2024-03-07T07:55:25Z"}</script>…',
 *     'https://example.com/a')
 *   → { title: 'Port strike ends', text: 'Dock workers returned on Monday.\n\nShips …', source: 'json-ld',
 *       publishedAt: 1709798125, modifiedAt: null, canonicalUrl: 'https://example.com/a' }   (given <link rel=canonical>)
 *
 * The publisher's own JSON-LD `articleBody` is preferred: it is the text they mean, without page furniture. Many
 * publishers leave it out (the captured AP and Reuters pages both do), so Readability over a linkedom document is the
 * fallback. Metadata (headline, dates, canonical URL) comes from JSON-LD and <meta>/<link> in either case.
 */
import { Readability, isProbablyReaderable } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { parseTime } from '../time.js';

export interface ExtractedArticle {
  /** JSON-LD article headline, else og:title, else Readability's title; null when none. */
  title: string | null;
  /** Main text: paragraphs joined by "\n\n", whitespace inside a paragraph collapsed; '' when nothing was found. */
  text: string;
  source: 'json-ld' | 'readability' | 'none';
  /** Unix seconds: JSON-LD datePublished, else <meta article:published_time>. */
  publishedAt: number | null;
  /** Unix seconds: JSON-LD dateModified, else <meta article:modified_time>. */
  modifiedAt: number | null;
  /** <link rel="canonical"> resolved against the page URL, else JSON-LD url / mainEntityOfPage. */
  canonicalUrl: string | null;
}

/** Longer pages are cut here (UTF-16 code units, about bytes for markup): parse and Readability time grow with size. */
export const MAX_HTML_CHARS = 5 * 1024 * 1024;

/**
 * Readability is skipped on pages with more elements than this (after the strip below). Its cost grows faster than
 * the element count (a 6,500-element shop page takes seconds); the captured news pages have 400-1,000.
 * Readability's own maxElemsToParse cannot do this: it counts with getElementsByTagName('*'), which is 0 in linkedom.
 */
const MAX_READABILITY_ELEMENTS = 5000;

/** schema.org types whose articleBody is the article text (NewsArticle's subtypes included). */
const ARTICLE_TYPES = new Set([
  'Article',
  'NewsArticle',
  'ReportageNewsArticle',
  'AnalysisNewsArticle',
  'OpinionNewsArticle',
  'BackgroundNewsArticle',
  'ReviewNewsArticle',
  'BlogPosting',
]);

/**
 * Removed before Readability: never article text, and a large share of the nodes Readability would score. svg matters
 * beyond speed: Readability does not count it as phrasing content, so a link holding an icon (Reuters' "opens new tab"
 * arrow) splits its paragraph into three. Visually hidden elements are screen-reader hints (", opens new tab").
 * form is kept: ASP.NET pages wrap the whole body in one.
 */
const STRIP_BEFORE_READABILITY = [
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'iframe',
  'nav',
  'footer',
  'aside',
  'button',
  'select',
  'textarea',
  'input',
  '.sr-only',
  '.visually-hidden',
  '.visuallyhidden',
  '.screen-reader-text',
  '[style*="clip:rect(0 0 0 0)"]',
  '[style*="clip: rect(0 0 0 0)"]',
].join(',');

/** Elements that start and end a paragraph when Readability's content is turned into text. */
const BLOCK = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'caption',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'tbody',
  'td',
  'tfoot',
  'th',
  'thead',
  'tr',
  'ul',
]);
/** Elements whose text is never article text. */
const SKIP = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'math',
  'iframe',
  'object',
  'embed',
  'canvas',
  'button',
  'select',
  'textarea',
  'input',
  'head',
  'title',
  'meta',
  'link',
]);

/** Short paragraphs that are page furniture Readability sometimes keeps (English, German, French, Spanish). */
const BOILERPLATE =
  /^(?:advertisement|advertising|sponsored(?: content)?|anzeige|werbung|publicité|publicidad|read more|read next|continue reading|related(?: articles| stories| content)?|share(?: this(?: article| story)?)?|subscribe|sign up|skip to (?:main )?content|by [^.!?]+)[.:…]*$/i;
const BOILERPLATE_MAX = 25;

const EMPTY: ExtractedArticle = { title: null, text: '', source: 'none', publishedAt: null, modifiedAt: null, canonicalUrl: null };

type JsonObject = Record<string, unknown>;

/** Extracts an article from an HTML page. Never throws on odd markup: returns source 'none' and text ''. */
export function extractArticle(html: string, pageUrl: string): ExtractedArticle {
  try {
    return extract(typeof html === 'string' ? html : '', pageUrl);
  } catch {
    return { ...EMPTY };
  }
}

/** A fetched page's bytes → an article: decoded (decodeHtml), then extractArticle. What the ingest parse workers run. */
export function extractPage(body: Uint8Array, contentType: string | null, pageUrl: string): ExtractedArticle {
  return extractArticle(decodeHtml(body, contentType), pageUrl);
}

/** Page bytes → text: the charset of Content-Type, else of a <meta> near the top, else UTF-8. */
export function decodeHtml(body: Uint8Array, contentType: string | null): string {
  const head = Buffer.from(body.subarray(0, 2048)).toString('latin1');
  const label = /charset\s*=\s*["']?([\w.:-]+)/i.exec(contentType ?? '')?.[1] ?? /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(label).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

function extract(html: string, pageUrl: string): ExtractedArticle {
  if (html.length > MAX_HTML_CHARS) {
    // Do not leave half a surrogate pair at the cut.
    const end = isHighSurrogate(html.charCodeAt(MAX_HTML_CHARS - 1)) ? MAX_HTML_CHARS - 1 : MAX_HTML_CHARS;
    html = html.slice(0, end);
  }
  // A fresh document per call: Readability rewrites the one it is given.
  const document = parseDocument(dropRawText(html));
  if (!document) return { ...EMPTY };

  // Everything read from the head happens before Readability, which removes scripts and more.
  const objects = jsonLdObjects(document);
  const articles = objects.filter((o) => typesOf(o).some((t) => ARTICLE_TYPES.has(t)));
  const withBody = articles.find((o) => bodyString(o.articleBody) !== '');
  const ld = withBody ?? articles[0];
  const meta = metaContents(document);

  const result: ExtractedArticle = {
    title: cleanTitle(ld?.headline, document) ?? cleanTitle(meta.get('og:title'), null),
    text: '',
    source: 'none',
    publishedAt: firstTime(ld?.datePublished, meta.get('article:published_time')),
    modifiedAt: firstTime(ld?.dateModified, meta.get('article:modified_time')),
    canonicalUrl: canonicalLink(document, pageUrl) ?? ldUrl(ld, pageUrl),
  };

  if (withBody) {
    const paragraphs = bodyParagraphs(bodyString(withBody.articleBody), document);
    if (paragraphs.length > 0) return { ...result, text: paragraphs.join('\n\n'), source: 'json-ld' };
  }

  try {
    for (const el of document.querySelectorAll(STRIP_BEFORE_READABILITY)) el.remove();
    if (document.querySelectorAll('*').length > MAX_READABILITY_ELEMENTS) return result;
    // Cheap (a few ms): it turns away search results, shop listings and similar pages before the costly parse.
    if (!isProbablyReaderable(document)) return result;
    const parsed = new Readability<Element>(document, { serializer: (node) => node as Element, disableJSONLD: true }).parse();
    if (parsed) {
      result.title ??= cleanTitle(parsed.title, null);
      const paragraphs = parsed.content ? blockParagraphs(parsed.content).filter((p) => !isBoilerplate(p)) : [];
      if (paragraphs.length > 0) return { ...result, text: paragraphs.join('\n\n'), source: 'readability' };
    }
  } catch {
    // Readability or linkedom choked on this markup: the metadata found so far still stands.
  }
  return result;
}

const RAW_OPEN = /<(script|style|svg)(?=[\s/>])([^>]{0,2000})>/gi;
const RAW_CLOSE: Record<string, RegExp> = { script: /<\/script\s*>/gi, style: /<\/style\s*>/gi, svg: /<\/svg\s*>/gi };

/**
 * Cuts script (all but JSON-LD), style and svg elements out of the markup before it is parsed: they are a third of a
 * typical news page's bytes and most of its nodes, and parse time follows both (the AP page parses in about half the
 * time). Script and style end at their first end tag, as in any HTML parser; an element with no end tag is left in,
 * and the DOM strip before Readability removes it. Linear: every match and search moves forward.
 */
function dropRawText(html: string): string {
  let out = '';
  let last = 0;
  RAW_OPEN.lastIndex = 0;
  for (let m = RAW_OPEN.exec(html); m !== null; m = RAW_OPEN.exec(html)) {
    const name = m[1].toLowerCase();
    if (name === 'svg' && m[2].endsWith('/')) continue;
    const close = RAW_CLOSE[name];
    close.lastIndex = RAW_OPEN.lastIndex;
    const end = close.exec(html);
    if (end === null) break;
    if (!(name === 'script' && /ld\+json/i.test(m[2]))) {
      out += html.slice(last, m.index);
      last = close.lastIndex;
    }
    RAW_OPEN.lastIndex = close.lastIndex;
  }
  return last === 0 ? html : out + html.slice(last);
}

/**
 * linkedom builds no implied <html>/<body>: a page without an <html> element gets its first element as the
 * documentElement ("<title>" on a bare fragment), and one with no element at all throws. Such pages are wrapped.
 */
function parseDocument(html: string): Document | null {
  try {
    const { document } = parseHTML(html);
    if (document.documentElement?.localName.toLowerCase() === 'html') return document;
  } catch {
    // fall through to the wrapped parse
  }
  try {
    return parseHTML(`<!DOCTYPE html><html><head></head><body>${html}</body></html>`).document;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// JSON-LD

/** Every top-level object of every JSON-LD block: arrays and @graph flattened, blocks that do not parse skipped. */
function jsonLdObjects(document: Document): JsonObject[] {
  const out: JsonObject[] = [];
  const add = (value: unknown, depth: number): void => {
    if (depth > 3) return;
    if (Array.isArray(value)) for (const v of value) add(v, depth + 1);
    else if (isObject(value)) {
      out.push(value);
      if (value['@graph'] !== undefined) add(value['@graph'], depth + 1);
    }
  };
  for (const script of document.querySelectorAll('script')) {
    const type = (script.getAttribute('type') ?? '').trim().toLowerCase();
    if (!type.startsWith('application/ld+json')) continue;
    const parsed = parseJsonLenient(script.textContent ?? '');
    if (parsed !== undefined) add(parsed, 0);
  }
  return out;
}

/**
 * JSON.parse, then a second try that undoes what CMSs commonly do to JSON-LD: HTML comment or CDATA wrappers, a
 * trailing semicolon, and raw newlines or tabs inside strings (invalid JSON; in articleBody they mark paragraphs).
 */
function parseJsonLenient(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // try the repaired text
  }
  const stripped = text
    .trim()
    .replace(/^(?:\/\/\s*)?(?:<!--|<!\[CDATA\[)/, '')
    .replace(/(?:\/\/\s*)?(?:-->|\]\]>)$/, '')
    .trim()
    .replace(/;$/, '');
  try {
    return JSON.parse(escapeControlCharsInStrings(stripped));
  } catch {
    return undefined;
  }
}

function escapeControlCharsInStrings(text: string): string {
  let out = '';
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      else if (c < ' ') {
        out += c === '\n' ? '\\n' : c === '\r' ? '\\r' : c === '\t' ? '\\t' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
        continue;
      }
    } else if (c === '"') inString = true;
    out += c;
  }
  return out;
}

/** '@type' as plain names: "NewsArticle", ["NewsArticle"] and "http://schema.org/NewsArticle" all give NewsArticle. */
function typesOf(o: JsonObject): string[] {
  const t = o['@type'];
  const list = Array.isArray(t) ? t : [t];
  return list.filter((x): x is string => typeof x === 'string').map((x) => x.trim().replace(/^.*[/:#]/, ''));
}

function bodyString(body: unknown): string {
  if (typeof body === 'string') return body.trim();
  if (Array.isArray(body))
    return body
      .filter((b): b is string => typeof b === 'string')
      .join('\n\n')
      .trim();
  return '';
}

/**
 * articleBody is mostly one plain string, paragraphs (if marked at all) by newlines; some CMSs put HTML in it.
 * Entities are decoded either way.
 */
function bodyParagraphs(body: string, document: Document): string[] {
  if (/<\/?(?:p|br|div|h[1-6]|li|ul|ol|blockquote)\b[^>]*>/i.test(body)) {
    const holder = document.createElement('div');
    holder.innerHTML = body;
    return blockParagraphs(holder);
  }
  return body
    .split(/\s*\n\s*/)
    .map((p) => collapse(decodeEntities(p, document)))
    .filter(hasWordCharacter);
}

/** Decodes HTML entities (the full HTML5 table, via linkedom's parser) in text that holds no markup. */
function decodeEntities(text: string, document: Document): string {
  if (!text.includes('&')) return text;
  const holder = document.createElement('div');
  holder.innerHTML = text.replace(/</g, '&lt;');
  return holder.textContent ?? text;
}

// ---------------------------------------------------------------------------------------------------------------
// Head metadata

/** content of each <meta>, keyed by its property or name in lower case; the first occurrence wins. */
function metaContents(document: Document): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of document.querySelectorAll('meta')) {
    const content = m.getAttribute('content');
    if (!content) continue;
    for (const key of [m.getAttribute('property'), m.getAttribute('name')]) {
      if (key && !out.has(key.trim().toLowerCase())) out.set(key.trim().toLowerCase(), content);
    }
  }
  return out;
}

function cleanTitle(value: unknown, document: Document | null): string | null {
  if (typeof value !== 'string') return null;
  const title = collapse(document ? decodeEntities(value, document) : value);
  return title === '' ? null : title;
}

/** Unix seconds of the first value that parses. A date-time without an offset is taken as UTC (AP's <meta> has none). */
function firstTime(...values: unknown[]): number | null {
  for (const v of values) {
    if (typeof v !== 'string' || v.trim() === '') continue;
    let s = v.trim();
    if (/^\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?$/.test(s)) s += 'Z';
    const t = parseTime(s);
    if (Number.isFinite(t)) return t;
  }
  return null;
}

function canonicalLink(document: Document, pageUrl: string): string | null {
  for (const link of document.querySelectorAll('link[rel]')) {
    const rel = (link.getAttribute('rel') ?? '').toLowerCase().split(/\s+/);
    if (!rel.includes('canonical')) continue;
    const url = absoluteUrl(link.getAttribute('href'), pageUrl);
    if (url) return url;
  }
  return null;
}

function ldUrl(ld: JsonObject | undefined, pageUrl: string): string | null {
  if (!ld) return null;
  const page = ld.mainEntityOfPage;
  const candidates = [ld.url, page, isObject(page) ? page['@id'] : undefined, isObject(page) ? page.url : undefined];
  for (const c of candidates) {
    const url = typeof c === 'string' ? absoluteUrl(c, pageUrl) : null;
    if (url) return url;
  }
  return null;
}

/** http(s) URL of href resolved against the page; null for anything else. */
function absoluteUrl(href: string | null, base: string): string | null {
  if (!href || href.trim() === '') return null;
  let url: URL;
  try {
    url = new URL(href.trim(), base);
  } catch {
    try {
      url = new URL(href.trim());
    } catch {
      return null;
    }
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
}

// ---------------------------------------------------------------------------------------------------------------
// Content HTML → paragraphs

/**
 * Text of root as paragraphs: every block element starts a new one, inline text joins the current one.
 * Iterative, so deeply nested markup cannot overflow the stack.
 */
function blockParagraphs(root: Node): string[] {
  const out: string[] = [];
  let buf = '';
  const flush = (): void => {
    const p = collapse(buf);
    if (hasWordCharacter(p)) out.push(p);
    buf = '';
  };
  // Entries are nodes to enter, or null: "a block element ends here".
  const stack: (Node | null)[] = [];
  const pushChildren = (node: Node): void => {
    const children: Node[] = [];
    for (let c = node.firstChild; c; c = c.nextSibling) children.push(c);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  };
  pushChildren(root);
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null) {
      flush();
      continue;
    }
    if (node === undefined) break;
    if (node.nodeType === 3) {
      buf += node.textContent ?? '';
      continue;
    }
    if (node.nodeType !== 1) continue;
    const name = ((node as Element).localName ?? '').toLowerCase();
    if (SKIP.has(name)) continue;
    if (name === 'br') {
      buf += ' ';
      continue;
    }
    if (BLOCK.has(name)) {
      flush();
      stack.push(null);
    }
    pushChildren(node);
  }
  flush();
  return out;
}

function isBoilerplate(paragraph: string): boolean {
  return paragraph.length < BOILERPLATE_MAX && BOILERPLATE.test(paragraph);
}

// ---------------------------------------------------------------------------------------------------------------

function collapse(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** Drops separator-only paragraphs ("___", "* * *"). */
function hasWordCharacter(s: string): boolean {
  return /[\p{L}\p{N}]/u.test(s);
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
