/**
 * The marketplace search results page (result cards: types.ts): every
 * `div[data-component-type="s-search-result"][data-asin]` card becomes a `Card`, in page order.
 * The seller storefront (a search filtered by `me=<seller>`) uses the same card markup.
 *
 * Three layouts are read, checked against captures (test/fixtures/pages/PROVENANCE.md):
 * - 2026 amazon.com ("puis" cards: `data-cy="title-recipe"`, `price-recipe`, `delivery-recipe`,
 *   `secondary-offer-recipe`; stars `a-icon-star-mini`; the count on an `aria-label="381 ratings"`
 *   link; sponsored label `puis-sponsored-label-text`; the delivery block `udm-delivery-block`);
 * - 2022 amazon.de in an English session (grid cards; stars `a-icon-star-small`; the count on a
 *   `span[aria-label="111"]`; sponsored label `s-sponsored-label-text`; prices "€2.95");
 * - 2020 amazon.com storefront (list cards like 2022, no sponsored cards).
 *
 * Sponsored cards are flagged by markup only (class `AdHolder`, the sponsored label), never by
 * the word "Sponsored" in the text: embedded JSON, ad-feedback popovers and image alts carry
 * the word too (PROVENANCE.md).
 */
import { assertNotRobotCheck, imageUrl, loadPage, ScrapeError, textOf } from '../page.js';
import { parsePrice } from './countries.js';
import type { Card, PageContext } from './types.js';

const CARD = 'div[data-component-type="s-search-result"][data-asin]';

/** Parts of a card that repeat product content in side sheets and popovers: never read. */
const ASIDE = '[id^="pc-side-sheet"], .s-pc-container-side-sheet, .a-popover-preload';

/** "No results for …" and its older and localized forms. */
const NO_RESULTS_TEXT =
  /\bno results for\b|did not match any products|keine ergebnisse für|no hay resultados para|aucun résultat pour|geen resultaten voor|に一致する商品はありませんでした/i;

/**
 * Result cards of a search (or storefront search) page, in page order, `position` 1-based in
 * the returned list. With `dropSponsored`, sponsored cards are left out before numbering.
 *
 * Throws ScrapeError on a robot check, and on a page that has neither a result card nor an
 * explicit "no results" message (layout change, or not a search page). An explicit no-results
 * page gives [].
 */
export function parseSearchResults(html: string, ctx: PageContext, opts: { dropSponsored?: boolean } = {}): Card[] {
  const doc = loadPage(html);
  assertNotRobotCheck(doc);
  const origin = siteOrigin(ctx.origin);

  const els = [...doc.querySelectorAll(CARD)].filter((el) => (el.getAttribute('data-asin') ?? '').trim() !== '');
  if (els.length === 0) {
    if (isNoResultsPage(doc)) return [];
    throw new ScrapeError('no search result cards on the page: the layout changed or the page is not a search page');
  }

  const cards: Card[] = [];
  for (const el of els) {
    const card = parseCard(el, origin, ctx.currency);
    if (opts.dropSponsored && card.sponsored) continue;
    card.position = cards.length + 1;
    cards.push(card);
  }
  return cards;
}

function parseCard(el: Element, origin: string, currency: string): Card {
  const asin = (el.getAttribute('data-asin') ?? '').trim();
  const titleEl = findTitle(el);
  const img = findImage(el);
  const { price_text, original_price_text } = readPrices(el);
  const price = parsePrice(price_text);

  return {
    position: 0,
    asin,
    title: textOf(titleEl) ?? stripAdPrefix(img?.getAttribute('alt')) ?? '',
    url: productUrl(titleLink(el, titleEl), origin, asin),
    price_text,
    price,
    currency,
    original_price_text,
    original_price: parsePrice(original_price_text),
    rating: readRating(el),
    ratings_count: readRatingsCount(el),
    badge: readBadge(el),
    sales_volume: readSalesVolume(el),
    image_url: imageUrl(img, origin),
    sponsored: isSponsored(el),
    is_prime: isPrime(el),
    delivery: readDelivery(el),
    coupon: readCoupon(el, price_text, price),
    other_offers: readOtherOffers(el),
  };
}

/** "https://www.amazon.de/" → "https://www.amazon.de" (a path, if any, is dropped: links are root-relative). */
function siteOrigin(origin: string): string {
  try {
    return new URL(origin).origin;
  } catch {
    return origin.replace(/\/+$/, '');
  }
}

