import { describe, expect, it } from 'vitest';
import { readFixture, scrapeError } from '../../../test/helpers/pages.js';
import { parseLaunch, parseLeaderboard, type Launch } from './parse.js';

const ORIGIN = 'https://www.producthunt.com';

/**
 * The real home page of 2026-03-08 (test/fixtures/pages/PROVENANCE.md, launches/). Every
 * expected value below was read in the HTML file by hand: "state" means the Apollo push
 * `(window[Symbol.for("ApolloSSRDataTransport")] ??= []).push({…"events":[…]})` in the
 * first inline script of <head>, whose `next` events carry the query results; "markup" means
 * the `section[data-test="post-item-<id>"]` cards in <body>.
 */
const HOME = 'launches/producthunt_homepage_2026-03-08.html';

describe('parseLeaderboard: the real home page, from its embedded Apollo state', () => {
  const html = readFixture(HOME);
  const launches = parseLeaderboard(html, ORIGIN);
  const of = (section: string) => launches.filter((l) => l.section === section);

  it('reads the four sections in page order, with the posts the markup folds away', () => {
    // state: today's `homefeed(kind:FEATURED section:TODAY)` items hold 5 Posts and 1 Ad
    // (33262); `yesterday:`, `lastWeek:` and `lastMonth:homefeed(…)` each 6 Posts and 1 Ad
    // (33228). The markup shows only 5 cards a section: "hideAfter":6 folds the 6th post
    // under "See all of …" (Variant, Claude Code Remote Control, Claude Opus 4.6 have no card).
    expect(launches).toHaveLength(23);
    expect(launches.map((l) => l.section)).toEqual([
      ...Array(5).fill('today'),
      ...Array(6).fill('yesterday'),
      ...Array(6).fill('last_week'),
      ...Array(6).fill('last_month'),
    ]);
    // state, "Yesterday's Top Products" items, in order (the `"slug"` of each Post)
    expect(of('yesterday').map((l) => [l.rank, l.slug])).toEqual([
      [1, 'testsprite-2-1'], // "dailyRank":"1"
      [2, 'copperlane'], // "dailyRank":"2"
      [3, 'codex-security'], // "dailyRank":"3"
      [4, 'fastergh'], // "dailyRank":"4"
      [5, '21st-agents-sdk'], // "dailyRank":"5" (after the Ad 33228)
      [6, 'variant-2'], // "dailyRank":"6": in the state only, no post-item card
    ]);
  });

  it("reads the first launch whole: today's first post, votes hidden", () => {
    expect(launches[0]).toEqual({
      // state: today's items carry "dailyRank":null (the list has "randomization":true), so the rank is its position
      rank: 1,
      slug: 'song-sweeper', // state: {"__typename":"Post","id":"1091010","name":"Song Sweeper","slug":"song-sweeper"
      name: 'Song Sweeper',
      tagline: 'Clean up your music library', // state: "tagline":"Clean up your music library"
      topics: ['iOS', 'Music'], // state: "topics":{…"edges":[…"name":"iOS"…"name":"Music"…]}; markup: /topics/ios, /topics/music links
      // state: "hideVotesCount":true (its "latestScore":92 is not shown); markup: the vote button reads "—"
      // under "For the first 4 hours of the day, we're hiding upvotes"
      votes: null,
      comments: 3, // state: "commentsCount":3; markup: the unlabeled button's <p>3</p>
      url: 'https://www.producthunt.com/products/song-sweeper', // state: "product":{…"slug":"song-sweeper"}; markup: <a href="/products/song-sweeper">
      thumbnail_url: 'https://ph-files.imgix.net/ed32d581-5292-4f5d-9da9-585a03800b7e.png', // state: "thumbnailImageUuid":"ed32d581-….png"; markup: img src on ph-files.imgix.net
      section: 'today', // state: the result of `homefeed(kind:FEATURED section:TODAY)`, "title":"Top Products Launching Today"
      launched_at: '2026-03-08T08:01:00.000Z', // state: "featuredAt":"2026-03-08T00:01:00-08:00"
    });
  });

  it("reads the last launch whole: last month's sixth post, ranked by the month", () => {
    expect(launches.at(-1)).toEqual({
      // state: "dailyRank":"28","weeklyRank":"2","monthlyRank":"6" in a list with "period":"monthly": the month's rank counts
      rank: 6,
      slug: 'claude-opus-4-6', // state: {"__typename":"Post","id":"1074139","name":"Claude Opus 4.6","slug":"claude-opus-4-6"
      name: 'Claude Opus 4.6',
      tagline: 'Claude’s most advanced model for agentic tasks', // state: "tagline" (with a typographic ’)
      topics: ['Productivity', 'Developer Tools', 'Artificial Intelligence'], // state: its three topic edges
      votes: 721, // state: "hideVotesCount":false, "latestScore":721 ("launchDayScore":560 is the launch day's)
      comments: 35, // state: "commentsCount":35
      url: 'https://www.producthunt.com/products/claude', // state: "product":{…"id":"576351","slug":"claude"}
      thumbnail_url: 'https://ph-files.imgix.net/00b39dff-fb57-4e3d-97eb-f747b25b4497.jpeg', // state: "thumbnailImageUuid"
      section: 'last_month', // state: `lastMonth:homefeed(kind:FEATURED section:LAST_MONTH)`, "title":"Last Month's Top Products"
      launched_at: '2026-02-06T08:01:00.000Z', // state: "featuredAt":"2026-02-06T00:01:00-08:00"
    });
  });

  it("tells yesterday's launches from today's: the section, the launch day and the shown votes", () => {
    const testsprite = launches.find((l) => l.slug === 'testsprite-2-1');
    expect(testsprite).toMatchObject({
      section: 'yesterday', // state: first Post of `yesterday:homefeed(…section:YESTERDAY)`, "title":"Yesterday's Top Products"
      rank: 1, // state: "dailyRank":"1"; markup: the name link reads "1. TestSprite 2.1"
      votes: 417, // state: "latestScore":417 ("launchDayScore":406); markup: vote button <p>417</p>
      comments: 40, // state: "commentsCount":40; markup: <p>40</p>
      launched_at: '2026-03-07T08:01:00.000Z', // state: "featuredAt":"2026-03-07T00:01:00-08:00"
      // The launch's own slug differs from its product's: state "slug":"testsprite-2-1", "product":{…"slug":"testsprite"}
      url: 'https://www.producthunt.com/products/testsprite', // markup: <a href="/products/testsprite">
    });
    // state: all five of today's Posts have "hideVotesCount":true; none of the 18 others does
    expect(of('today').map((l) => l.votes)).toEqual([null, null, null, null, null]);
    expect(launches.filter((l) => l.section !== 'today').every((l) => typeof l.votes === 'number')).toBe(true);
    // state: every one of today's Posts has "featuredAt":"2026-03-08T00:01:00-08:00"
    expect(new Set(of('today').map((l) => l.launched_at))).toEqual(new Set(['2026-03-08T08:01:00.000Z']));
  });

  it('keeps a launch listed in two sections once in each, ranked by each list', () => {
    // state: KiloClaw ("id":"1080572") is the 1st Post of lastWeek ("weeklyRank":"1") and the
    // 4th of lastMonth ("monthlyRank":"4"); markup: "1. KiloClaw" and "4. KiloClaw"
    expect(launches.filter((l) => l.slug === 'kiloclaw').map((l) => [l.section, l.rank, l.votes])).toEqual([
      ['last_week', 1, 844],
      ['last_month', 4, 844],
    ]);
  });

  it('reads the state although it is a JavaScript literal, not JSON', () => {
    // head script: "_R_1i9j9ivb_":{"data":undefined,"loading":true,…}
    expect(html).toContain('"data":undefined');
    expect(launches.length).toBeGreaterThan(0);
  });
});

