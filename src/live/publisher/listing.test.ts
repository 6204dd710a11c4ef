import { describe, expect, it } from 'vitest';
import { readFixture, scrapeError } from '../../../test/helpers/pages.js';
import { parseListing } from './listing.js';

/** The read time of the hand-written pages below (their dates count back from it). */
const FETCHED = new Date('2026-02-20T20:00:00Z');

/**
 * The real AP science hub (test/fixtures/pages/publisher-listing/, canonical
 * https://apnews.com/science). Every expected value was read by hand from the HTML at the line
 * the comment gives ("L16148"). Captured 2026-03-08: its newest timestamp is the trending bar's
 * data-updated-date-timestamp="1772967464195" (L9244), 2026-03-08T10:57:44Z.
 */
describe('parseListing: the real AP hub page', () => {
  const CAPTURED = new Date(1772967464195);
  const items = parseListing(readFixture('publisher-listing/apnews_hub_science_2026-03.html'), 'https://apnews.com/hub/science', CAPTURED);

  it('reads the 62 stories of its 66 promos, in page order: a story promoted twice is listed once', () => {
    // 66 `<div class="PagePromo"` (L16148 … L29437). The right rail L16958–L17340 repeats 4 stories
    // of the lead list above it (the eclipse, Neanderthal, Artemis-revamp and asteroid-orbit
    // promos); the trending bar's div.PagePromoTrending (L9244 …) and the menu's
    // HamburgerNavigationPromo (L8513 …) are not promos.
    expect(items).toHaveLength(62);
    expect(items.map((i) => i.position)).toEqual(items.map((_, n) => n + 1));
    // the 5 "Protein problem" features (L24125 …) live on projects.apnews.com, AP's own subdomain
    expect(items.filter((i) => !i.url.startsWith('https://apnews.com/')).map((i) => new URL(i.url).host)).toEqual(Array(5).fill('projects.apnews.com'));
  });

  it('the first story: title, link, description, posted time and image', () => {
    expect(items[0]).toEqual({
      position: 1,
      title: 'Spacecraft’s impact changed asteroid’s orbit around the sun in a save-the-Earth test, study finds', // L16246
      url: 'https://apnews.com/article/asteroid-nasa-draft-dimorphos-9abccd32d4cb532a66249dd6145685cb', // L16246 href
      published_at: '2026-03-06T19:01:09.000Z', // L16148 data-posted-date-timestamp="1772823669000"
      summary:
        'A new study has found that an asteroid NASA used for target practice a few years ago was nudged into a slightly different route around the sun.', // L16261 .PagePromo-description
      image_url:
        'https://dims.apnews.com/dims4/default/93c8a78/2147483647/strip/true/crop/3000x2000+0+0/resize/727x485!/quality/90/?url=https%3A%2F%2Fassets.apnews.com%2Fa8%2F99%2Fffe10a7c3913bcbf1edbe28ade82%2F1bfdddcec49a4073bb38bedb26bf5c3f', // L16217 img src
    });
  });

  it('the last story: no description', () => {
    expect(items[61]).toEqual({
      position: 62,
      title: 'Ailing astronaut returns to Earth early in NASA’s first medical evacuation', // L29525
      url: 'https://apnews.com/article/nasa-space-astronauts-crew-medical-spacex-d89651fb83a8eb32d8619052424a5cb8', // L29525 href
      published_at: '2026-01-15T08:45:45.000Z', // L29437 data-posted-date-timestamp="1768466745000"
      summary: null, // no .PagePromo-description between L29437 and the ad template after it
      image_url:
        'https://dims.apnews.com/dims4/default/1171407/2147483647/strip/true/crop/4000x2458+0+0/resize/240x147!/quality/90/?url=https%3A%2F%2Fassets.apnews.com%2F1b%2F85%2F757446045116c78c61ccdf00289d%2F087d20ee2fa745adadcecdad32ff5940', // L29496 img src
    });
  });

  it('item times: the posted timestamp, not the updated one; none on a promo that has none', () => {
    // L16459 data-posted-date-timestamp="1772206499000" data-updated-date-timestamp="1772215991000"
    expect(items[2]).toMatchObject({
      title: 'NASA revamps Artemis moon landing program by modeling it after speedy Apollo',
      published_at: '2026-02-27T15:34:59.000Z',
      // its repeat in the right rail (L17149) has data-no-media; the first promo's image stands
      image_url:
        'https://dims.apnews.com/dims4/default/a164da8/2147483647/strip/true/crop/8296x5531+0+0/resize/599x399!/quality/90/?url=https%3A%2F%2Fassets.apnews.com%2Fb1%2F09%2Fcc96912c7320670fab035bf25796%2Fbbbfb45659774d8284f5daf352718df0',
    });
    // L17248: the right rail's one new story, a photo gallery with data-no-media and data-posted-date-timestamp="1772556401000"
    expect(items[5]).toEqual({
      position: 6,
      title: 'Photos of a blood-red moon and total lunar eclipse',
      url: 'https://apnews.com/photo-gallery/total-lunar-eclipse-blood-moon-b20ee3da55e4f7544e2488dd19f91527',
      published_at: '2026-03-03T16:46:41.000Z',
      summary: null,
      image_url: null,
    });
    // L24125: a promo with no timestamp attributes at all
    expect(items[27]).toEqual({
      position: 28,
      title: 'How ‘lab-grown’ meat cultivated from animal cells could offer another sustainable food option', // L24223
      url: 'https://projects.apnews.com/features/2023/the-protein-problem/lab-grown-cultivated-meat/index.html',
      published_at: null,
      summary:
        'Meat cultivated from cells — with no need to raise and slaughter an animal — is starting to show up in restaurants around the world. But can it be made cheaply enough to displace animal agriculture?', // L24238
      image_url:
        'https://dims.apnews.com/dims4/default/bb2f401/2147483647/strip/true/crop/3317x2211+0+0/resize/727x485!/quality/90/?url=https%3A%2F%2Fassets.apnews.com%2F9a%2Fd8%2F5828c9f197a8074f3db38991bbee%2F40b4a371913046bca89852ba3eb755f1',
    });
  });

  it('an AP promo dated by a bsp-timestamp inside it, as AP times its articles, is read too', () => {
    const html =
      '<html><body><div class="PagePromo"><h3 class="PagePromo-title"><a href="/article/x-1"><span>X</span></a></h3><div class="PagePromo-date"><bsp-timestamp data-timestamp="1725369093000"></bsp-timestamp></div></div></body></html>';
    expect(parseListing(html, 'https://apnews.com/hub/science', CAPTURED)[0]!.published_at).toBe('2024-09-03T13:11:33.000Z');
  });
});