// ---------------------------------------------------------------------------------------------
// Identity: title, link, image, sponsored

/** The card's own elements matching `sel`, leaving out side sheets and popovers. */
function own(el: Element, sel: string): Element[] {
  return [...el.querySelectorAll(sel)].filter((e) => !e.closest(ASIDE));
}

/** The title heading: in the title recipe (2026) or the title block (2020-2022), else the first h2 with a link. */
function findTitle(el: Element): Element | null {
  const scoped = own(el, '[data-cy="title-recipe"] h2, .s-title-instructions-style h2');
  const all = scoped.length ? scoped : own(el, 'h2');
  // A brand line may be an h2 of its own; the title is the one that is (or holds) the product link.
  return all.find((h) => h.closest('a[href]') || h.querySelector('a[href]')) ?? all[0] ?? null;
}

function titleLink(el: Element, titleEl: Element | null): string | null {
  const a =
    titleEl?.closest('a[href]') ??
    titleEl?.querySelector('a[href]') ??
    el.querySelector('[data-component-type="s-product-image"] a[href]') ??
    el.querySelector('a.a-link-normal[href*="/dp/"]');
  return a?.getAttribute('href') ?? null;
}

/**
 * An absolute product URL: a sponsored redirect wrapper (`/sspa/click?…&url=<encoded path>`) is
 * decoded to the path it leads to, and a product path is reduced to the canonical
 * `{origin}/dp/{ASIN}` (no tracking parameters). Without a usable link, `{origin}/dp/{asin}`.
 */
