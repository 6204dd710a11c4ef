/**
 * The marketplace product page : `GET /v1/product` reads price,
 * availability, gallery, bullets, description, breadcrumb categories, best-sellers rank,
 * specification tables, identifiers, variants and book formats from one detail page;
 * `GET /v1/product/reviews` reads the reviews the page shows without sign-in (usually 8 to 13).
 *
 * Two layouts are read: the current one (checked against a 2026 capture: `#corePrice…`,
 * `#feature-bullets`, the `#prodDetails` tables, the inline twister, `data-hook="review"` cards
 * with `reviewRichContentContainer`) and the old one books still show (a 2018 capture: media
 * tabs `#mediaTab_heading_N`, a rent/buy accordion, `#productDetailsTable` list with
 * `li#SalesRank`, `data-hook="review-body"`). See test/fixtures/pages/PROVENANCE.md.
 */
import { shownDay } from '../dates.js';
import { assertNotRobotCheck, loadPage, renderedText, ScrapeError } from '../page.js';
import { parsePrice } from './countries.js';
import type { PageContext } from './types.js';

export interface ProductPage {
  asin: string;
  title: string;
  /** `{origin}/dp/{asin}`. */
  url: string;
  brand: string | null;
  price_text: string | null;
  price: number | null;
  currency: string;
  original_price_text: string | null;
  original_price: number | null;
  /** The rent price of the old books layout's rent/buy box ("Rent $19.60"); null elsewhere. */
  rent_price_text: string | null;
  rent_price: number | null;
  availability: string | null;
  rating: number | null;
  ratings_count: number | null;
  images: string[];
  bullets: string[];
  description: string | null;
  breadcrumbs: string[];
  best_sellers_rank: { rank: number; category: string }[];
  specifications: Record<string, string>;
  identifiers: { asin: string; isbn_10?: string; isbn_13?: string; upc?: string; ean?: string; model?: string };
  variants: { asin: string; label: string; selected: boolean }[];
  book_formats: { format: string; price_text: string | null; price: number | null; selected: boolean }[];
  seller: { name: string; id: string | null } | null;
}

export interface Review {
  id: string;
  title: string | null;
  rating: number | null;
  author: string | null;
  /** The date as the page writes it ("July 8, 2026"). */
  date_text: string | null;
  /** YYYY-MM-DD when parseable. */
  date: string | null;
  /** "United States" from "Reviewed in the United States on …"; null when the page does not say. */
  location: string | null;
  verified_purchase: boolean;
  body: string;
  helpful_votes: number | null;
  /** The variant the reviewer bought, as the page writes it ("Color: white", "Format: Paperback"). */
  variant: string | null;
}

const ASIN_RE = /^[A-Z0-9]{10}$/;
/** Invisible marks the detail lists put around their colons. */
const MARKS = /[\u200b-\u200f\u202a-\u202e\u2060\ufeff]/g;

/** Collapsed text without marks; null when empty. */
const clean = (s: string | null | undefined): string | null => {
  const t = s
    ?.replace(MARKS, '')
    .replace(/[\s\u00a0]+/g, ' ')
    .trim();
  return t ? t : null;
};

/** Visible text of an element (renderedText); with `lines`, each line collapsed and empty ones dropped, else all on one line. */
function visibleText(el: Element | null | undefined, lines = false): string | null {
  if (!el) return null;
  const raw = renderedText(el);
  if (!lines) return clean(raw);
  const out = raw
    .split('\n')
    .map((l) => clean(l))
    .filter((l): l is string => l !== null);
  return out.length ? out.join('\n') : null;
}

const first = (doc: Document | Element, selectors: string[]): Element | null => {
  for (const s of selectors) {
    const el = doc.querySelector(s);
    if (el) return el;
  }
  return null;
};

/** The first element among the selectors whose visible text is not empty. */
const firstText = (root: Document | Element, selectors: string[]): string | null => {
  for (const s of selectors) {
    for (const el of Array.from(root.querySelectorAll(s))) {
      const t = visibleText(el);
      if (t) return t;
    }
  }
  return null;
};

