import { describe, expect, it } from 'vitest';
import { readFixture, scrapeError } from '../../../test/helpers/pages.js';
import { parseLaunch, parseLeaderboard } from './parse.js';

/** Hand-written pages (no real capture exists): see synthetic/LAUNCHES-PUBLISHER.PROVENANCE.md. */
const ORIGIN = 'https://www.producthunt.com';

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
    });
    expect(launches[4]).toMatchObject({ name: 'Ledgerly 2.0', tagline: 'Bookkeeping for freelancers, now with receipts by email', topics: ['Fintech', 'Freelance', 'Productivity'] });
    expect(launches[7]).toMatchObject({ name: 'StackShelf', votes: 96, comments: 0, topics: ['Developer Tools', 'Bookmarks'] });
  });

  it('a day page with no posts but the "No launches yet" message is an empty day', () => {
    const html = `<html><body><main><h1>Best of November 24, 2026</h1>
      <a href="/leaderboard/daily/2026/11/23">← Nov 23</a>
      <div class="text-16 text-light-gray">No launches yet. Check back at 12:01 AM PT.</div></main></body></html>`;
    expect(parseLeaderboard(html, ORIGIN)).toEqual([]);
  });

  it('a page that is no leaderboard is a ScrapeError', () => {
    const detail = /^no post items on the page/;
    expect(scrapeError(() => parseLeaderboard(readFixture('synthetic/launches-post-quillmate.html'), ORIGIN)).detail).toMatch(detail);
    expect(scrapeError(() => parseLeaderboard(readFixture('synthetic/launches-not-found.html'), ORIGIN)).detail).toMatch(detail);
    // the message alone, without the leaderboard's day navigation
    expect(scrapeError(() => parseLeaderboard('<html><body><p>No launches yet</p></body></html>', ORIGIN)).detail).toMatch(detail);
  });

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
    expect(scrapeError(() => parseLaunch(readFixture('synthetic/launches-leaderboard-2026-11-23.html'), ORIGIN)).detail).toBe('a leaderboard, not a launch page');
    expect(scrapeError(() => parseLaunch('<html><body><main><p>Loading…</p></main></body></html>', ORIGIN)).detail).toMatch(/^no launch name \(h1\)/);
  });
});
