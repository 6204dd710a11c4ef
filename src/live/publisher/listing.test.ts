import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ScrapeError } from '../page.js';
import { parseListing } from './listing.js';

/** Hand-written listing pages (no real one was captured): synthetic/LAUNCHES-PUBLISHER.PROVENANCE.md. */
const PAGES = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../test/fixtures/pages');
const read = (path: string) => readFileSync(`${PAGES}/${path}`, 'utf8');
const FETCHED = new Date('2026-02-20T20:00:00Z');

describe('parseListing: AP-style hub (synthetic)', () => {
  const items = parseListing(read('synthetic/publisher-apnews-hub-science.html'), 'https://apnews.com/hub/science', FETCHED);

  it('reads the 20 promos in page order, not the header promo or the ad slot', () => {
    expect(items).toHaveLength(20);
    expect(items.map((i) => i.position)).toEqual(items.map((_, n) => n + 1));
    for (const i of items) expect(i.url).toMatch(/^https:\/\/apnews\.com\/article\/[a-z0-9-]+-[0-9a-f]{32}$/);
    expect(items[1]!.title).toBe('Deep-sea survey finds dozens of species new to science off Chile');
  });

  it('reads title, link, description, epoch-ms timestamp and image of a promo', () => {
    expect(items[0]).toEqual({
      position: 1,
      title: 'Comet fragment lights up night sky over three states',
      url: 'https://apnews.com/article/comet-fragment-lights-up-night-sky-over-three-states-6ee081f7156ceb4ed9760fabc90c6ce0',
      published_at: '2026-02-20T15:00:00.000Z', // data-timestamp="1771599600000"
      summary: 'Skywatchers from Oregon to Idaho reported a bright green fireball late Thursday as a fragment of a short-period comet burned up in the atmosphere.',
      image_url:
        'https://dims.apnews.com/dims4/default/d62419a/2147483647/strip/true/crop/3000x1999+0+0/resize/599x399!/quality/90/?url=https%3A%2F%2Fassets.apnews.com%2F93%2F5c%2F3aca5c040d0f1864eb2a29b11b20',
    });
  });

  it('a promo without image or description, and one without a timestamp', () => {
    expect(items[3]).toEqual({
      position: 4,
      title: "Why the moon's south pole keeps drawing new missions",
      url: 'https://apnews.com/article/why-the-moon-s-south-pole-keeps-drawing-new-missions-fb6fbbd85e5f072ba8fa872ec701adca',
      published_at: '2026-02-20T11:39:00.000Z', // data-timestamp="1771587540000"
      summary: null,
      image_url: null,
    });
    expect(items[18]).toMatchObject({
      title: "AP explains: what a 'supermoon' really is",
      published_at: null,
      summary: 'It is closer than average, and a little brighter. Here is what to expect.',
      image_url: null,
    });
  });
});

describe('parseListing: generic section page (synthetic)', () => {
  const items = parseListing(read('synthetic/publisher-section-generic.html'), 'https://www.rivertonledger.example/local/', FETCHED);

  it('reads the article cards: the partner card (another site) and the most-read repeats are dropped', () => {
    expect(items.map((i) => i.title)).toEqual([
      'Council approves river trail extension to the east side',
      'School bus routes change Monday for 1,100 students',
      'Water main break floods two downtown blocks',
      'Library drops late fees for good',
      'High school robotics team heads to state finals',
      'Letters: readers weigh in on bridge tolls',
    ]);
  });

  it('resolves links and images, reads datetimes and shown dates', () => {
    expect(items[0]).toEqual({
      position: 1,
      title: 'Council approves river trail extension to the east side',
      url: 'https://www.rivertonledger.example/local/2026/02/20/council-approves-river-trail-extension/',
      published_at: '2026-02-20T19:05:00.000Z', // 14:05 at −05:00
      summary: 'The 2.4-mile addition will connect Mill Street to the fairgrounds by fall 2027.',
      image_url: 'https://www.rivertonledger.example/images/2026/02/river-trail-1200.jpg',
    });
    expect(items[1]).toMatchObject({ published_at: '2026-02-20T17:00:00.000Z', image_url: 'https://cdn.rivertonledger.example/images/2026/02/bus-600.jpg' }); // "3 hours ago"
    expect(items[2]).toMatchObject({ published_at: '2026-02-19T20:00:00.000Z', image_url: null }); // "Yesterday"
    // the #comments fragment is not part of the story's URL
    expect(items[3]).toMatchObject({ url: 'https://www.rivertonledger.example/local/2026/02/19/library-late-fees/', published_at: '2026-02-19T09:30:00.000Z', summary: null });
    expect(items[4]!.published_at).toBe('2026-02-18T00:00:00.000Z'); // "Feb 18, 2026"
    expect(items[5]).toMatchObject({ published_at: null, summary: null });
  });
});

