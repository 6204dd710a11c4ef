import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ScrapeError } from '../page.js';
import { parseBestsellers, type BestsellerItem, type BestsellersPage } from './bestsellers.js';

/** Real best-sellers pages from amazon.com and amazon.de (2022): test/fixtures/pages, see test/fixtures/pages/PROVENANCE.md. */
const PAGES = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../test/fixtures/pages/amazon-bestsellers');
const COM_HTML = readFileSync(`${PAGES}/amazon-com-bestsellers-tools-home-improvement-2022.html`, 'utf8');
const DE_HTML = readFileSync(`${PAGES}/amazon-de-bestseller-elektronik-foto-2022.html`, 'utf8');
const US = { origin: 'https://www.amazon.com', currency: 'USD' };
const DE = { origin: 'https://www.amazon.de', currency: 'EUR' };

/** The (id, rank) pairs of the page's `data-client-recs-list` attribute, read with a regex rather than the DOM. */
function recsOf(html: string): { id: string; rank: number }[] {
  const attr = html.match(/data-client-recs-list="([^"]*)"/)![1]!.replace(/&quot;/g, '"');
  return (JSON.parse(attr) as { id: string; metadataMap: Record<string, string> }[]).map((e) => ({ id: e.id, rank: Number(e.metadataMap['render.zg.rank']) }));
}

const byAsin = (page: BestsellersPage, asin: string): BestsellerItem => {
  const item = page.items.find((i) => i.asin === asin);
  if (!item) throw new Error(`no item ${asin}`);
  return item;
};

