/**
 * A publisher's section or hub page: the stories it lists, in page order.
 *
 * JSON-LD `ItemList` first (its entries completed from the markup by URL), then the first
 * markup layout that has cards:
 * - AP hubs: `div.PagePromo` with `.PagePromo-title a`, `.PagePromo-description`, an `img` in
 *   `.PagePromo-media`, and the story's time as epoch ms in the promo's own
 *   `data-posted-date-timestamp` (`data-updated-date-timestamp` beside it; the shown
 *   `.PagePromo-date` is empty, filled by script), else a `bsp-timestamp[data-timestamp]` inside
 *   it, AP's timestamp element on its article pages. Proven on the real hub
 *   test/fixtures/pages/publisher-listing/apnews_hub_science_2026-03.html: its lead list, right
 *   rails, topic packages and "load more" river are all promos, the same story often twice;
 * - Reuters: `[data-testid="MediaStoryCard"]` cards, the headline link `[data-testid="Heading"]`
 *   (no real Reuters listing was captured: tested on markup written into the test);
 * - anything else: `article h2 a, article h3 a` (tested on the hand-written
 *   synthetic/publisher-section-generic.html).
 */
import { isoInstant, shownDate } from '../dates.js';
import { clean, hasType, jsonLd, obj, type Json } from '../json-ld.js';
import { absoluteUrl, assertNotRobotCheck, imageUrl, loadPage, ScrapeError, textOf } from '../page.js';

export interface ListingItem {
  /** 1-based, in the returned list. */
  position: number;
  title: string;
  /** Absolute, on the listing's own site. */
  url: string;
  published_at: string | null;
  summary: string | null;
  image_url: string | null;
}

type Item = Omit<ListingItem, 'position'>;

/**
 * The stories a listing page links, deduplicated by URL (the first place a story appears
 * wins; later ones fill its gaps), links to other sites dropped. Shown dates ("2 hours ago")
 * resolve against `fetchedAt`. Throws ScrapeError on a robot check and on a page that lists
 * nothing it can read.
 */
export function parseListing(html: string, fetchedUrl: string, fetchedAt: Date): ListingItem[] {
  const doc = loadPage(html);
  assertNotRobotCheck(doc);
  // The page's own canonical URL is its site: a mirror (PUBLISHER_WIRE_URL) serves pages that
  // link the real publisher, and relative links belong to it too.
  const canonical = doc.querySelector('link[rel="canonical"]')?.getAttribute('href');
  const pageUrl = canonical && /^https?:\/\//.test(canonical) && URL.canParse(canonical) ? canonical : fetchedUrl;
  const markup = dedupe(markupItems(doc, pageUrl, fetchedAt), pageUrl);
  const byUrl = new Map(markup.map((i) => [i.url, i]));
  const fromLd = dedupe(ldItems(doc, pageUrl), pageUrl)
    .map((i) => fill(i, byUrl.get(i.url)))
    .filter((i) => i.title);
  const items = fromLd.length ? fromLd : markup;
  if (!items.length) {
    throw new ScrapeError(
      'no stories on the page (no JSON-LD ItemList, and no div.PagePromo, [data-testid="MediaStoryCard"] or <article> card with a headline link on the page\'s own site): the layout changed or the page is not a listing',
    );
  }
  return items.map((i, n) => ({ position: n + 1, ...i }));
}

function fill(item: Item, more: Item | undefined): Item {
  if (!more) return item;
  return {
    title: item.title || more.title,
    url: item.url,
    published_at: item.published_at ?? more.published_at,
    summary: item.summary ?? more.summary,
    image_url: item.image_url ?? more.image_url,
  };
}

/** One item per URL (fragments dropped), on the page's site only. */
function dedupe(items: Item[], pageUrl: string): Item[] {
  const seen = new Map<string, Item>();
  for (const item of items) {
    const url = sameSite(item.url, pageUrl);
    if (!url) continue;
    const prev = seen.get(url);
    seen.set(url, prev ? fill(prev, item) : { ...item, url });
  }
  return [...seen.values()];
}