/** Hand-written (test/fixtures/pages/PROVENANCE.md, "Publisher listings"): no real generic section page was captured. */
describe('parseListing: generic section page (synthetic)', () => {
  const items = parseListing(readFixture('synthetic/publisher-section-generic.html'), 'https://www.rivertonledger.example/local/', FETCHED);

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
    expect(items[3]).toMatchObject({
      url: 'https://www.rivertonledger.example/local/2026/02/19/library-late-fees/',
      published_at: '2026-02-19T09:30:00.000Z',
      summary: null,
    });
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
      {
        position: 1,
        title: 'Story A',
        url: 'https://www.example-news.com/world/a',
        published_at: '2026-02-20T10:00:00.000Z',
        summary: "A's dek.",
        image_url: 'https://img.example-news.com/a.jpg',
      },
      {
        position: 2,
        title: 'Story B',
        url: 'https://www.example-news.com/world/b',
        published_at: '2026-02-19T08:00:00.000Z',
        summary: "B's dek.",
        image_url: null,
      },
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
      {
        position: 1,
        title: 'Story one',
        url: 'https://www.reuters.com/world/europe/story-one-2026-02-20/',
        published_at: '2026-02-20T12:00:00.000Z',
        summary: 'First dek.',
        image_url: 'https://www.reuters.com/resizer/x.jpg',
      },
      {
        position: 2,
        title: 'Story two',
        url: 'https://www.reuters.com/world/europe/story-two-2026-02-20/',
        published_at: '2026-02-20T18:00:00.000Z',
        summary: null,
        image_url: null,
      },
    ]);
  });

  const NOTHING =
    'no stories on the page (no JSON-LD ItemList, and no div.PagePromo, [data-testid="MediaStoryCard"] or <article> card with a headline link on the page\'s own site): the layout changed or the page is not a listing';

  it('a page that lists nothing is a ScrapeError naming what a listing has', () => {
    const html =
      '<html><body><h1>Subscribe</h1><p>Nothing here.</p><article><h2><a href="https://other.example.org/x">Off-site only</a></h2></article></body></html>';
    expect(scrapeError(() => parseListing(html, PAGE, FETCHED)).detail).toBe(NOTHING);
  });

  it('real pages of another layout (search results) are ScrapeErrors, never stories with empty fields', () => {
    const ddg = readFixture('web-search/duckduckgo-html-search-openclaw-2026.html');
    expect(scrapeError(() => parseListing(ddg, 'https://html.duckduckgo.com/html/?q=openclaw', FETCHED)).detail).toBe(NOTHING);
    const google = readFixture('web-search/google-com-search-test-de-ui-2022.html');
    expect(scrapeError(() => parseListing(google, 'https://www.google.com/search?q=test', FETCHED)).detail).toBe(NOTHING);
  });
});