describe('parseListing: JSON-LD and small pages', () => {
  const PAGE = 'https://www.example-news.com/world/';

  it('an ItemList comes first, in its positions, its gaps filled from the card with the same URL', () => {
    const html = `<html><head><script type="application/ld+json">{"@context":"https://schema.org","@type":"ItemList","itemListElement":[
        {"@type":"ListItem","position":2,"url":"https://www.example-news.com/world/b"},
        {"@type":"ListItem","position":1,"item":{"@type":"NewsArticle","headline":"Story A","url":"/world/a","datePublished":"2026-02-20T10:00:00Z","image":["https://img.example-news.com/a.jpg"]}},
        {"@type":"ListItem","position":3,"url":"https://elsewhere.example.org/c","name":"Off-site"},
        {"@type":"ListItem","position":4,"url":"https://www.example-news.com/world/d"}
      ]}</script></head><body>
      <article><h2><a href="/world/b">Story B</a></h2><p>B's dek.</p><time datetime="2026-02-19T08:00:00Z"></time></article>
      <article><h2><a href="/world/a">Card title A</a></h2><p>A's dek.</p></article>
      <article><h2><a href="/world/z">Only in the markup</a></h2></article>
    </body></html>`;
    expect(parseListing(html, PAGE, FETCHED)).toEqual([
      { position: 1, title: 'Story A', url: 'https://www.example-news.com/world/a', published_at: '2026-02-20T10:00:00.000Z', summary: "A's dek.", image_url: 'https://img.example-news.com/a.jpg' },
      { position: 2, title: 'Story B', url: 'https://www.example-news.com/world/b', published_at: '2026-02-19T08:00:00.000Z', summary: "B's dek.", image_url: null },
      // d has neither a name in the list nor a card: no title, left out
    ]);
  });

  it('Reuters-style MediaStoryCards', () => {
    const html = `<html><body>
      <div data-testid="MediaStoryCard"><div data-testid="Image"><img src="/resizer/x.jpg"></div>
        <a data-testid="Heading" href="/world/europe/story-one-2026-02-20/"><span>Story one</span></a>
        <p data-testid="Description">First dek.</p><time dateTime="2026-02-20T12:00:00Z">12:00 PM UTC</time></div>
      <div data-testid="MediaStoryCard"><h3 data-testid="Heading"><a href="/world/europe/story-two-2026-02-20/">Story two</a></h3><time>2 hours ago</time></div>
      <article><h2><a href="/world/not-a-card/">Generic article</a></h2></article>
    </body></html>`;
    expect(parseListing(html, 'https://www.reuters.com/world/europe/', FETCHED)).toEqual([
      { position: 1, title: 'Story one', url: 'https://www.reuters.com/world/europe/story-one-2026-02-20/', published_at: '2026-02-20T12:00:00.000Z', summary: 'First dek.', image_url: 'https://www.reuters.com/resizer/x.jpg' },
      { position: 2, title: 'Story two', url: 'https://www.reuters.com/world/europe/story-two-2026-02-20/', published_at: '2026-02-20T18:00:00.000Z', summary: null, image_url: null },
    ]);
  });

  it('a page that lists nothing is a ScrapeError', () => {
    const html = '<html><body><h1>Subscribe</h1><p>Nothing here.</p><article><h2><a href="https://other.example.org/x">Off-site only</a></h2></article></body></html>';
    expect(() => parseListing(html, PAGE, FETCHED)).toThrow(ScrapeError);
  });
});
