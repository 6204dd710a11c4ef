/**
 * A publisher's article page: JSON-LD (`NewsArticle` and its kin) first, the markup second,
 * field by field: a field the JSON-LD lacks is read from the markup (Reuters' JSON-LD has no
 * articleSection; its section comes from `article:section`).
 *
 * Checked against real pages (test/fixtures/pages/PROVENANCE.md, publisher/): Reuters 2024
 * (`data-testid="paragraph-N"` body) and AP 2024 (`.RichTextStoryBody > p`).
 */
import { decodeHTML } from 'entities';
import { isoInstant } from '../dates.js';
import { clean, first, hasType, isObj, jsonLd, obj, type Json } from '../json-ld.js';
import { absoluteUrl, assertNotRobotCheck, loadPage, ScrapeError, shownText, textOf } from '../page.js';

export interface Article {
  headline: string;
  /** The authors as a byline reads: "A", "A and B", "A, B and C"; null without authors. */
  byline: string | null;
  authors: string[];
  published_at: string | null;
  modified_at: string | null;
  section: string | null;
  canonical_url: string;
  description: string | null;
  image_url: string | null;
  /** Body paragraphs in order, non-empty, without ads, related links or newsletter boxes. */
  body: string[];
}

/** Schema.org types read as an article, best first. */
const ARTICLE_TYPES = ['NewsArticle', 'ReportageNewsArticle', 'AnalysisNewsArticle', 'OpinionNewsArticle', 'BackgroundNewsArticle', 'Article', 'BlogPosting'];

/** Body paragraph selectors by layout, most specific first. */
const BODY = ['[data-testid^="paragraph-"]', '.RichTextStoryBody > p', 'article p'];

/** Boxes inside an article body that are not the story. */
const NOT_BODY = 'aside, figure, figcaption, nav, footer, form, [class*="newsletter" i], [class*="related" i], [class*="advert" i], [data-ad], [class~="ad"]';

/**
 * The article on a publisher page, `pageUrl` the address it was read from (relative links and
 * a missing canonical resolve against it). Throws ScrapeError on a robot check and on a page
 * with neither an article in its JSON-LD nor a headline (h1) and body paragraphs.
 */
export function parseArticle(html: string, pageUrl: string): Article {
  const doc = loadPage(html);
  assertNotRobotCheck(doc);
  const ld = articleLd(doc);
  const h1 = textOf(doc.querySelector('h1'));
  const body = bodyParagraphs(doc);
  if (!ld && !(h1 && body.length)) throw new ScrapeError('neither a NewsArticle (JSON-LD) nor a headline with body paragraphs: not an article page');

  const meta = (name: string) => {
    const v = doc.querySelector(`meta[property="${name}"], meta[name="${name}"]`)?.getAttribute('content')?.trim();
    return v ? v : null;
  };
  const authors = ld ? ldNames(ld.author) : [];
  if (!authors.length) authors.push(...markupAuthors(doc, meta('author') ?? meta('article:author')));
  const time = doc.querySelector('article time[datetime], time[datetime], article time[dateTime], time[dateTime]');

  const headline = str(ld?.headline) ?? h1 ?? meta('og:title');
  if (!headline) throw new ScrapeError('an article without a headline (JSON-LD headline, h1 or og:title)');
  return {
    headline,
    byline: joinNames(authors),
    authors,
    published_at:
      isoInstant(str(ld?.datePublished)) ??
      isoInstant(meta('article:published_time')) ??
      isoInstant(time?.getAttribute('datetime') ?? time?.getAttribute('dateTime')),
    modified_at: isoInstant(str(ld?.dateModified)) ?? isoInstant(meta('article:modified_time')),
    section: str(first(ld?.articleSection)) ?? meta('article:section'),
    canonical_url:
      absoluteUrl(ldId(ld?.mainEntityOfPage) ?? str(ld?.url) ?? doc.querySelector('link[rel="canonical"]')?.getAttribute('href') ?? meta('og:url'), pageUrl) ??
      pageUrl,
    description: str(ld?.description) ?? meta('og:description') ?? meta('description'),
    image_url: absoluteUrl(ldImage(ld?.image) ?? meta('og:image'), pageUrl),
    // The markup's paragraphs before articleBody: articleBody is often one flattened blob, or
    // cut short on metered pages.
    body: body.length ? body : ldBody(ld?.articleBody),
  };
}

// ---------------------------------------------------------------------------------------------
// JSON-LD

function articleLd(doc: Document): Json | null {
  const nodes = jsonLd(doc);
  for (const type of ARTICLE_TYPES) {
    const hit = nodes.find((n) => hasType(n, type));
    if (hit) return hit;
  }
  return null;
}

/** A JSON-LD string, entities decoded (some sites escape them twice), whitespace collapsed. */
function str(v: unknown): string | null {
  return typeof v === 'string' ? clean(decodeHTML(v)) : null;
}

/** Names of a Person/Organization, a string, or an array of either. */
function ldNames(v: unknown): string[] {
  const list = Array.isArray(v) ? v : v == null ? [] : [v];
  const names = list.map((a) => (typeof a === 'string' ? str(a) : str(obj(a)?.name))).filter((n): n is string => !!n);
  return [...new Set(names.map((n) => n.replace(/^by\s+/i, '')))];
}

function ldId(v: unknown): string | null {
  if (Array.isArray(v)) return ldId(v[0]);
  return str(v) ?? str(obj(v)?.['@id']) ?? str(obj(v)?.url);
}

/** The first image: a URL string, an ImageObject (`url`, else `contentUrl`), or an array of either. */
function ldImage(v: unknown): string | null {
  if (Array.isArray(v)) return v.map(ldImage).find(Boolean) ?? null;
  if (isObj(v)) return str(v.url) ?? str(v.contentUrl);
  return str(v);
}

/** articleBody split on its line breaks; one paragraph when it has none. */
function ldBody(v: unknown): string[] {
  if (typeof v !== 'string') return [];
  return decodeHTML(v)
    .split(/\n+/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
}

// ---------------------------------------------------------------------------------------------
// Markup

/** The body paragraphs of the first layout that has any. */
function bodyParagraphs(doc: Document): string[] {
  for (const sel of BODY) {
    const ps = [...doc.querySelectorAll(sel)]
      .filter((p) => !p.closest(NOT_BODY))
      .map(shownText)
      .filter((t): t is string => !!t);
    if (ps.length) return ps;
  }
  return [];
}

/**
 * Text a reader sees: screen-reader-only spans (Reuters appends ", opens new tab" to outbound
 * links in a clipped span), scripts and styles left out.
 */
/**
 * Authors from the markup: the `author` meta (names, comma-separated as Reuters writes
 * `article:author`; a URL there is a profile, not a name), else a byline element.
 */
function markupAuthors(doc: Document, metaAuthor: string | null): string[] {
  if (metaAuthor && !/^https?:/i.test(metaAuthor)) return splitByline(metaAuthor);
  const el = doc.querySelector('.Page-authors, [rel="author"], [class*="byline" i] [class*="author" i], [class*="byline" i], [data-testid*="byline" i]');
  return splitByline(textOf(el) ?? '');
}

/** "By A, B and C" → ["A", "B", "C"]. */
function splitByline(text: string): string[] {
  const names = text
    .replace(/^\s*by\s+/i, '')
    .split(/\s*,\s*|\s+and\s+|\s*&\s*/i)
    .map((n) => n.trim())
    .filter(Boolean);
  return [...new Set(names)];
}

function joinNames(names: string[]): string | null {
  if (names.length <= 1) return names[0] ?? null;
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}
