/**
 * The marketplace best-sellers page (`GET /v1/bestsellers`: one page of
 * 30 ranked products, 2 pages per category, plus the category's subcategories; 8.3).
 *
 * Layout (zg-grid / p13n, 2022 amazon.com and amazon.de captures, test/fixtures/pages/PROVENANCE.md):
 * - an item is a `div#gridItemRoot` (the id repeats), in rank order;
 * - rank: `span.zg-bdg-text` ("#1");
 * - ASIN: the faceout `div.p13n-sc-uncoverable-faceout` carries it as its id (older pages: a
 *   `[data-asin]`), and every product link is `/…/dp/<ASIN>/ref=…`;
 * - the grid's `data-client-recs-list` attribute is JSON listing `{ id, metadataMap:
 *   { "render.zg.rank" } }` for the whole list (50 entries on page 1, of which the first 30 are
 *   rendered): it fills an ASIN or rank the markup lacks;
 * - price: the element whose class is `p13n-sc-price`, or a hashed `_cDEzb_p13n-sc-price_3mJ9Z`
 *   (never its `…p13n-sc-price-animation-wrapper…` parent); "1 offer from $59.99" /
 *   "2 Angebote ab 47,58 €" items give that lowest offer price;
 * - rating: `span.a-icon-alt` ("4.6 out of 5 stars", "4,4 von 5 Sternen"), and the count next to
 *   the stars in the same reviews link ("132,223", "92.284");
 * - the heading `h1` "Best Sellers in Tools & Home Improvement" / "Bestseller in Elektronik & Foto";
 * - the left navigation tree (`role="tree"`, hashed `zg-browse-root` class): the current category
 *   is the `zg-selected` span; its subcategories are the links of the `role="group"` right after
 *   it, `/…/zgbs/<dept>/<node_id>/ref=…` (.com) or `/gp/bestsellers/<dept>/<node_id>/ref=…` (.de).
 *   The older `ul#zg_browseRoot` tree (`span.zg_selected`, the children in the next `ul`) is read too.
 */
import { assertNotRobotCheck, imageUrl, loadPage, ScrapeError, textOf } from '../page.js';
import { parsePrice } from './countries.js';
import type { Card, PageContext } from './types.js';

/** A ranked product: the result card's fields a best-sellers page shows, and its rank. */
export interface BestsellerItem extends Pick<Card, 'asin' | 'title' | 'url' | 'price_text' | 'price' | 'currency' | 'rating' | 'ratings_count' | 'image_url'> {
  rank: number;
}

export interface BestsellersPage {
  /** The category the page ranks, e.g. "Tools & Home Improvement"; null when the page names none. */
  category: string | null;
  /** The category's browse node id (from the canonical link); null for a top-level department. */
  node_id: string | null;
  items: BestsellerItem[];
  /** The categories one level below the current one, from the left navigation tree. */
  subcategories: { name: string; url: string; node_id: string | null }[];
}

const ITEM = 'div#gridItemRoot, div[id="gridItemRoot"]';
const RECS = '[data-client-recs-list]';
const ASIN = /^[A-Z0-9]{10}$/;
/** Products a best-sellers page shows. */
const PER_PAGE = 30;

/**
 * One best-sellers page. Throws ScrapeError on a robot check, and on a page with neither a
 * best-seller item (`#gridItemRoot`) nor the grid's `data-client-recs-list` (layout change, or
 * not a best-sellers page).
 */
export function parseBestsellers(html: string, ctx: PageContext): BestsellersPage {
  const doc = loadPage(html);
  assertNotRobotCheck(doc);
  const origin = siteOrigin(ctx.origin);

  const els = uniqueElements([...doc.querySelectorAll(ITEM)]);
  const recsEls = [...doc.querySelectorAll(RECS)];
  if (els.length === 0 && recsEls.length === 0) {
    throw new ScrapeError('no best-seller items on the page: the layout changed or the page is not a best-sellers page');
  }
  const recs = readRecs(recsEls);

  let items: BestsellerItem[];
  if (els.length) {
    items = els.map((el, i) => parseItem(el, i, recs, origin, ctx.currency));
  } else {
    // The grid's items are not in the markup (rendered client-side): the recs list still ranks
    // them, ids only. It lists 50 (the page renders 30 of them, the rest load on scroll): the
    // first 30, as the page shows.
    items = recs.list.slice(0, PER_PAGE).map((r) => ({
      rank: r.rank,
      asin: r.asin,
      title: '',
      url: `${origin}/dp/${r.asin}`,
      price_text: null,
      price: null,
      currency: ctx.currency,
      rating: null,
      ratings_count: null,
      image_url: null,
    }));
  }
  items = items.filter((it) => it.asin !== '');
  if (els.length && items.length === 0) {
    throw new ScrapeError('no best-seller items on the page: the items carry no product id');
  }

  const nav = readNav(doc, origin);
  return {
    category: readCategory(doc) ?? nav.selected,
    node_id: readNodeId(doc),
    items,
    subcategories: nav.children,
  };
}