/** A number read from "4.2 out of 5 stars" / "4,2 von 5 Sternen". */
const ratingOf = (text: string | null | undefined): number | null => {
  const m = text?.match(/(\d+(?:[.,]\d+)?)/);
  if (!m) return null;
  const n = Number(m[1].replace(',', '.'));
  return Number.isFinite(n) && n >= 0 && n <= 5 ? n : null;
};

/** A whole count from "(226)", "621 customer reviews", "1.234 ratings". */
const countOf = (text: string | null | undefined): number | null => {
  const m = text?.match(/\d[\d.,\s\u00a0]*/);
  if (!m) return null;
  const n = Number(m[0].replace(/\D/g, ''));
  return Number.isFinite(n) ? n : null;
};

/** Text of a `span.a-price`: its offscreen copy, else the visible symbol, whole and fraction parts. */
function priceTextOf(el: Element | null): string | null {
  if (!el) return null;
  if (!el.classList.contains('a-price')) return visibleText(el);
  const off = visibleText(el.querySelector('.a-offscreen'));
  if (off) return off;
  return visibleText(el.querySelector('[aria-hidden="true"]')) ?? null;
}

function titleOf(doc: Document): string | null {
  for (const s of ['#productTitle', '#ebooksProductTitle', '#btAsinTitle', 'h1#title']) {
    for (const el of Array.from(doc.querySelectorAll(s))) {
      const t = el.tagName === 'INPUT' ? clean(el.getAttribute('value')) : visibleText(el);
      if (t) return t;
    }
  }
  return null;
}

/** The document, checked to be a product page. */
function productDocument(html: string): { doc: Document; title: string } {
  const doc = loadPage(html);
  assertNotRobotCheck(doc);
  const title = titleOf(doc);
  if (!title) {
    const pageTitle = clean(doc.querySelector('title')?.textContent)?.slice(0, 80) ?? 'untitled';
    throw new ScrapeError(`no product title on the page: "${pageTitle}" is not a product detail page`);
  }
  return { doc, title };
}

// ---------------------------------------------------------------------------------------------
// Specification tables and detail lists

/** Keys that are not specifications: they are read into their own fields. */
const NOT_SPEC = /^(customer reviews|average customer review|(amazon )?best ?sellers rank)$/i;

function specKey(text: string | null): string | null {
  const k = clean(text)
    ?.replace(/\s*:\s*$/, '')
    .trim();
  return k ? k : null;
}

/** key → value from the tables and detail-bullet lists, first occurrence wins. */
function readSpecifications(doc: Document): { specs: Record<string, string>; rankEls: Element[] } {
  // Keys come from the page: a null prototype keeps `__proto__` or `constructor` plain keys.
  const specs: Record<string, string> = Object.create(null);
  const rankEls: Element[] = [];
  const put = (key: string | null, value: string | null, el: Element) => {
    if (!key) return;
    if (/best ?sellers rank/i.test(key)) {
      rankEls.push(el);
      return;
    }
    if (NOT_SPEC.test(key) || !value || Object.hasOwn(specs, key)) return;
    specs[key] = value;
  };
  const rows = doc.querySelectorAll(
    [
      '#productOverview_feature_div tr',
      '#productDetails_techSpec_section_1 tr',
      '#productDetails_techSpec_section_2 tr',
      '#productDetails_detailBullets_sections1 tr',
      '#technicalSpecifications_section_1 tr',
      '#prodDetails tr',
    ].join(', '),
  );
  for (const tr of Array.from(rows)) {
    const cells = Array.from(tr.children).filter((c) => c.tagName === 'TH' || c.tagName === 'TD');
    if (cells.length < 2) continue;
    put(specKey(visibleText(cells[0])), visibleText(cells[cells.length - 1]), cells[cells.length - 1]);
  }
  const items = doc.querySelectorAll('#detailBullets_feature_div li, #detailBulletsWrapper_feature_div li, #detail-bullets li, #productDetailsTable li');
  for (const li of Array.from(items)) {
    if (li.closest('.zg_hrsr')) continue; // the sub-ranks nested in li#SalesRank
    const bold = li.querySelector('.a-text-bold, b');
    const full = visibleText(li);
    if (!full) continue;
    let key: string | null;
    let value: string | null;
    if (bold && visibleText(bold)) {
      key = specKey(visibleText(bold));
      const boldText = visibleText(bold)!;
      value = clean(full.startsWith(boldText) ? full.slice(boldText.length) : full.replace(boldText, ''));
    } else {
      const i = full.indexOf(':');
      if (i <= 0) continue;
      key = specKey(full.slice(0, i));
      value = clean(full.slice(i + 1));
    }
    value = value?.replace(/^[:\s]+/, '').replace(/\s*\(View shipping rates and policies\)\s*$/i, '') || null;
    put(key, value, li);
  }
  return { specs, rankEls };
}