/** The URL, fragment dropped, when it is http(s) on the page's site (www. or a subdomain alike); else null. */
function sameSite(href: string, pageUrl: string): string | null {
  let u: URL;
  try {
    u = new URL(href, pageUrl);
  } catch {
    return null;
  }
  if (!/^https?:$/.test(u.protocol)) return null;
  const host = u.hostname.replace(/^www\./, '');
  const site = new URL(pageUrl).hostname.replace(/^www\./, '');
  if (host !== site && !host.endsWith(`.${site}`) && !site.endsWith(`.${host}`)) return null;
  u.hash = '';
  return u.href;
}

// ---------------------------------------------------------------------------------------------
// JSON-LD ItemList

/** ItemList entries: a ListItem (`url`, or an `item` that is a URL or a node) or a bare node. */
function ldItems(doc: Document, pageUrl: string): Item[] {
  const list = jsonLd(doc).find((n) => hasType(n, 'ItemList') && Array.isArray(n.itemListElement));
  if (!list) return [];
  const entries = [...(list.itemListElement as unknown[])].filter((e): e is Json => !!e && typeof e === 'object');
  // ListItems carry their place; keep it when every entry has one.
  if (entries.every((e) => typeof e.position === 'number')) entries.sort((a, b) => (a.position as number) - (b.position as number));
  return entries.map((e) => {
    const node = e.item && typeof e.item === 'object' ? (e.item as Json) : e;
    const url = clean(node.url) ?? clean(node['@id']) ?? clean(e.url) ?? clean(e.item) ?? '';
    const img = node.image;
    const image = Array.isArray(img) ? img[0] : img;
    return {
      title: clean(node.headline) ?? clean(node.name) ?? clean(e.name) ?? '',
      url: absoluteUrl(url, pageUrl) ?? '',
      published_at: isoInstant(clean(node.datePublished)),
      summary: clean(node.description),
      image_url: absoluteUrl(typeof image === 'string' ? image : clean(obj(image)?.url), pageUrl),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Markup

/** The cards of the first layout the page has. */
function markupItems(doc: Document, pageUrl: string, fetchedAt: Date): Item[] {
  const layouts: [string, string][] = [
    ['div.PagePromo', '.PagePromo-title a[href]'],
    ['[data-testid="MediaStoryCard"]', 'a[data-testid="Heading"][href], [data-testid="Heading"] a[href]'],
    ['article', 'h2 a[href], h3 a[href]'],
  ];
  for (const [cardSel, linkSel] of layouts) {
    const items = [...doc.querySelectorAll(cardSel)]
      .map((card) => card.querySelector(linkSel) && readCard(card, card.querySelector(linkSel)!, pageUrl, fetchedAt))
      .filter((i): i is Item => !!i && !!i.title);
    if (items.length) return items;
  }
  return [];
}

function readCard(card: Element, link: Element, pageUrl: string, fetchedAt: Date): Item {
  return {
    title: textOf(link) ?? '',
    url: absoluteUrl(link.getAttribute('href'), pageUrl) ?? '',
    published_at: cardDate(card, fetchedAt),
    // in this order, not document order: a card's dek may follow other text
    summary:
      ['.PagePromo-description', '[data-testid="Description"]', '[data-testid="Body"]', 'p'].map((sel) => textOf(card.querySelector(sel))).find(Boolean) ??
      null,
    image_url: imageUrl(card.querySelector('img'), new URL(pageUrl).origin),
  };
}

/** AP's epoch-ms promo attribute or `bsp-timestamp`, a `time` element's datetime, else the date a card shows. */
function cardDate(card: Element, fetchedAt: Date): string | null {
  for (const ms of [card.getAttribute('data-posted-date-timestamp'), card.querySelector('bsp-timestamp[data-timestamp]')?.getAttribute('data-timestamp')].map(
    Number,
  )) {
    if (ms > 0) return new Date(ms).toISOString();
  }
  const time = card.querySelector('time');
  return isoInstant(time?.getAttribute('datetime') ?? time?.getAttribute('dateTime') ?? null) ?? shownDate(textOf(time), fetchedAt);
}