/** "https://www.amazon.de/" → "https://www.amazon.de". */
function siteOrigin(origin: string): string {
  try {
    return new URL(origin).origin;
  } catch {
    return origin.replace(/\/+$/, '');
  }
}

/** The repeated-id query may (depending on the DOM) return an element twice: keep the first. */
function uniqueElements(els: Element[]): Element[] {
  return [...new Set(els)];
}

// ---------------------------------------------------------------------------------------------
// The recs list

interface Recs {
  list: { asin: string; rank: number }[];
  rankOf: Map<string, number>;
  asinAt: Map<number, string>;
}

/** `data-client-recs-list`: `[{ "id": "B08N5NQ869", "metadataMap": { "render.zg.rank": "1" } }, …]`. */
function readRecs(els: Element[]): Recs {
  const recs: Recs = { list: [], rankOf: new Map(), asinAt: new Map() };
  for (const el of els) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(el.getAttribute('data-client-recs-list') ?? '');
    } catch {
      continue;
    }
    if (!Array.isArray(parsed)) continue;
    parsed.forEach((entry: unknown, i: number) => {
      if (!entry || typeof entry !== 'object') return;
      const e = entry as { id?: unknown; metadataMap?: Record<string, unknown> };
      const asin = typeof e.id === 'string' ? e.id.trim().toUpperCase() : '';
      if (!ASIN.test(asin) || recs.rankOf.has(asin)) return;
      const r = Number(e.metadataMap?.['render.zg.rank']);
      const rank = Number.isInteger(r) && r > 0 ? r : i + 1;
      recs.list.push({ asin, rank });
      recs.rankOf.set(asin, rank);
      if (!recs.asinAt.has(rank)) recs.asinAt.set(rank, asin);
    });
  }
  return recs;
}

// ---------------------------------------------------------------------------------------------
// An item

function parseItem(el: Element, index: number, recs: Recs, origin: string, currency: string): BestsellerItem {
  const badgeRank = readRank(el);
  let asin = readAsin(el);
  if (!asin && badgeRank !== null) asin = recs.asinAt.get(badgeRank) ?? '';
  // The visible badge wins; without one, the recs list's rank for this ASIN, else the page order.
  const rank = badgeRank ?? (asin ? recs.rankOf.get(asin) : undefined) ?? index + 1;
  const img = el.querySelector('img');
  const price_text = readPrice(el);
  return {
    rank,
    asin,
    title: readTitle(el, img),
    url: asin ? `${origin}/dp/${asin}` : '',
    price_text,
    price: parsePrice(price_text),
    currency,
    rating: readRating(el),
    ratings_count: readRatingsCount(el),
    image_url: imageUrl(img, origin),
  };
}

/** "#1" → 1 (also "Nr. 1", "1."). */
function readRank(el: Element): number | null {
  const t = textOf(el.querySelector('.zg-bdg-text, .zg-badge-text'));
  const m = t?.match(/(\d[\d.,]*)/);
  if (!m) return null;
  const n = Number(m[1]!.replace(/[.,]/g, ''));
  return Number.isInteger(n) && n > 0 ? n : null;
}