/** "#5,211 in Cell Phones & Accessories (See Top 100 …) #309 in Portable Power Banks" → ranks. */
function readRanks(els: Element[]): { rank: number; category: string }[] {
  const out: { rank: number; category: string }[] = [];
  const seen = new Set<string>();
  for (const el of els) {
    const text = visibleText(el) ?? '';
    for (const m of text.matchAll(/#\s?([\d.,]+)\s+(?:in der|in den|dans|in|en)\s+([^#(]+?)(?=\s*\(|\s*#|$)/g)) {
      const rank = Number(m[1].replace(/[.,]/g, ''));
      const category = clean(m[2]);
      if (!Number.isFinite(rank) || !category) continue;
      const key = `${rank} ${category}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ rank, category });
    }
  }
  return out;
}

function readIdentifiers(asin: string, specs: Record<string, string>): ProductPage['identifiers'] {
  const ids: ProductPage['identifiers'] = { asin };
  const get = (re: RegExp) => {
    for (const [k, v] of Object.entries(specs)) if (re.test(k)) return v;
    return undefined;
  };
  const isbn10 = get(/^ISBN-?10$/i)?.replace(/[\s-]/g, '');
  const isbn13 = get(/^ISBN-?13$/i)?.replace(/[\s-]/g, '');
  const upc = get(/^UPC$/i);
  const ean = get(/^(EAN|GTIN)$/i);
  const model = get(/^item model number$/i) ?? get(/^model number$/i) ?? get(/^(manufacturer|mfr) part number$/i);
  if (isbn10) ids.isbn_10 = isbn10;
  if (isbn13) ids.isbn_13 = isbn13;
  if (upc) ids.upc = upc;
  if (ean) ids.ean = ean;
  if (model) ids.model = model;
  return ids;
}

// ---------------------------------------------------------------------------------------------
// The product page

function readAsin(doc: Document, specs: Record<string, string>): string | null {
  const candidates = [
    doc.querySelector('input#ASIN')?.getAttribute('value'),
    doc.querySelector('input[name="ASIN"]')?.getAttribute('value'),
    doc.querySelector('#averageCustomerReviews[data-asin]')?.getAttribute('data-asin'),
    doc.querySelector('[data-csa-c-asin]')?.getAttribute('data-csa-c-asin'),
    doc
      .querySelector('link[rel="canonical"]')
      ?.getAttribute('href')
      ?.match(/\/dp\/([A-Z0-9]{10})/)?.[1],
    specs.ASIN,
    doc.querySelector('[data-defaultasin]')?.getAttribute('data-defaultasin'),
  ];
  for (const c of candidates) {
    const t = c?.trim();
    if (t && ASIN_RE.test(t)) return t;
  }
  return null;
}

const CORE_PRICE = ['#corePriceDisplay_desktop_feature_div', '#corePrice_desktop', '#corePrice_feature_div', '#apex_desktop'];

function readPrice(doc: Document): string | null {
  const selectors: string[] = [];
  for (const c of CORE_PRICE) selectors.push(`${c} .priceToPay`, `${c} .apex-pricetopay-value`);
  for (const c of CORE_PRICE) selectors.push(`${c} span.a-price:not([data-a-strike="true"])`);
  for (const s of selectors) {
    for (const el of Array.from(doc.querySelectorAll(s))) {
      const t = priceTextOf(el);
      if (t && /\d/.test(t)) return t;
    }
  }
  return firstText(doc, [
    '#priceblock_dealprice',
    '#priceblock_ourprice',
    '#priceblock_saleprice',
    '#price_inside_buybox',
    '#newBuyBoxPrice',
    '#kindle-price',
    '#mediaAccordion .a-accordion-active .header-price',
    '#newOfferAccordionRow .header-price',
    '#buyNewSection .offer-price',
    '#mediaTab_content_landing .header-price',
  ]);
}

function readOriginalPrice(doc: Document): string | null {
  const selectors: string[] = [];
  for (const c of CORE_PRICE) selectors.push(`${c} .basisPrice span.a-price`, `${c} span.a-price[data-a-strike="true"]`);
  for (const s of selectors) {
    for (const el of Array.from(doc.querySelectorAll(s))) {
      const t = priceTextOf(el);
      if (t && /\d/.test(t)) return t;
    }
  }
  return firstText(doc, [
    '#priceblock_listprice',
    '#listPrice',
    '.priceBlockStrikePriceString',
    '#mediaAccordion .a-accordion-active .a-text-strike',
    '#buyNewSection .a-text-strike',
    '#mediaTab_content_landing .a-text-strike',
  ]);
}

function readAvailability(doc: Document): string | null {
  const t = firstText(doc, ['#availability', '#availability_feature_div', '#outOfStock', '#mediaAccordion .a-accordion-active .a-color-success']);
  return t ? t.replace(/\.$/, '') : null;
}

/** The largest picture of a `data-a-dynamic-image` map. */
function largestDynamic(el: Element): string | null {
  const raw = el.getAttribute('data-a-dynamic-image');
  if (!raw) return null;
  try {
    const map = JSON.parse(raw) as Record<string, [number, number]>;
    let best: string | null = null;
    let area = -1;
    for (const [url, size] of Object.entries(map)) {
      const a = Array.isArray(size) ? Number(size[0]) * Number(size[1]) : 0;
      if (a > area) {
        area = a;
        best = url;
      }
    }
    return best;
  } catch {
    return null;
  }
}

/** The image id in an m.media-amazon.com URL (".../I/81lAsPSu2FL._AC_SL1500_.jpg" → 81lAsPSu2FL). */
const imageId = (url: string) => url.match(/\/images\/I\/([^./]+)/)?.[1] ?? url;
/** A thumbnail's full-size URL: the size modifiers dropped. */
const fullSize = (url: string) => url.replace(/(\/images\/I\/[^./]+)\.[^/]*?\.(jpe?g|png|gif|webp)$/i, '$1.$2');

function readImages(doc: Document, origin: string): string[] {
  const out: string[] = [];
  const ids = new Set<string>();
  const add = (url: string | null | undefined) => {
    const u = url?.trim();
    if (!u || u.startsWith('data:') || /grey-pixel|transparent-pixel/.test(u)) return;
    const abs = new URL(u, origin).href;
    const id = imageId(abs);
    if (ids.has(id)) return;
    ids.add(id);
    out.push(abs);
  };
  const block = '#main-image-container, #imageBlock, #imageBlock_feature_div, #imgTagWrapperId, #ppd';
  const hires = Array.from(doc.querySelectorAll('[data-old-hires]')).filter((e) => e.closest(block));
  for (const el of hires) add(el.getAttribute('data-old-hires') || largestDynamic(el));
  if (out.length === 0) {
    const main = first(doc, ['#landingImage', '#imgBlkFront', '#ebooksImgBlkFront', '#main-image', '#imgTagWrapperId img']);
    if (main) add(largestDynamic(main) ?? main.getAttribute('src'));
  }
  if (out.length <= 1) {
    const had = out.length;
    const thumbs = Array.from(doc.querySelectorAll('#altImages li, #imageBlockThumbs .imageThumb, #imageBlockThumbs li')).filter(
      (li) => !/video/i.test(li.className),
    );
    thumbs.forEach((li, i) => {
      if (i === 0 && had > 0 && /variant-MAIN|itemNo0/.test(li.className)) return; // the main picture, already read
      const src = li.querySelector('img')?.getAttribute('src');
      if (src && !/play-icon|sprite/i.test(src)) add(fullSize(src));
    });
  }
  return out;
}

function readBullets(doc: Document): string[] {
  let items = Array.from(doc.querySelectorAll('#feature-bullets li:not(.aok-hidden) span.a-list-item'));
  if (items.length === 0)
    items = Array.from(doc.querySelectorAll('#featurebullets_feature_div li span.a-list-item, #productFactsDesktopExpander li span.a-list-item'));
  const out: string[] = [];
  for (const el of items) {
    if (el.closest('.aok-hidden, #replacementPartsFitmentBullet')) continue;
    const t = visibleText(el);
    if (t && !out.includes(t)) out.push(t);
  }
  return out;
}

function decodeBookDescription(html: string): string | null {
  const m = html.match(/bookDescEncodedData\s*=\s*"([^"]*)"/);
  if (!m) return null;
  try {
    return visibleText(loadPage(`<div>${decodeURIComponent(m[1])}</div>`).querySelector('div'), true);
  } catch {
    return null;
  }
}

function readDescription(doc: Document, html: string): string | null {
  const book = readBookDescription(doc, html);
  if (book) return book;
  const plain = visibleText(doc.querySelector('#productDescription'), true);
  if (plain) return plain;
  const pqv = doc.querySelector('#pqv-description');
  if (pqv) {
    const body = Array.from(pqv.children).filter((c) => !/^H\d$/.test(c.tagName));
    const t = body
      .map((c) => visibleText(c, true))
      .filter(Boolean)
      .join('\n');
    if (t) return t;
  }
  return null;
}

/** The books layout's description: a noscript copy, else the iframe's encoded data. */
function readBookDescription(doc: Document, html: string): string | null {
  const book = doc.querySelector('#bookDescription_feature_div');
  if (book) {
    const ns = book.querySelector('noscript');
    if (ns) {
      const raw = ns.textContent ?? '';
      const t = ns.children.length
        ? visibleText(wrapChildren(ns), true)
        : raw.includes('<')
          ? visibleText(loadPage(`<div>${raw}</div>`).querySelector('div'), true)
          : clean(raw);
      if (t) return t;
    }
    const decoded = decodeBookDescription(html);
    if (decoded) return decoded;
    const t = visibleText(book.querySelector('#bookDescription_feature_div > div') ?? book, true);
    if (t) return t;
  }
  return null;
}

/** A noscript's children read as ordinary content (visibleText skips noscript itself). */
function wrapChildren(el: Element): Element {
  const div = el.ownerDocument.createElement('div');
  for (const c of Array.from(el.childNodes)) div.appendChild(c.cloneNode(true));
  return div;
}

function readBreadcrumbs(doc: Document): string[] {
  const out: string[] = [];
  for (const a of Array.from(doc.querySelectorAll('#wayfinding-breadcrumbs_feature_div a, #wayfinding-breadcrumbs_container a'))) {
    if (a.id === 'breadcrumb-back-link') continue;
    const t = visibleText(a);
    if (t && !/^back to /i.test(t)) out.push(t);
  }
  return out;
}

function readBrand(doc: Document, specs: Record<string, string>): string | null {
  const byline = visibleText(doc.querySelector('#bylineInfo'));
  const m = byline?.match(/^Visit the (.+?) Store$/i) ?? byline?.match(/^Brand:\s*(.+)$/i);
  if (m) return clean(m[1]);
  return specs.Brand ?? specs['Brand Name'] ?? null;
}

function readSeller(doc: Document): ProductPage['seller'] {
  const link = doc.querySelector('#sellerProfileTriggerId');
  const name = visibleText(link);
  if (link && name) {
    const href = link.getAttribute('href') ?? '';
    const id = href.match(/[?&]seller=([A-Z0-9]+)/)?.[1] ?? null;
    return { name, id };
  }
  const info = firstText(doc, [
    '#merchant-info',
    '#merchantInfoFeature_feature_div .offer-display-feature-text',
    '#tabular-buybox .tabular-buybox-text[tabular-attribute-name="Sold by"]',
  ]);
  const m = info?.match(/sold by\s+(.+?)(?:\s+and\s+(?:is\s+)?fulfilled\b|\.\s|\.$|$)/i);
  const sold = clean(m?.[1]);
  return sold ? { name: sold, id: null } : null;
}

function readVariants(doc: Document, asin: string): ProductPage['variants'] {
  const out: ProductPage['variants'] = [];
  const seen = new Set<string>();
  const scope = '#twister, #twister_feature_div, #twisterContainer, #twister-plus-inline-twister, #inline-twister-expander-content-color_name';
  const items = Array.from(doc.querySelectorAll('li[data-asin], li[data-defaultasin], [data-defaultasin]')).filter((li) => li.closest(scope));
  for (const li of items) {
    let v = li.getAttribute('data-asin') || li.getAttribute('data-defaultasin') || '';
    if (!ASIN_RE.test(v)) v = li.getAttribute('data-dp-url')?.match(/\/dp\/([A-Z0-9]{10})/)?.[1] ?? '';
    if (!ASIN_RE.test(v) || seen.has(v)) continue;
    const title = li.getAttribute('title')?.replace(/^Click to select\s*/i, '');
    const label =
      clean(li.querySelector('img[alt]')?.getAttribute('alt')) ??
      visibleText(li.querySelector('.swatch-title-text-display, .swatch-title-text, .twisterTextDiv, .a-button-text')) ??
      clean(title) ??
      visibleText(li);
    if (!label) continue;
    seen.add(v);
    const selected =
      li.getAttribute('data-initiallyselected') === 'true' ||
      /\bswatchSelected\b|\bselected\b/.test(li.className) ||
      !!li.querySelector('.a-button-selected') ||
      v === asin;
    out.push({ asin: v, label, selected });
  }
  // the dropdown twister: <option value="1,B0XXXXXXXX">Large</option>
  for (const opt of Array.from(doc.querySelectorAll('#twister select option, #twister_feature_div select option'))) {
    const v = opt.getAttribute('value')?.match(/(?:^|,)([A-Z0-9]{10})$/)?.[1];
    const label = visibleText(opt);
    if (!v || !label || seen.has(v)) continue;
    seen.add(v);
    out.push({ asin: v, label, selected: opt.hasAttribute('selected') || v === asin });
  }
  // only the page's own item may be selected when the markup marks several
  if (out.filter((o) => o.selected).length > 1) for (const o of out) o.selected = o.asin === asin;
  return out;
}

function readBookFormats(doc: Document): ProductPage['book_formats'] {
  const out: ProductPage['book_formats'] = [];
  const tabs = Array.from(doc.querySelectorAll('li[id^="mediaTab_heading_"]')).filter((li) => !/\b(otherSellers|olpLink|mediaMatrix)\b/.test(li.className));
  for (const li of tabs) {
    const format = visibleText(li.querySelector('.mediaTab_title'));
    if (!format) continue;
    const price_text = visibleText(li.querySelector('.mediaTab_subtitle'));
    out.push({ format, price_text, price: parsePrice(price_text), selected: li.classList.contains('a-active') });
  }
  if (out.length) return out;
  const swatches = Array.from(doc.querySelectorAll('#tmmSwatches .swatchElement, #tmmSwatches li, [id^="tmm-grid-swatch-"]'));
  const seen = new Set<Element>();
  for (const sw of swatches) {
    if (seen.has(sw) || Array.from(seen).some((s) => s.contains(sw) || sw.contains(s))) continue;
    seen.add(sw);
    const format = visibleText(sw.querySelector('.slot-title, .a-button-text > span:first-child')) ?? null;
    if (!format) continue;
    const price_text = visibleText(sw.querySelector('.slot-price, .a-color-price, .a-color-secondary'));
    out.push({ format, price_text, price: parsePrice(price_text), selected: /\bselected\b/.test(sw.className) });
  }
  return out;
}

export function parseProductPage(html: string, ctx: PageContext): ProductPage {
  const { doc, title } = productDocument(html);
  const { specs, rankEls } = readSpecifications(doc);
  const salesRank = doc.querySelector('li#SalesRank, #SalesRank');
  if (salesRank && !rankEls.includes(salesRank)) rankEls.unshift(salesRank);
  const asin = readAsin(doc, specs);
  if (!asin) throw new ScrapeError('no ASIN on the product page');
  const price_text = readPrice(doc);
  const original_price_text = readOriginalPrice(doc);
  const rent_price_text = firstText(doc, ['#rentPrice', '#rentOfferAccordionRow .header-price']);
  const ratingEl = doc.querySelector('#acrPopover');
  const rating = ratingOf(
    ratingEl?.getAttribute('title') ??
      visibleText(ratingEl?.querySelector('.a-icon-alt')) ??
      visibleText(doc.querySelector('#averageCustomerReviews .a-icon-alt')),
  );
  return {
    asin,
    title,
    url: `${ctx.origin.replace(/\/$/, '')}/dp/${asin}`,
    brand: readBrand(doc, specs),
    price_text,
    price: parsePrice(price_text),
    currency: ctx.currency,
    original_price_text,
    original_price: parsePrice(original_price_text),
    rent_price_text,
    rent_price: parsePrice(rent_price_text),
    availability: readAvailability(doc),
    rating,
    ratings_count: countOf(firstText(doc, ['#acrCustomerReviewText'])),
    images: readImages(doc, ctx.origin),
    bullets: readBullets(doc),
    description: readDescription(doc, html),
    breadcrumbs: readBreadcrumbs(doc),
    best_sellers_rank: readRanks(rankEls),
    specifications: specs,
    identifiers: readIdentifiers(asin, specs),
    variants: readVariants(doc, asin),
    book_formats: readBookFormats(doc),
    seller: readSeller(doc),
  };
}

// ---------------------------------------------------------------------------------------------
// Reviews

function reviewBody(card: Element): string {
  const rich = card.querySelector('[data-hook="reviewRichContentContainer"]');
  const old = card.querySelector('[data-hook="review-body"]');
  const el = rich ?? old?.querySelector('[data-hook="review-collapsed"]') ?? old;
  const text = visibleText(el, true) ?? '';
  return text
    .split('\n')
    .filter((l) => !/^(Read more|Read less)$/i.test(l))
    .join('\n')
    .trim();
}

function helpfulVotes(card: Element): number | null {
  const statement = visibleText(card.querySelector('[data-hook="helpful-vote-statement"]'));
  if (statement) {
    if (/^(one|a) person/i.test(statement)) return 1;
    return countOf(statement);
  }
  return card.querySelector('[data-hook="helpfulVoteWidget"], [data-hook="review-voting-widget"], [data-hook="helpfulVoteButton"]') ? 0 : null;
}

export function parseProductReviews(html: string): Review[] {
  const { doc } = productDocument(html);
  const out: Review[] = [];
  const seen = new Set<string>();
  for (const card of Array.from(doc.querySelectorAll('div[data-hook="review"]'))) {
    const id =
      card.id ||
      card.getAttribute('data-csa-c-slot-id')?.replace(/^customer_review-/, '') ||
      card.querySelector('[id^="customer_review-"]')?.id.replace(/^customer_review-/, '') ||
      '';
    if (!id || seen.has(id)) continue;
    const body = reviewBody(card);
    if (!body) continue;
    seen.add(id);
    const titleEl = card.querySelector('[data-hook="reviewTitle"], [data-hook="review-title"]');
    let title: string | null = null;
    if (titleEl) {
      const copy = wrapChildren(titleEl);
      copy.querySelectorAll('.a-icon-alt, i, .a-letter-space').forEach((e) => e.remove());
      title = visibleText(copy);
    }
    const stars = card.querySelector('[data-hook="review-star-rating"], [data-hook="cmps-review-star-rating"], i[class*="a-star-"]');
    const rating = ratingOf(visibleText(stars?.querySelector('.a-icon-alt') ?? stars) ?? stars?.className.match(/a-star-(\d)/)?.[1]);
    const dateLine = visibleText(card.querySelector('[data-hook="review-date"]'));
    const where = dateLine?.match(/^Reviewed in (?:the )?(.+?) on (.+)$/i);
    const date_text = where ? clean(where[2]) : dateLine;
    out.push({
      id,
      title,
      rating,
      author: visibleText(card.querySelector('.a-profile-name')),
      date_text,
      date: shownDay(date_text),
      location: where ? clean(where[1]) : null,
      verified_purchase:
        !!card.querySelector('[data-hook="avp-badge"], [data-hook="avp-badge-linkless"]') ||
        /\bVerified Purchase\b/.test(visibleText(card.querySelector('.review-format-strip, [data-hook="product-variation-attributes"]')) ?? ''),
      body,
      helpful_votes: helpfulVotes(card),
      variant: visibleText(card.querySelector('[data-hook="format-strip"], [data-hook="format-strip-linkless"]')),
    });
  }
  return out;
}