describe('parseBestsellers: amazon.com Tools & Home Improvement (2022)', () => {
  const page = parseBestsellers(COM_HTML, US);

  it('reads 30 items ranked 1..30 in page order, with distinct ASINs matching the recs list', () => {
    expect(page.items).toHaveLength(30);
    expect(page.items.map((i) => i.rank)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(new Set(page.items.map((i) => i.asin)).size).toBe(30);
    // The recs list names 50 (the first 30 are rendered): the rendered ones agree with it.
    const recs = recsOf(COM_HTML);
    expect(recs).toHaveLength(50);
    expect(page.items.map((i) => [i.asin, i.rank])).toEqual(recs.slice(0, 30).map((r) => [r.id, r.rank]));
    for (const item of page.items) {
      expect(item.asin).toMatch(/^[A-Z0-9]{10}$/);
      expect(item.url).toBe(`https://www.amazon.com/dp/${item.asin}`);
      expect(item.currency).toBe('USD');
      expect(item.title.length).toBeGreaterThan(10);
      expect(item.price).toBeGreaterThan(0);
      expect(item.price_text).toMatch(/^\$\d+\.\d\d$/);
      expect(item.rating).toBeGreaterThanOrEqual(4);
      expect(item.ratings_count).toBeGreaterThan(1000);
      expect(item.image_url).toMatch(/^https:\/\/images-na\.ssl-images-amazon\.com\/images\/I\/.+\.jpg$/);
    }
  });

  it('reads the rank-1 item', () => {
    expect(page.items[0]).toEqual({
      rank: 1,
      asin: 'B08N5NQ869',
      title: 'Ring Video Doorbell - 1080p HD video, improved motion detection, easy installation – Satin Nickel',
      url: 'https://www.amazon.com/dp/B08N5NQ869',
      // "1 offer from $59.99": the offer price (class p13n-sc-price without a hash)
      price_text: '$59.99',
      price: 59.99,
      currency: 'USD',
      rating: 4.6,
      ratings_count: 132223,
      image_url: 'https://images-na.ssl-images-amazon.com/images/I/71vtXgJBagL._AC_UL300_SR300,200_.jpg',
    });
  });

  it('reads an "N offers from" item and a hashed-price-class item', () => {
    expect(byAsin(page, 'B099ZRCGWW')).toMatchObject({
      rank: 4,
      title: expect.stringMatching(/^Star Projector, Rossetta Galaxy Projector for Bedroom, .* Room Decor \(Black\)$/),
      price_text: '$32.46', // "7 offers from $32.46"
      price: 32.46,
      rating: 4.5,
      ratings_count: 9408,
    });
    expect(byAsin(page, 'B07Q2MKX5C')).toMatchObject({
      rank: 25,
      title: 'Bissell SpotClean ProHeat Portable Spot and Stain Carpet Cleaner, 2694, Blue',
      price_text: '$99.00', // span._cDEzb_p13n-sc-price_3mJ9Z, inside a …p13n-sc-price-animation-wrapper… div
      price: 99,
      rating: 4.5,
      ratings_count: 22062,
    });
  });

  it('reads the category from the heading; a department page has no node id', () => {
    expect(page.category).toBe('Tools & Home Improvement');
    expect(page.node_id).toBeNull(); // canonical …/zgbs/hi
  });

  it('reads the 13 subcategories of the navigation tree', () => {
    expect(page.subcategories).toHaveLength(13);
    expect(page.subcategories[0]).toEqual({
      name: 'Air Tools',
      url: 'https://www.amazon.com/Best-Sellers-Tools-Home-Improvement-Air-Powered-Tools/zgbs/hi/552684',
      node_id: '552684',
    });
    expect(page.subcategories[12]).toEqual({
      name: 'Storage & Home Organization',
      url: 'https://www.amazon.com/Best-Sellers-Tools-Home-Improvement-Home-Storage-Organization/zgbs/hi/13400631',
      node_id: '13400631',
    });
    expect(page.subcategories.map((s) => s.name)).toContain('Power & Hand Tools');
    // Neither the parent ("Any Department") nor the current category is a subcategory.
    expect(page.subcategories.map((s) => s.name)).not.toContain('Any Department');
    expect(page.subcategories.map((s) => s.name)).not.toContain('Tools & Home Improvement');
    for (const s of page.subcategories) expect(s.node_id).toMatch(/^\d+$/);
  });
});

describe('parseBestsellers: amazon.de Elektronik & Foto (2022)', () => {
  const page = parseBestsellers(DE_HTML, DE);

  it('reads 30 items ranked 1..30 in page order, with distinct ASINs matching the recs list', () => {
    expect(page.items).toHaveLength(30);
    expect(page.items.map((i) => i.rank)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(new Set(page.items.map((i) => i.asin)).size).toBe(30);
    expect(page.items.map((i) => [i.asin, i.rank])).toEqual(
      recsOf(DE_HTML)
        .slice(0, 30)
        .map((r) => [r.id, r.rank]),
    );
    for (const item of page.items) {
      expect(item.url).toBe(`https://www.amazon.de/dp/${item.asin}`);
      expect(item.currency).toBe('EUR');
      expect(item.price_text).toMatch(/^\d+,\d\d €$/);
      expect(item.rating).not.toBeNull();
      expect(item.ratings_count).toBeGreaterThan(0);
      expect(item.image_url).toMatch(/^https:\/\/images-eu\.ssl-images-amazon\.com\//);
    }
  });

  it('reads the rank-1 item with a German price and rating', () => {
    expect(page.items[0]).toEqual({
      rank: 1,
      asin: 'B09B8X9RGM',
      title: 'Der neue Echo Dot (5. Generation, 2022) | Smarter Lautsprecher mit Alexa | Anthrazit',
      url: 'https://www.amazon.de/dp/B09B8X9RGM',
      price_text: '24,99 €',
      price: 24.99,
      currency: 'EUR',
      rating: 4.4, // "4,4 von 5 Sternen"
      ratings_count: 558,
      image_url: 'https://images-eu.ssl-images-amazon.com/images/I/71C3lbbeLsL._AC_UL300_SR300,200_.jpg',
    });
  });

  it('reads counts with a dot as thousands mark, an "Angebote ab" price and a title with zero-width spaces', () => {
    expect(byAsin(page, 'B08C1KN5J2')).toMatchObject({
      rank: 2,
      title: 'Fire TV Stick mit Alexa-Sprachfernbedienung (mit TV-Steuerungstasten) | HD-Streaminggerät',
      price_text: '19,99 €',
      price: 19.99,
      rating: 4.7,
      ratings_count: 92284, // "92.284"
    });
    expect(byAsin(page, 'B0935DN1BN')).toMatchObject({
      rank: 14,
      title: 'Neu Apple AirTag',
      price_text: '47,58 €', // "2 Angebote ab 47,58 €"
      price: 47.58,
      rating: 4.7,
      ratings_count: 47172,
    });
    expect(byAsin(page, 'B0BDJ37NF5')).toMatchObject({
      rank: 15,
      title: 'Apple AirPods Pro (2. Generation) mit MagSafe Ladecase (2022)',
      price: 271.45,
      ratings_count: 123048,
    });
  });

  it('reads the category from the German heading', () => {
    expect(page.category).toBe('Elektronik & Foto');
    expect(page.node_id).toBeNull(); // canonical …/gp/bestsellers/ce-de
  });

  it('reads the 18 subcategories of the navigation tree (/gp/bestsellers/<dept>/<node> links)', () => {
    expect(page.subcategories).toHaveLength(18);
    expect(page.subcategories[0]).toEqual({
      name: 'Auto- & Fahrzeugelektronik',
      url: 'https://www.amazon.de/gp/bestsellers/ce-de/1071738',
      node_id: '1071738',
    });
    expect(page.subcategories.find((s) => s.name === 'Kopfhörer & Zubehör')).toEqual({
      name: 'Kopfhörer & Zubehör',
      url: 'https://www.amazon.de/gp/bestsellers/ce-de/17303695031',
      node_id: '17303695031',
    });
    expect(page.subcategories.map((s) => s.name)).not.toContain('Alle Kategorien');
  });
});

describe('parseBestsellers: other markup', () => {
  const recs = (entries: [string, number][]) =>
    JSON.stringify(entries.map(([id, rank]) => ({ id, metadataMap: { 'render.zg.rank': String(rank) }, linkParameters: {} }))).replace(/"/g, '&quot;');

  it('reads a subcategory page: node id from the canonical link, the children under the selected node', () => {
    const html = `<html><head><link rel="canonical" href="https://www.amazon.com/Best-Sellers-Air-Tools/zgbs/hi/552684"></head><body>
      <div role="tree" class="_x_zg-browse-root__a">
        <div role="treeitem">‹ <a href="/Best-Sellers/zgbs/ref=zg_bs_unv_hi_0_1">Any Department</a></div>
        <div role="treeitem">‹ <a href="/Best-Sellers-Tools/zgbs/hi/ref=zg_bs_unv_hi_1_552684_1">Tools &amp; Home Improvement</a></div>
        <div class="_x_zg-browse-group__b">
          <div role="treeitem"><span class="_x_zg-selected__c">Air Tools</span></div>
          <div role="group">
            <div role="treeitem"><a href="/Best-Sellers-Air-Compressors/zgbs/hi/552686/ref=zg_bs_nav_hi_2_552684">Air Compressors</a></div>
            <div role="treeitem"><a href="/Best-Sellers-Air-Hoses/zgbs/hi/552688/ref=zg_bs_nav_hi_2_552684">Air Hoses</a></div>
          </div>
        </div>
      </div>
      <h1>Best Sellers in Air Tools</h1>
      <div class="p13n-desktop-grid" data-client-recs-list="${recs([['B000000001', 1]])}">
        <div id="gridItemRoot"><span class="zg-bdg-text">#1</span>
          <div id="B000000001" class="p13n-sc-uncoverable-faceout">
            <a href="/x/dp/B000000001/ref=zg_bs_1"><img src="/images/I/a.jpg" alt="A compressor"></a>
            <a href="/x/dp/B000000001/ref=zg_bs_1"><span><div class="_h_p13n-sc-css-line-clamp-3_z">A compressor</div></span></a>
            <div class="_h_p13n-sc-price-animation-wrapper_z"><span class="_h_p13n-sc-price_z">$1,234.50</span></div>
          </div>
        </div>
      </div></body></html>`;
    const page = parseBestsellers(html, US);
    expect(page.category).toBe('Air Tools');
    expect(page.node_id).toBe('552684');
    expect(page.subcategories).toEqual([
      { name: 'Air Compressors', url: 'https://www.amazon.com/Best-Sellers-Air-Compressors/zgbs/hi/552686', node_id: '552686' },
      { name: 'Air Hoses', url: 'https://www.amazon.com/Best-Sellers-Air-Hoses/zgbs/hi/552688', node_id: '552688' },
    ]);
    expect(page.items).toEqual([
      {
        rank: 1,
        asin: 'B000000001',
        title: 'A compressor',
        url: 'https://www.amazon.com/dp/B000000001',
        price_text: '$1,234.50',
        price: 1234.5,
        currency: 'USD',
        rating: null,
        ratings_count: null,
        image_url: 'https://www.amazon.com/images/I/a.jpg',
      },
    ]);
  });

  it('fills an ASIN the item markup lacks from the recs list, by rank', () => {
    const html = `<h1>Best Sellers in Toys</h1><div data-client-recs-list="${recs([
      ['B0000000AA', 1],
      ['B0000000BB', 2],
    ])}">
      <div id="gridItemRoot"><span class="zg-bdg-text">#1</span><div class="_t_p13n-sc-css-line-clamp-3_z">First</div></div>
      <div id="gridItemRoot"><span class="zg-bdg-text">#2</span><div class="_t_p13n-sc-css-line-clamp-3_z">Second</div></div></div>`;
    const page = parseBestsellers(html, US);
    expect(page.items.map((i) => [i.rank, i.asin, i.title])).toEqual([
      [1, 'B0000000AA', 'First'],
      [2, 'B0000000BB', 'Second'],
    ]);
    expect(page.subcategories).toEqual([]);
  });

  it('reads the ranked ASINs of the recs list when the grid items are not in the markup', () => {
    const html = `<h1>Bestseller in Spielzeug</h1><div data-client-recs-list="${recs([
      ['B0000000AA', 1],
      ['B0000000BB', 2],
    ])}"></div>`;
    const page = parseBestsellers(html, DE);
    expect(page.category).toBe('Spielzeug');
    expect(page.items.map((i) => [i.rank, i.asin, i.url])).toEqual([
      [1, 'B0000000AA', 'https://www.amazon.de/dp/B0000000AA'],
      [2, 'B0000000BB', 'https://www.amazon.de/dp/B0000000BB'],
    ]);
  });

  it('keeps the first 30 of a recs list of 50 when the grid is not in the markup', () => {
    const ids = recsOf(COM_HTML).map((r): [string, number] => [r.id, r.rank]);
    const page = parseBestsellers(`<div data-client-recs-list="${recs(ids)}"></div>`, US);
    expect(page.items.map((i) => i.rank)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(page.items[29]!.asin).toBe('B07WNRN9WQ');
    expect(page.category).toBeNull();
  });
});

describe('parseBestsellers: pages that are not a best-sellers list', () => {
  it('throws ScrapeError on a robot check', () => {
    const html = `<html><head><title>Robot Check</title></head><body>
      <form method="get" action="/errors/validateCaptcha"><input id="captchacharacters" name="field-keywords"></form></body></html>`;
    expect(() => parseBestsellers(html, US)).toThrow(ScrapeError);
    expect(() => parseBestsellers(html, US)).toThrow(/robot check/);
  });

  it('throws ScrapeError on an unrelated page', () => {
    const html = '<html><head><title>Amazon.com: Help</title></head><body><h1>Help &amp; Customer Service</h1><p>Hello.</p></body></html>';
    expect(() => parseBestsellers(html, US)).toThrow(ScrapeError);
    expect(() => parseBestsellers(html, US)).toThrow(/^no best-seller items on the page: /);
  });

  it('throws ScrapeError on a search results page (real markup of another kind)', () => {
    const search = readFileSync(resolve(PAGES, '../amazon-search/amazon-de-search-katzenfutter-2022.html'), 'utf8');
    expect(() => parseBestsellers(search, DE)).toThrow(ScrapeError);
  });
});

describe('parseBestsellers: a real page of another site', () => {
  // Issue 22: never a list with empty fields; the real pages are an AP article and a product page.
  const FIXTURES = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../test/fixtures/pages');
  it.each(['publisher/apnews-article-presidential-campaigns-2024-09-03.html', 'amazon-product/amazon-com-product-portable-charger-2026.html'])(
    '%s is a ScrapeError',
    (name) => {
      expect(() => parseBestsellers(readFileSync(resolve(FIXTURES, name), 'utf8'), US)).toThrow(ScrapeError);
    },
  );
});