/** `[data-asin]`, the faceout's id, else the first `/dp/<ASIN>` link. */
function readAsin(el: Element): string {
  for (const e of el.querySelectorAll('[data-asin]')) {
    const a = (e.getAttribute('data-asin') ?? '').trim().toUpperCase();
    if (ASIN.test(a)) return a;
  }
  const own = (el.getAttribute('data-asin') ?? '').trim().toUpperCase();
  if (ASIN.test(own)) return own;
  for (const e of el.querySelectorAll('.p13n-sc-uncoverable-faceout[id]')) {
    const id = (e.getAttribute('id') ?? '').trim().toUpperCase();
    if (ASIN.test(id)) return id;
  }
  for (const a of el.querySelectorAll('a[href]')) {
    const m = (a.getAttribute('href') ?? '').match(/\/(?:dp|gp\/product)\/([A-Z0-9]{10})(?:[/?#]|$)/i);
    if (m) return m[1]!.toUpperCase();
  }
  return '';
}

/**
 * The clamped title line (its `title` attribute on older truncated titles), else a product
 * link's text, else the image's alt (cut short on these pages). Zero-width spaces, which some
 * titles carry ("(2. Generation) \u200b\u200b…mit MagSafe"), are dropped.
 */
function readTitle(el: Element, img: Element | null): string {
  const clamp = el.querySelector('[class*="p13n-sc-css-line-clamp"], [class*="p13n-sc-truncate"], [class*="p13n-sc-line-clamp"]');
  const candidates = [clamp?.getAttribute('title'), clamp?.textContent];
  for (const a of el.querySelectorAll('a[href*="/dp/"]')) {
    if (a.querySelector('img') || priceElements(a).length) continue;
    candidates.push(a.textContent);
  }
  candidates.push(img?.getAttribute('alt'));
  for (const c of candidates) {
    const t = cleanText(c);
    if (t) return t;
  }
  return '';
}

function cleanText(t: string | null | undefined): string {
  return (t ?? '')
    .replace(/[\u200b-\u200d\u2060\ufeff]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Class `p13n-sc-price` or a hashed `_cDEzb_p13n-sc-price_3mJ9Z`, not `…p13n-sc-price-animation-wrapper…`. */
const PRICE_CLASS = /^(?:_[A-Za-z0-9]+_)?p13n-sc-price(?:_[A-Za-z0-9]+)?$/;

function priceElements(root: Element): Element[] {
  return [...root.querySelectorAll('[class*="p13n-sc-price"]')].filter((e) => [...e.classList].some((c) => PRICE_CLASS.test(c)));
}

/** The item's (lowest) price as written, e.g. "$59.99", "24,99 €". */
function readPrice(el: Element): string | null {
  for (const e of priceElements(el)) {
    const t = textOf(e);
    if (t && parsePrice(t) !== null) return t;
  }
  // A class renamed around the same stem: the innermost element with it that holds a price.
  for (const e of el.querySelectorAll('[class*="p13n-sc-price"]')) {
    if (e.querySelector('[class*="p13n-sc-price"]')) continue;
    const t = textOf(e);
    if (t && parsePrice(t) !== null) return t;
  }
  return null;
}

/** "4.6 out of 5 stars", "4,4 von 5 Sternen", "5つ星のうち4.5". */
function readRating(el: Element): number | null {
  const texts = [
    ...[...el.querySelectorAll('.a-icon-alt')].map((e) => e.textContent ?? ''),
    ...[...el.querySelectorAll('a[title]')].map((e) => e.getAttribute('title') ?? ''),
  ];
  for (const t of texts) {
    const m = t.match(/(\d(?:[.,]\d)?)\s*(?:out of|von|de|sur|van|su|di|z|av|na)\s*5/i) ?? t.match(/5つ星のうち\s*(\d(?:[.,]\d)?)/);
    if (m) {
      const n = Number(m[1]!.replace(',', '.'));
      if (n >= 0 && n <= 5) return n;
    }
  }
  return null;
}

/** The count next to the stars, written with thousands marks: "132,223", "92.284", "1 234". */
function readRatingsCount(el: Element): number | null {
  const star = el.querySelector('i[class*="a-icon-star"], .a-icon-alt');
  const row = star?.closest('a[href*="product-reviews"], .a-icon-row, .a-row') ?? null;
  if (!row) return null;
  for (const e of row.querySelectorAll('span.a-size-small, a.a-size-small, span')) {
    if (e.children.length || e.closest('.a-icon-alt, i')) continue;
    const n = parseCount(textOf(e));
    if (n !== null) return n;
  }
  return null;
}

function parseCount(text: string | null): number | null {
  if (!text) return null;
  const t = text.replace(/[()\u00a0\u202f]/g, ' ').trim();
  if (!/^\d{1,3}(?:[.,\s']\d{3})+$|^\d+$/.test(t)) return null;
  return Number(t.replace(/\D/g, ''));
}

// ---------------------------------------------------------------------------------------------
// Heading, node id, navigation tree

/** Heading prefixes by locale: "Best Sellers in X", "Bestseller in X", "Los más vendidos en X", … */
const HEADING =
  /^(?:Amazon\s+)?(?:Best\s*Sellers?|Bestsellers?|Los más vendidos|Más vendidos|Meilleures ventes|I più venduti|Bästsäljare|Bestsellery|Najlepiej sprzedające się)\s+(?:in|en|dans|dans la catégorie|em|nella categoria|in der Kategorie|i|w)\s*[:：]?\s*(.+)$/i;

/** The heading's category name ("Best Sellers in Tools & Home Improvement" → "Tools & Home Improvement"). */
function readCategory(doc: Document): string | null {
  for (const h of doc.querySelectorAll('h1')) {
    const t = textOf(h);
    const m = t?.match(HEADING);
    if (m) return m[1]!.trim();
    const jp = t?.match(/^(.+?)\s*の\s*売れ筋ランキング$/);
    if (jp) return jp[1]!.trim();
  }
  return null;
}

/** `/zgbs/<dept>/<node>` or `/gp/bestsellers/<dept>/<node>` → node; a department alone has none. */
function nodeFromHref(href: string | null | undefined): string | null {
  const m = href?.match(/\/(?:zgbs|gp\/bestsellers)\/[^/?#]+\/(\d+)(?:[/?#]|$)/);
  return m ? m[1]! : null;
}

/** The page's own node id: from the canonical link, else `og:url`. */
function readNodeId(doc: Document): string | null {
  const canonical = doc.querySelector('link[rel="canonical"]')?.getAttribute('href') ?? doc.querySelector('meta[property="og:url"]')?.getAttribute('content');
  return nodeFromHref(canonical);
}

/** A link without its `/ref=…` tracking segment and query, made absolute. */
function cleanUrl(href: string, origin: string): string {
  try {
    const u = new URL(href, `${origin}/`);
    u.pathname = u.pathname.replace(/\/ref=[^/]*$/, '');
    u.search = '';
    u.hash = '';
    return u.href;
  } catch {
    return href;
  }
}

function readNav(doc: Document, origin: string): { selected: string | null; children: BestsellersPage['subcategories'] } {
  const links: Element[] = [];
  let selected: Element | null = null;

  // 2021+ p13n tree: `[role="tree"]` with hashed `zg-browse-*` classes.
  const trees = [...doc.querySelectorAll('[role="tree"], [class*="zg-browse-root"]')];
  for (const tree of trees) {
    selected = tree.querySelector('[class*="zg-selected"]');
    if (!selected) continue;
    const item = selected.closest('[role="treeitem"]') ?? selected.parentElement;
    let group = item?.nextElementSibling ?? null;
    while (group && group.getAttribute('role') !== 'group' && !/zg-browse-group/.test(group.className)) group = group.nextElementSibling;
    if (group) {
      for (const child of group.children) {
        const a = child.matches('a[href]') ? child : child.querySelector(':scope > a[href]');
        if (a) links.push(a);
      }
    }
    break;
  }

  // Older `ul#zg_browseRoot` tree.
  if (!selected) {
    const root = doc.querySelector('#zg_browseRoot');
    selected = root?.querySelector('.zg_selected') ?? null;
    const li = selected?.closest('li');
    const ul = li?.nextElementSibling;
    if (ul && ul.tagName === 'UL') {
      for (const child of ul.children) {
        const a = child.querySelector(':scope > a[href]');
        if (a) links.push(a);
      }
    }
  }

  const children: BestsellersPage['subcategories'] = [];
  for (const a of links) {
    const name = textOf(a);
    const href = a.getAttribute('href');
    if (!name || !href) continue;
    children.push({ name, url: cleanUrl(href, origin), node_id: nodeFromHref(href) });
  }
  return { selected: textOf(selected), children };
}