function productUrl(href: string | null, origin: string, asin: string): string {
  const canonical = `${origin}/dp/${asin}`;
  if (!href || /^(javascript:|#)/i.test(href)) return canonical;
  let u: URL;
  try {
    u = new URL(href, `${origin}/`);
    if (u.pathname.includes('/sspa/click')) {
      const inner = u.searchParams.get('url');
      if (!inner) return canonical;
      u = new URL(inner, `${origin}/`);
    }
  } catch {
    return canonical;
  }
  const dp = u.pathname.match(/\/(?:dp|gp\/product)\/([A-Z0-9]{10})(?:[/?]|$)/i);
  if (dp) return `${u.origin}/dp/${dp[1]!.toUpperCase()}`;
  return u.href;
}

function findImage(el: Element): Element | null {
  return (
    own(el, '[data-component-type="s-product-image"] img.s-image, .s-product-image-container img.s-image')[0] ??
    own(el, 'img.s-image[data-image-latency="s-product-image"]')[0] ??
    own(el, 'img.s-image')[0] ??
    null
  );
}

/** "Sponsored Ad - Title" / "Sponsored Ad – Title" (image alt of sponsored cards) → "Title". */
function stripAdPrefix(alt: string | null | undefined): string | null {
  const t = alt
    ?.replace(/^\s*Sponsored Ad\s*[-–—]\s*/i, '')
    .replace(/\s+/g, ' ')
    .trim();
  return t ? t : null;
}

/** Markup only: the `AdHolder` class, the sponsored label (2026 `puis-`, 2022 `s-`), the older ad wrapper. */
function isSponsored(el: Element): boolean {
  return (
    el.classList.contains('AdHolder') || !!el.querySelector('.puis-sponsored-label-text, .s-sponsored-label-text, [data-component-type="sp-sponsored-result"]')
  );
}

// ---------------------------------------------------------------------------------------------
// Prices

/**
 * The display price: the first `span.a-price` that is not a text price (a struck list price or
 * a unit price). The original price: the struck-through `a-text-price` ("List:", "List Price:",
 * "Typical:", "RRP:", "Was:"), never a unit price such as "(€2.95/kg)".
 */
function readPrices(el: Element): { price_text: string | null; original_price_text: string | null } {
  const prices = own(el, 'span.a-price').filter((p) => !p.closest('[data-cy="secondary-offer-recipe"]'));
  const main = prices.find((p) => !p.classList.contains('a-text-price') && !isUnitPrice(p));
  const struck =
    prices.find((p) => p.classList.contains('a-text-price') && p.getAttribute('data-a-strike') === 'true') ??
    prices.find((p) => p.classList.contains('a-text-price') && !isUnitPrice(p) && p !== main);
  return { price_text: offscreen(main), original_price_text: offscreen(struck) };
}

function offscreen(p: Element | undefined): string | null {
  if (!p) return null;
  const t = textOf(p.querySelector('.a-offscreen')) ?? textOf(p.querySelector('[aria-hidden="true"]'));
  return t && parsePrice(t) !== null ? t : null;
}

/** A price inside "(… /kg)" or "(… /Count)": a unit price. */
function isUnitPrice(p: Element): boolean {
  const around = p.parentElement?.textContent?.replace(/\s+/g, ' ') ?? '';
  return /^\s*\(/.test(around) && /\/\s*[^\d\s)]/.test(around) && !p.parentElement?.querySelector('.a-price:not(.a-text-price)');
}

// ---------------------------------------------------------------------------------------------
// Reviews: rating, count

/** "4.4 out of 5 stars" (also "4,4 von 5 Sternen") from the star icon, else a rating aria-label. */
function readRating(el: Element): number | null {
  const candidates = [
    ...own(el, 'i[class*="a-icon-star"] .a-icon-alt').map((e) => e.textContent ?? ''),
    ...own(el, '[aria-label]').map((e) => e.getAttribute('aria-label') ?? ''),
  ];
  for (const t of candidates) {
    const m = t.match(/(\d(?:[.,]\d)?)\s*(?:out of|von|de|sur|van|su|つ星のうち)\s*5/i) ?? t.match(/5つ星のうち\s*(\d(?:[.,]\d)?)/);
    if (m) {
      const n = Number(m[1]!.replace(',', '.'));
      if (n >= 0 && n <= 5) return n;
    }
  }
  return null;
}

/** A count as written: "1,234", "1.234", "1 234", "(381)", "12.3K" (approximate). */
function parseCount(text: string | null | undefined): number | null {
  if (!text) return null;
  const t = text.replace(/[()\u00a0\u202f]/g, ' ').trim();
  const k = t.match(/^(\d+(?:[.,]\d+)?)\s*([KkMm])\b/);
  if (k) return Math.round(Number(k[1]!.replace(',', '.')) * (/k/i.test(k[2]!) ? 1_000 : 1_000_000));
  const m = t.match(/^\d{1,3}(?:[.,\s']\d{3})*|^\d+/);
  return m ? Number(m[0].replace(/\D/g, '')) : null;
}

/**
 * The number of ratings: the 2026 link `aria-label="381 ratings"`; the 2020-2022 `span` whose
 * aria-label is the bare count ("111") next to the stars; else the count text ("(1,234)").
 */
function readRatingsCount(el: Element): number | null {
  for (const e of own(el, '[aria-label]')) {
    const label = e.getAttribute('aria-label') ?? '';
    const m = label.match(
      /^\s*([\d.,\s\u00a0]+[KkMm]?)\s*(?:global\s+)?(?:ratings?|reviews?|Sternebewertungen|Bewertungen|valoraciones|évaluations|beoordelingen|件の評価)\s*$/i,
    );
    if (m) return parseCount(m[1]);
  }
  // The count sits next to the stars: look in the star's nearest ancestors (the reviews row).
  const star = own(el, 'i[class*="a-icon-star"]')[0];
  let row = star?.parentElement ?? null;
  for (let level = 0; row && level < 5; level++, row = row === el ? null : row.parentElement) {
    for (const e of row.querySelectorAll('[aria-label]')) {
      const label = (e.getAttribute('aria-label') ?? '').trim();
      if (/^\d[\d.,\s\u00a0]*$/.test(label)) return parseCount(label);
    }
    for (const e of row.querySelectorAll('a span, span.s-underline-text')) {
      if (e.children.length) continue;
      const t = textOf(e);
      if (t && /^\(?\d[\d.,\s]*[KkMm]?\)?$/.test(t)) return parseCount(t);
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Badge, sales volume, prime, delivery

/**
 * The status badge over the image: "Best Seller", "Amazon's Choice", "Overall Pick" (the 2026
 * Amazon's Choice badge shows "Overall Pick"). Deal badges ("Limited time deal", "Top Deal")
 * and certification pills ("Small Business", "Carbon impact") are not badges here.
 */
function readBadge(el: Element): string | null {
  const box = el.querySelector('.puis-status-badge-container, [data-component-type="s-status-badge-component"]');
  if (box) {
    const label = box.querySelector('.a-badge-label');
    if (label) {
      const t = [...label.querySelectorAll('.a-badge-text')]
        .map((e) => e.textContent ?? '')
        .join('')
        .replace(/\s+/g, ' ')
        .trim();
      if (t) return t;
    }
    const rio = box.querySelector('.rio-badge-label');
    if (rio) {
      const main = [...rio.children].find((c) => !c.classList.contains('rio-badge-supplementary-text'));
      const t = textOf(main) ?? main?.getAttribute('aria-label')?.trim();
      if (t) return t;
    }
    const aria = box.querySelector('[aria-label]')?.getAttribute('aria-label')?.trim();
    if (aria) return aria;
  }
  const status = el.querySelector('.a-badge[data-a-badge-type="status"] .a-badge-label');
  const t = status
    ? [...status.querySelectorAll('.a-badge-text')]
        .map((e) => e.textContent ?? '')
        .join('')
        .replace(/\s+/g, ' ')
        .trim()
    : '';
  return t || null;
}

/** "2K+ bought in past month". */
function readSalesVolume(el: Element): string | null {
  for (const e of own(el, 'span')) {
    if (e.children.length) continue;
    const t = textOf(e);
    if (t && /\bbought in (?:the )?past\b|im letzten Monat gekauft|comprados? el mes pasado|achetés? au cours du mois dernier/i.test(t)) return t;
  }
  return null;
}

/**
 * Prime eligibility: the prime icon (`i.a-icon-prime`, an icon labelled "Amazon Prime"), or
 * the 2026 delivery block's "Join Prime to get FREE delivery …" offer, which a signed-out
 * session is shown only for Prime-eligible items.
 */
function isPrime(el: Element): boolean {
  if (el.querySelector('i.a-icon-prime, i[class*="a-icon-prime"], .s-prime, i[aria-label*="Prime"], span[aria-label="Amazon Prime"]')) return true;
  return !!el.querySelector('.udm-delivery-block .prime-signup-ingress, .udm-delivery-block [data-ingress-id*="prime"]');
}

/** The delivery lines, joined with "; ". */
function readDelivery(el: Element): string | null {
  const udm = el.querySelector('.udm-delivery-block');
  if (udm) {
    const rows = [...udm.querySelectorAll('.udm-primary-delivery-message, .udm-secondary-delivery-message')]
      .map((r) => textOf(r))
      .filter((t): t is string => !!t);
    const joined = rows.length ? rows.join('; ') : textOf(udm);
    if (joined) return joined;
  }
  const recipe = el.querySelector('[data-cy="delivery-recipe"]');
  if (recipe) {
    const t = textOf(recipe);
    if (t) return t;
  }
  // 2020-2022: a row of the card's secondary text that carries the prime icon and/or aria-labelled
  // delivery lines ("FREE One-Day", "Get it tomorrow, Dec 17", "FREE Shipping by Amazon").
  const row = own(el, '.a-row.s-align-children-center').find(
    (r) => !r.querySelector('.s-pc-badge') && !r.closest('.s-pc-badge') && !r.closest('.s-price-instructions-style'),
  );
  const section = row?.closest('.a-section') ?? row;
  if (!section) return null;
  const lines: string[] = [];
  for (const e of section.querySelectorAll('span[aria-label]')) {
    const label = e.getAttribute('aria-label')?.replace(/\s+/g, ' ').trim();
    if (!label || /^[\d.,\s]+$/.test(label) || /out of 5|Amazon Prime/i.test(label)) continue;
    if (!lines.includes(label)) lines.push(label);
  }
  return lines.length ? lines.join('; ') : textOf(row);
}

// ---------------------------------------------------------------------------------------------
// Coupon, other offers

const MONEY =
  /(?:[$€£¥￥₹]|US\$|CA\$|A\$|R\$)\s?\d[\d.,\u00a0\u202f]*\d|\d[\d.,\u00a0\u202f]*\d?\s?(?:€|£|\$|zł|kr)|(?:EUR|USD|GBP|CAD|AUD|INR|JPY)\s?\d[\d.,]*/;

/**
 * A clip-coupon (or voucher) on the card, as `{ text, price_text, price }` where price is what
 * the coupon makes the item cost: "You pay $55.79 with coupon" → $55.79; "Save $5.00 with
 * coupon" and "Save 7% with coupon" are applied to the card's price (the price_text then written
 * like the card's price). Null without a coupon, or when the coupon's price can't be worked out
 * (no card price). Subscribe & Save offers ("10% off your first subscription order") are no coupon.
 */
function readCoupon(el: Element, priceText: string | null, price: number | null): Card['coupon'] {
  const comp = own(el, '[data-component-type="s-coupon-component"]')[0];
  const box = comp?.querySelector('.s-coupon-unclipped') ?? comp ?? null;
  const text = textOf(box);
  if (!text || !/coupon|voucher|gutschein|cup[oó]n/i.test(text)) return null;

  const money = text.match(MONEY)?.[0]?.trim();
  if (money && /you pay|pay only|zahlen sie|für nur|paga/i.test(text)) {
    const p = parsePrice(money);
    return p === null ? null : { text, price_text: money, price: p };
  }
  if (price === null || !priceText) return null;
  let value: number | null = null;
  const pct = text.match(/(\d+(?:[.,]\d+)?)\s?%/);
  if (money) {
    const off = parsePrice(money);
    if (off !== null && off < price) value = price - off;
  } else if (pct) {
    value = price * (1 - Number(pct[1]!.replace(',', '.')) / 100);
  }
  if (value === null) return null;
  const decimals = /[.,]\d{2}(?!\d)/.test(priceText) ? 2 : 0;
  value = Math.round(value * 10 ** decimals) / 10 ** decimals;
  return { text, price_text: writeLike(priceText, value, decimals), price: value };
}

/** `value` written the way `like` writes its number: "$35.99" → "$34.19", "24,99 €" → "23,74 €". */
function writeLike(like: string, value: number, decimals: number): string {
  const run = like.match(/\d(?:[\d.,\u00a0\u202f' ]*\d)?/);
  if (!run) return value.toFixed(decimals);
  const decMark = decimals ? run[0].charAt(run[0].length - 3) : '';
  const group = decMark === ',' ? '.' : ',';
  const [whole, frac] = value.toFixed(decimals).split('.');
  const grouped = whole!.replace(/\B(?=(\d{3})+(?!\d))/g, /\d[.,]\d{3}/.test(run[0].slice(0, decimals ? -3 : undefined)) ? group : '');
  return like.replace(run[0], decimals ? `${grouped}${decMark}${frac}` : grouped);
}

/** "More Buying Choices $19.22 (15+ used & new offers)" → { "$19.22", 19.22, 15 }. */
function readOtherOffers(el: Element): Card['other_offers'] {
  let block = el.querySelector('[data-cy="secondary-offer-recipe"]');
  if (!block) {
    const link = own(el, 'a').find((a) => /\boffers?\)?\s*$|angebote?\)?\s*$/i.test(textOf(a) ?? ''));
    block = link?.closest('.a-row') ?? link?.parentElement ?? null;
  }
  const text = textOf(block);
  if (!block || !text) return null;
  const countMatch = text.match(/\(?\s*(\d[\d.,]*)\+?\s*(?:used|new|offers?|gebraucht|neu|angebote?)/i);
  if (!countMatch) return null;
  let minText = offscreen(block.querySelector('span.a-price') ?? undefined);
  if (!minText) {
    for (const s of block.querySelectorAll('span')) {
      const t = textOf(s);
      if (t && !s.children.length && MONEY.test(t) && t.match(MONEY)![0].trim() === t) {
        minText = t;
        break;
      }
    }
  }
  const min = parsePrice(minText);
  const count = parseCount(countMatch[1]);
  if (!minText || min === null || count === null) return null;
  return { min_price_text: minText, min_price: min, count };
}

// ---------------------------------------------------------------------------------------------
// Empty pages

/**
 * An explicit "no results" page: the old `#noResultsTitle`, or a search page (`#search`,
 * `.s-main-slot`, the result info bar) whose message says there are no results.
 */
function isNoResultsPage(doc: Document): boolean {
  if (doc.querySelector('#noResultsTitle, .s-no-results-result, [data-component-type="s-no-results"]')) return true;
  const searchPage = doc.querySelector('#search, .s-main-slot, [data-component-type="s-search-results"], [data-component-type="s-result-info-bar"]');
  if (!searchPage) return false;
  const messages = doc.querySelectorAll(
    '[data-component-type*="messaging"], [data-component-type="s-result-info-bar"], .s-no-outline, .s-main-slot .a-section, h1, h2',
  );
  for (const m of messages) {
    if (m.closest('script, style')) continue;
    if (NO_RESULTS_TEXT.test(textOf(m) ?? '')) return true;
  }
  return false;
}