describe('parseLeaderboard: the real home page, from its markup alone', () => {
  // The same page with its Apollo push cut out: the markup fallback on a real layout.
  const markupOnly = readFixture(HOME).replace(/<script>\(window\[Symbol\.for\("ApolloSSRDataTransport"\)\][\s\S]*?<\/script>/, '');
  const launches = parseLeaderboard(markupOnly, ORIGIN);

  it('reads the 20 post-item cards, 5 a section, and skips the ad slots', () => {
    expect(markupOnly).not.toContain('ApolloSSRDataTransport');
    // markup: 20 `section[data-test="post-item-…"]` (5 in each homepage-section-*) and 5
    // `ad-slot-…` ("Wispr Flow: Dictation That Works Everywhere", "Promoted")
    expect(launches).toHaveLength(20);
    expect(launches.map((l) => l.name)).not.toContain('Wispr Flow: Dictation That Works Everywhere');
    expect(launches.map((l) => `${l.section} ${l.rank}`)).toEqual(
      ['today', 'yesterday', 'last_week', 'last_month'].flatMap((s) => [1, 2, 3, 4, 5].map((r) => `${s} ${r}`)),
    );
  });

  it('reads the first card whole: no rank prefix, hidden votes, and no launch time', () => {
    expect(launches[0]).toEqual({
      rank: 1, // markup: first card of data-test="homepage-section-today"; its name has no "N." prefix
      slug: 'song-sweeper', // markup: <a href="/products/song-sweeper"> (the product's slug: the card shows no other)
      name: 'Song Sweeper', // markup: span[data-test="post-name-1091010"] > a
      tagline: 'Clean up your music library', // markup: the span after the name
      topics: ['iOS', 'Music'], // markup: <a href="/topics/ios">iOS</a> • <a href="/topics/music">Music</a>
      votes: null, // markup: button[data-test="vote-button"] <p>—</p>
      comments: 3, // markup: the unlabeled button's <p>3</p>
      url: 'https://www.producthunt.com/products/song-sweeper',
      // markup: the card's img src
      thumbnail_url:
        'https://ph-files.imgix.net/ed32d581-5292-4f5d-9da9-585a03800b7e.png?auto=compress&codec=mozjpeg&cs=strip&auto=format&w=48&h=48&fit=crop&frame=1',
      section: 'today', // markup: inside div[data-test="homepage-section-today"]
      launched_at: null, // markup: no time on a card
    });
  });

  it("reads the last card whole: last month's 5th", () => {
    expect(launches.at(-1)).toEqual({
      rank: 5, // markup: post-item-1076729, the name link reads "5. Lovon AI Therapy"
      slug: 'lovon', // markup: <a href="/products/lovon"> (state: the post's own slug is "lovon-ai-therapy")
      name: 'Lovon AI Therapy',
      tagline: 'Talk it out and feel better', // markup: the span after the name
      topics: ['Artificial Intelligence', 'Health'], // markup: /topics/artificial-intelligence, /topics/health
      votes: 785, // markup: vote button <p>785</p>
      comments: 277, // markup: unlabeled button <p>277</p>
      url: 'https://www.producthunt.com/products/lovon',
      thumbnail_url:
        'https://ph-files.imgix.net/a305efcb-9472-45be-a0c8-67a3fa16b54b.png?auto=compress&codec=mozjpeg&cs=strip&auto=format&w=48&h=48&fit=crop&frame=1',
      section: 'last_month', // markup: inside div[data-test="homepage-section-last-month"]
      launched_at: null,
    });
  });

  it("gives the product's slug where the launch's own differs", () => {
    // markup: post-item-1091578 "3. Codex Security" links <a href="/products/openai">; state: its "slug":"codex-security"
    expect(launches.find((l) => l.name === 'Codex Security')).toMatchObject({ section: 'yesterday', rank: 3, slug: 'openai', votes: 280, comments: 4 });
  });
});

describe('parseLeaderboard: a page of another kind', () => {
  it('a real page of another site is a ScrapeError naming what is missing', () => {
    const detail =
      'no launch list on the page: no Post list in an embedded Apollo state (ApolloSSRDataTransport) and no post items (section[data-test^="post-item-"]): the layout changed or the page is not a launch list';
    expect(scrapeError(() => parseLeaderboard(readFixture('publisher/reuters-article-israeli-tank-2024-03-07.html'), ORIGIN)).detail).toBe(detail);
    expect(scrapeError(() => parseLeaderboard(readFixture('web-news-search/google_search_tbm_nws_asthma_en-NZ_2021-02.html'), ORIGIN)).detail).toBe(detail);
  });
});

/**
 * Hand-written pages (synthetic/LAUNCHES-PUBLISHER.PROVENANCE.md), kept for what no real page
 * shows: a day's `/leaderboard/daily/` page with its day navigation, the older card (the name
 * link to `/posts/<slug>` reading "N. Name", the tagline as a second link, a `#comments` link,
 * an unnumbered `ad-slot`), a day with "No launches yet", and the launch page (no real one
 * was captured).
 */
describe('parseLeaderboard: the synthetic day page', () => {
  const launches = parseLeaderboard(readFixture('synthetic/launches-leaderboard-2026-11-23.html'), ORIGIN);

  it('reads the 8 posts in rank order and skips the promoted slot', () => {
    expect(launches.map((l) => [l.rank, l.slug])).toEqual([
      [1, 'quillmate'],
      [2, 'tidepool-db'],
      [3, 'orbit-notes'],
      [4, 'pixelhearth'],
      [5, 'ledgerly-2-0'],
      [6, 'mute-meet'],
      [7, 'greenroute'],
      [8, 'stackshelf'],
    ]);
    expect(launches.map((l) => l.name)).not.toContain('Shipfast Hosting');
  });

  it('reads every field of a post', () => {
    expect(launches[0]).toEqual({
      rank: 1,
      slug: 'quillmate',
      name: 'Quillmate',
      tagline: 'AI writing partner that learns your voice',
      topics: ['Writing', 'Productivity', 'Artificial Intelligence'],
      votes: 1204,
      comments: 112,
      url: 'https://www.producthunt.com/posts/quillmate',
      thumbnail_url:
        'https://ph-files.imgix.net/3f1c9a2e-7b41-4c55-9d0e-1a2b3c4d5e61.png?auto=compress&codec=mozjpeg&cs=strip&auto=format&w=64&h=64&fit=crop&frame=1',
      section: null,
      launched_at: null,
    } satisfies Launch);
    expect(launches[4]).toMatchObject({
      name: 'Ledgerly 2.0',
      tagline: 'Bookkeeping for freelancers, now with receipts by email',
      topics: ['Fintech', 'Freelance', 'Productivity'],
    });
    expect(launches[7]).toMatchObject({ name: 'StackShelf', votes: 96, comments: 0, topics: ['Developer Tools', 'Bookmarks'] });
  });

  it('a day page with no posts but the "No launches yet" message is an empty day', () => {
    const html = `<html><body><main><h1>Best of November 24, 2026</h1>
      <a href="/leaderboard/daily/2026/11/23">← Nov 23</a>
      <div class="text-16 text-light-gray">No launches yet. Check back at 12:01 AM PT.</div></main></body></html>`;
    expect(parseLeaderboard(html, ORIGIN)).toEqual([]);
  });

  it('a page that is no leaderboard is a ScrapeError', () => {
    const detail = /^no launch list on the page/;
    expect(scrapeError(() => parseLeaderboard(readFixture('synthetic/launches-post-quillmate.html'), ORIGIN)).detail).toMatch(detail);
    expect(scrapeError(() => parseLeaderboard(readFixture('synthetic/launches-not-found.html'), ORIGIN)).detail).toMatch(detail);
    // the message alone, without the leaderboard's day navigation
    expect(scrapeError(() => parseLeaderboard('<html><body><p>No launches yet</p></body></html>', ORIGIN)).detail).toMatch(detail);
  });

  // The real home page shows this card's shape; kept for what it does not: a "1.2K" count, a
  // repeated topic, a query on the link, a card without a name link.
  it('the newer layout: a span around a /products/ link, the count in an unlabeled button, "1.2K" votes, no rank prefix', () => {
    const html = `<html><body>
      <section data-test="post-item-77">
        <img src="/thumbs/77.png">
        <span data-test="post-name-77"><a href="/products/brightlane?utm_source=x">Brightlane</a></span>
        <span>Status pages your customers actually read</span>
        <div><a href="/topics/saas">SaaS</a> • <a href="/topics/saas">SaaS</a></div>
        <button><p>31</p></button>
        <button data-test="vote-button"><p>1.2K</p></button>
      </section>
      <section data-test="post-item-78"><div>no name link here</div></section>
    </body></html>`;
    expect(parseLeaderboard(html, ORIGIN)).toEqual([
      {
        rank: 1,
        slug: 'brightlane',
        name: 'Brightlane',
        tagline: 'Status pages your customers actually read',
        topics: ['SaaS'],
        votes: 1200,
        comments: 31,
        url: 'https://www.producthunt.com/products/brightlane',
        thumbnail_url: 'https://www.producthunt.com/thumbs/77.png',
        section: null,
        launched_at: null,
      },
    ]);
  });
});

describe('parseLaunch', () => {
  const detail = parseLaunch(readFixture('synthetic/launches-post-quillmate.html'), ORIGIN);

  it('reads the header, description and counts', () => {
    expect(detail).toMatchObject({
      slug: 'quillmate',
      name: 'Quillmate',
      tagline: 'AI writing partner that learns your voice',
      description:
        'Quillmate drafts emails, posts and docs in your own voice.\nConnect your sent mail or paste a few samples, and it learns how you write: the greetings you use, how long your sentences run, when you reach for a joke.',
      website: 'https://quillmate.app/?ref=producthunt',
      launched_at: '2026-11-23T08:01:00.000Z',
      // the header nav's "AI" link is not a topic of the launch
      topics: ['Writing', 'Productivity', 'Artificial Intelligence'],
      votes: 1204,
    });
  });

  it('reads hunter and makers from their labeled sections, not from comment badges', () => {
    expect(detail?.hunter).toEqual({ name: 'Dana Whitfield', username: 'danawhit', url: 'https://www.producthunt.com/@danawhit' });
    expect(detail?.makers).toEqual([
      { name: 'Priya Kannan', username: 'priya_k', url: 'https://www.producthunt.com/@priya_k' },
      { name: 'Tomasz Wren', username: 'tomasz', url: 'https://www.producthunt.com/@tomasz' },
    ]);
  });

  it('reads the gallery images, absolute and once each (the carousel repeats its first slide)', () => {
    expect(detail?.images).toEqual([
      'https://ph-files.imgix.net/9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e01.png?auto=format&w=1270',
      'https://ph-files.imgix.net/9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e02.png?auto=format&w=1270',
      'https://www.producthunt.com/static/gallery/quillmate-3.gif',
    ]);
  });

  it('reads comments and replies in page order, each with its own body, time and votes', () => {
    expect(detail?.comments).toEqual([
      {
        author: 'Priya Kannan',
        username: 'priya_k',
        body: 'Hey Product Hunt! 👋 Priya here, one of the makers.\nWe built Quillmate because every AI draft we got sounded like a press release. Ask us anything!',
        posted_at: '2026-11-23T08:03:12.000Z',
        votes: 48,
      },
      {
        author: 'Dana Whitfield',
        username: 'danawhit',
        body: 'Been using the beta for a month, it nails my sign-offs. Congrats on the launch!',
        posted_at: '2026-11-23T08:20:45.000Z',
        votes: 7,
      },
      {
        author: 'Min-jun Koh',
        username: 'mkoh',
        body: 'Does it work in languages other than English? I mostly write in Korean (see my posts).',
        posted_at: '2026-11-23T09:47:00.000Z',
        votes: null,
      },
    ]);
  });

  it("collects the product's and makers' links, not a commenter's or the site's own", () => {
    expect(detail?.contact).toEqual({
      website: 'https://quillmate.app/?ref=producthunt',
      x: 'https://x.com/quillmateapp',
      linkedin: 'https://www.linkedin.com/in/priya-kannan-quill/',
      github: 'https://github.com/quillmate/quillmate-cli',
      facebook: null,
      instagram: null,
      youtube: 'https://www.youtube.com/watch?v=q1W2e3R4t5Y',
      email: 'hello@quillmate.app',
    });
  });

  it('the not-found page is null', () => {
    expect(parseLaunch(readFixture('synthetic/launches-not-found.html'), ORIGIN)).toBeNull();
  });

  it('a leaderboard or a page without a launch header is a ScrapeError', () => {
    expect(scrapeError(() => parseLaunch(readFixture('synthetic/launches-leaderboard-2026-11-23.html'), ORIGIN)).detail).toBe(
      'a leaderboard, not a launch page',
    );
    expect(scrapeError(() => parseLaunch('<html><body><main><p>Loading…</p></main></body></html>', ORIGIN)).detail).toMatch(/^no launch name \(h1\)/);
  });
});
