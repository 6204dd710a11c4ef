/**
 * Feed polling, black box, against a loopback web site (test/helpers/feed-server.ts): new
 * articles from RSS 2.0, RSS 1.0 (RDF) and Atom feeds are listed and counted; an edited headline,
 * or an edited page alone, becomes a second revision stamped with the time it was seen; an
 * unchanged round stores nothing and is answered 304; each kind of failing feed is reported and
 * never stops the round; a failing outlet backs off; the `sources` CLI manages outlets; and an
 * `ingest --once` killed with SIGKILL mid-round, then run again, stores every item exactly once.
 *
 * Feeds and pages are synthetic (built by the helper) except one captured AP article page from
 * test/fixtures/pages/publisher/, served to exercise real extraction.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { OutletReport, Poller } from '../src/ingest/index.js';
import { Store } from '../src/store/index.js';
import { cli, ROOT } from './helpers/cli.js';
import { ATOM, HTML, RDF, RSS, articlePage, atom, rdf, rss2, startFeedServer, type FeedEntry, type FeedServer } from './helpers/feed-server.js';
import { expectItemShape, expectNewestFirst, startHarness, type Harness } from './helpers/service.js';
import { writeTinyModel } from './helpers/tiny-model.js';

const HOUR = 3600;
/** Feed dates are in the recent past: young enough that pages are revisited (INGEST_REVISIT_HOURS 48). */
const NOW = Math.floor(Date.now() / 1000);
const iso = (sec: number) => new Date(sec * 1000).toISOString().replace('.000Z', 'Z');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The test site is on loopback: the operator's explicit setting lets its feeds' host be polled. */
const LOOPBACK_FEEDS = { INGEST_ALLOW_PRIVATE: 'on' };

const root = mkdtempSync(join(tmpdir(), 'newsmatch-ingest-'));
// A real page (test/fixtures/pages, see PROVENANCE.md there).
const AP_PAGE = readFileSync(new URL('./fixtures/pages/publisher/apnews-article-presidential-campaigns-2024-09-03.html', import.meta.url));

let site: FeedServer;
const url = (path: string) => `${site.base}${path}`;

beforeAll(async () => {
  site = await startFeedServer();
});

afterAll(async () => {
  await site?.close();
  rmSync(root, { recursive: true, force: true });
});

interface Round {
  reports: Map<string, OutletReport>;
  /** Unix seconds just before and just after the round. */
  start: number;
  end: number;
  /** Index in site.log of the round's first request. */
  firstHit: number;
}

/** One forced round, then the index caught up, as `ingest --once` does. */
async function pollRound(h: Harness, poller: Poller): Promise<Round> {
  const firstHit = site.log.length;
  const start = Math.floor(Date.now() / 1000);
  const reports = await poller.round({ force: true });
  const end = Math.ceil(Date.now() / 1000);
  h.service.sync();
  await h.service.maintenance.flush();
  return { reports: new Map(reports.map((r) => [r.outlet, r])), start, end, firstHit };
}

/** The round's requests for a path. */
const hitsIn = (r: Round, path: string) => site.log.slice(r.firstHit).filter((x) => x.path === path);

/** The no-query listing of one source, newest first, all on one page. */
async function listing(h: Harness, source: string, includeEdits = false): Promise<any[]> {
  const res = await h.match({ sources: [source], include_edits: includeEdits, limit: 100 });
  expect(res.status, res.raw).toBe(200);
  expect(res.body.next_cursor).toBeNull();
  for (const it of res.body.items) expectItemShape(it, false);
  expectNewestFirst(res.body.items);
  return res.body.items;
}

async function sourcesByName(h: Harness): Promise<Map<string, any>> {
  const res = await h.inject({ url: '/v1/sources' });
  expect(res.status, res.raw).toBe(200);
  return new Map(res.body.sources.map((s: any) => [s.name, s]));
}

/** Full text of an article's revisions, oldest first (the service stores it; no endpoint returns it). */
function storedTexts(h: Harness, articleUrl: string): string[] {
  const article = h.service.store.articles.get(articleUrl);
  return (article?.ords ?? []).map((ord) => h.service.store.texts.get(ord) ?? '');
}

const LONG_DESCRIPTION = Array.from(
  { length: 12 },
  (_, i) => `Paragraph ${i + 1} of a synthetic description, long enough that the snippet must be cut at a word boundary.`,
).join(' ');

describe('new articles from each feed format', () => {
  let h: Harness;
  let poller: Poller;
  const rssItems: FeedEntry[] = [
    { title: 'Harbour cranes idle as dock talks stall', link: '', description: LONG_DESCRIPTION, date: NOW - 5 * HOUR },
    { title: 'Council approves "fast" tram line & depot', link: '', description: '<p>The <b>council</b> voted 7–2 on Tuesday.</p>', date: NOW - 3 * HOUR },
    { title: 'Night market returns to the old quay', link: '', date: NOW - 1 * HOUR },
  ];
  const rdfItems: FeedEntry[] = [
    { title: 'Rail strike called off after late offer', link: '', description: 'Unions accepted a revised pay offer overnight.', date: NOW - 7 * HOUR },
    { title: 'Storm warning for the northern coast', link: '', description: 'Gusts of up to 120 km/h are expected.', date: NOW - 2 * HOUR },
  ];
  const atomItems: FeedEntry[] = [
    { title: 'Library extends opening hours', link: '', description: 'From <em>March</em>, the central library opens at 7.', date: NOW - 9 * HOUR },
    { title: 'Airport adds routes to three capitals', link: '', description: 'New flights start in spring.', date: NOW - 4 * HOUR },
  ];
  const formats = [
    { name: 'Fmt Rss Desk', path: '/fmt/rss.xml', items: rssItems, snippets: [LONG_DESCRIPTION, 'The council voted 7–2 on Tuesday.', ''] },
    {
      name: 'Fmt Rdf Desk',
      path: '/fmt/rdf.rdf',
      items: rdfItems,
      snippets: ['Unions accepted a revised pay offer overnight.', 'Gusts of up to 120 km/h are expected.'],
    },
    {
      name: 'Fmt Atom Desk',
      path: '/fmt/atom.xml',
      items: atomItems,
      snippets: ['From March, the central library opens at 7.', 'New flights start in spring.'],
    },
  ];

  beforeAll(async () => {
    for (const f of formats) f.items.forEach((it, i) => (it.link = url(`${f.path.replace(/\.\w+$/, '')}/story-${i}`)));
    site.set('/fmt/rss.xml', { body: rss2('Fmt Rss Desk', rssItems), type: RSS });
    site.set('/fmt/rdf.rdf', { body: rdf('Fmt Rdf Desk', rdfItems), type: RDF });
    site.set('/fmt/atom.xml', { body: atom('Fmt Atom Desk', atomItems), type: ATOM });
    h = await startHarness({ corpus: null, env: LOOPBACK_FEEDS });
    for (const f of formats) h.service.outlets.add({ name: f.name, homepage: `${site.base}/fmt/`, feeds: [url(f.path)], interval: '5m' });
    poller = h.service.createPoller();
  });

  afterAll(async () => {
    await poller?.stop();
    await h?.close();
  });

  it('one round lists every item of RSS 2.0, RDF and Atom: title, snippet ≤ 300, event_time = the feed date', async () => {
    const r = await pollRound(h, poller);
    for (const f of formats) {
      expect(r.reports.get(f.name)).toMatchObject({
        feeds: 1,
        notModified: 0,
        items: f.items.length,
        newArticles: f.items.length,
        newRevisions: f.items.length,
        unchanged: 0,
        pagesFetched: 0,
        errors: [],
      });
      const items = await listing(h, f.name);
      const want = f.items.map((it, i) => ({ ...it, snippet: f.snippets[i] })).sort((a, b) => b.date - a.date);
      expect(items.map((it) => it.title)).toEqual(want.map((w) => w.title));
      expect(items.map((it) => it.source_url)).toEqual(want.map((w) => w.link));
      expect(items.map((it) => it.event_time)).toEqual(want.map((w) => iso(w.date)));
      for (const [i, it] of items.entries()) {
        expect(it.source_name).toBe(f.name);
        expect(it.body.length).toBeLessThanOrEqual(300);
        if (want[i].snippet.length <= 300) expect(it.body).toBe(want[i].snippet);
        else {
          // Cut at a word boundary, marked with an ellipsis.
          expect(it.body.length).toBeGreaterThanOrEqual(100);
          expect(it.body.endsWith('…')).toBe(true);
          expect(want[i].snippet.startsWith(it.body.slice(0, -1))).toBe(true);
          expect(want[i].snippet[it.body.length - 1]).toBe(' ');
        }
      }
      // One request, with the descriptive User-Agent.
      const hits = hitsIn(r, f.path);
      expect(hits).toHaveLength(1);
      expect(hits[0].userAgent).toMatch(/^newsmatch\//);
    }
  });

  it("GET /v1/sources counts each outlet's articles, with its homepage and newest time", async () => {
    const sources = await sourcesByName(h);
    for (const f of formats) {
      expect(sources.get(f.name)).toEqual({
        name: f.name,
        homepage: `${site.base}/fmt/`,
        article_count: f.items.length,
        last_event_time: iso(Math.max(...f.items.map((i) => i.date))),
      });
    }
  });
});

describe('edits: a changed headline in the feed is a new revision', () => {
  let h: Harness;
  let poller: Poller;
  const items: FeedEntry[] = [
    { title: 'Mayor opens the new bridge', link: '', description: 'The bridge links the two halves of the old town.', date: NOW - 2 * HOUR },
    { title: 'Ferry timetable changes in May', link: '', description: 'Fewer crossings on Sundays.', date: NOW - 4 * HOUR },
  ];
  const EDITED = 'Mayor opens the new bridge two years late';
  const publish = () => site.set('/edit/feed.xml', { body: rss2('Edit Desk', items), type: RSS });
  let first: Round;
  let second: Round;

  beforeAll(async () => {
    items.forEach((it, i) => (it.link = url(`/edit/story-${i}`)));
    publish();
    h = await startHarness({ corpus: null, env: LOOPBACK_FEEDS });
    h.service.outlets.add({ name: 'Edit Desk', homepage: `${site.base}/edit/`, feeds: [url('/edit/feed.xml')], interval: '5m' });
    poller = h.service.createPoller();
  });

  afterAll(async () => {
    await poller?.stop();
    await h?.close();
  });

  it('round 1 stores both articles; round 2, after the headline changed, stores one revision of it', async () => {
    first = await pollRound(h, poller);
    expect(first.reports.get('Edit Desk')).toMatchObject({ newArticles: 2, newRevisions: 2, errors: [] });

    items[0] = { ...items[0], title: EDITED };
    publish();
    second = await pollRound(h, poller);
    expect(second.reports.get('Edit Desk')).toMatchObject({ notModified: 0, items: 2, newArticles: 0, newRevisions: 1, unchanged: 1, errors: [] });
    expect(hitsIn(second, '/edit/feed.xml').map((x) => x.status)).toEqual([200]);
  });

  it('include_edits shows both revisions; the edit carries the time it was observed', async () => {
    const all = await listing(h, 'Edit Desk', true);
    expect(all).toHaveLength(3);
    const revs = all.filter((it) => it.source_url === items[0].link);
    expect(revs).toHaveLength(2);
    const [edit, original] = revs; // newest first
    expect(edit.title).toBe(EDITED);
    expect(original.title).toBe('Mayor opens the new bridge');
    expect(original.event_time).toBe(iso(items[0].date));
    expect(edit.event_time >= iso(second.start), `${edit.event_time} is before the round started`).toBe(true);
    expect(edit.event_time <= iso(second.end)).toBe(true);
    expect(edit.body).toBe(original.body);
    expect(edit.id).not.toBe(original.id);
  });

  it('by default a row is the first revision at its original time', async () => {
    const rows = await listing(h, 'Edit Desk');
    expect(rows.map((it) => [it.title, it.event_time])).toEqual([
      ['Mayor opens the new bridge', iso(items[0].date)],
      ['Ferry timetable changes in May', iso(items[1].date)],
    ]);
    const sources = await sourcesByName(h);
    expect(sources.get('Edit Desk')?.article_count).toBe(2);
  });

  it('an unchanged round stores nothing and the feed answers 304 to the stored ETag', async () => {
    const before = h.service.store.nextOrd();
    const third = await pollRound(h, poller);
    expect(third.reports.get('Edit Desk')).toMatchObject({ notModified: 1, items: 0, newArticles: 0, newRevisions: 0, errors: [] });
    const hits = hitsIn(third, '/edit/feed.xml');
    expect(hits).toHaveLength(1);
    expect(hits[0].status).toBe(304);
    expect(hits[0].ifNoneMatch).toMatch(/^"[0-9a-f]+"$/);
    expect(h.service.store.nextOrd()).toBe(before);
    expect(await listing(h, 'Edit Desk', true)).toHaveLength(3);
  });
});

describe('fetchArticles: pages are fetched, extracted, and revisited conditionally', () => {
  let h: Harness;
  let poller: Poller;
  const pageText = (n: number) =>
    `Synthetic article ${n}, first paragraph: the harbour board met on Monday.\n\nSecond paragraph: it agreed to repave the quay by the autumn.`;
  const EDITED_TEXT = `${pageText(0)}\n\nCorrection: the board met on Tuesday, not Monday.`;
  const items: FeedEntry[] = [
    { title: 'Harbour board agrees quay repairs', link: '', description: 'The quay will be repaved.', date: NOW - 2 * HOUR },
    { title: 'School term dates set for next year', link: '', description: 'Term starts on 2 September.', date: NOW - 3 * HOUR },
    {
      title: 'The presidential campaigns brace for a sprint to Election Day',
      link: '',
      description: 'After a summer of historic tumult.',
      date: NOW - 1 * HOUR,
    },
  ];
  const pagePath = (i: number) => (i === 2 ? '/page/ap-campaigns' : `/page/story-${i}`);
  const setPage = (i: number, text: string) =>
    site.set(pagePath(i), { body: articlePage({ headline: items[i].title, text, date: items[i].date }), type: HTML });
  let round1: Round;
  let round2: Round;

  beforeAll(async () => {
    items.forEach((it, i) => (it.link = url(pagePath(i))));
    site.set('/page/feed.xml', { body: rss2('Page Desk', items), type: RSS });
    setPage(0, pageText(0));
    setPage(1, pageText(1));
    // A real page (captured from apnews.com): no articleBody, so Readability extracts it.
    site.set(pagePath(2), { body: AP_PAGE, type: HTML });
    h = await startHarness({ corpus: null, env: LOOPBACK_FEEDS });
    h.service.outlets.add({ name: 'Page Desk', homepage: `${site.base}/page/`, feeds: [url('/page/feed.xml')], fetchArticles: true, interval: '5m' });
    poller = h.service.createPoller();
  });

  afterAll(async () => {
    await poller?.stop();
    await h?.close();
  });

  it('round 1 fetches every page and stores its main text (JSON-LD articleBody; Readability on the real page)', async () => {
    round1 = await pollRound(h, poller);
    expect(round1.reports.get('Page Desk')).toMatchObject({ items: 3, newArticles: 3, newRevisions: 3, pagesFetched: 3, errors: [] });
    expect(storedTexts(h, items[0].link)).toEqual([pageText(0)]);
    expect(storedTexts(h, items[1].link)).toEqual([pageText(1)]);
    const [ap] = storedTexts(h, items[2].link);
    expect(ap.startsWith('LA CROSSE, Wis. (AP) — After a summer of historic tumult')).toBe(true);
    expect(ap.length).toBeGreaterThan(3000);
    expect(ap).not.toMatch(/<\/?[a-z]+[\s>]/i);
    // The feed's headline and snippet are the row's.
    const rows = await listing(h, 'Page Desk');
    expect(rows.map((r) => r.title)).toEqual([items[2].title, items[0].title, items[1].title]);
    expect(rows[0].body).toBe('After a summer of historic tumult.');
  });

  it('an unchanged round: the feed and every page answer 304, nothing is stored', async () => {
    const before = h.service.store.nextOrd();
    const r = (round2 = await pollRound(h, poller));
    expect(r.reports.get('Page Desk')).toMatchObject({ notModified: 1, newArticles: 0, newRevisions: 0, unchanged: 3, pagesFetched: 3, errors: [] });
    for (const path of ['/page/feed.xml', pagePath(0), pagePath(1), pagePath(2)]) {
      const hits = hitsIn(r, path);
      expect(hits, path).toHaveLength(1);
      expect(hits[0].status, path).toBe(304);
    }
    expect(h.service.store.nextOrd()).toBe(before);
  });

  it('an edit to the page text alone (the feed still 304) is a revision on the next round, fetched conditionally', async () => {
    setPage(0, EDITED_TEXT);
    const r = await pollRound(h, poller);
    expect(r.reports.get('Page Desk')).toMatchObject({ notModified: 1, newArticles: 0, newRevisions: 1, unchanged: 2, errors: [] });
    const hits = hitsIn(r, pagePath(0));
    expect(hits).toHaveLength(1);
    expect(hits[0].status).toBe(200);
    // The ETag of the old page, the one that got a 304 the round before.
    expect(hits[0].ifNoneMatch).toMatch(/^"[0-9a-f]+"$/);
    expect(hits[0].ifNoneMatch).toBe(hitsIn(round2, pagePath(0))[0].ifNoneMatch);
    expect(hitsIn(r, '/page/feed.xml').map((x) => x.status)).toEqual([304]);

    expect(storedTexts(h, items[0].link)).toEqual([pageText(0), EDITED_TEXT]);
    const revs = (await listing(h, 'Page Desk', true)).filter((it) => it.source_url === items[0].link);
    expect(revs).toHaveLength(2);
    expect(revs.map((x) => x.title)).toEqual([items[0].title, items[0].title]);
    expect(revs[1].event_time).toBe(iso(items[0].date));
    expect(revs[0].event_time >= iso(r.start) && revs[0].event_time <= iso(r.end), revs[0].event_time).toBe(true);
    // The default row is still the first version.
    const rows = await listing(h, 'Page Desk');
    expect(rows).toHaveLength(3);
    expect(rows.find((x) => x.source_url === items[0].link)?.id).toBe(revs[1].id);
  });
});

describe('text mode: polled articles and edits are searchable by text', () => {
  let h: Harness;
  let poller: Poller;
  // Words the tiny model's tokenizer knows, so each headline has its own vector.
  const items: FeedEntry[] = [
    { title: 'rail workers strike over pay talks', link: '', description: 'union and government talks failed on monday', date: NOW - 6 * HOUR },
    { title: 'storm and flood hit farmers in the north', link: '', description: 'heavy rain and snow this week', date: NOW - 5 * HOUR },
    { title: 'bank rates rose after inflation report', link: '', description: 'the central bank said prices rose', date: NOW - 4 * HOUR },
    { title: 'football team won the league cup', link: '', description: 'the coach praised the players', date: NOW - 3 * HOUR },
  ];
  const EDITED = 'rail workers strike ends after pay deal';
  const publish = () => site.set('/model/feed.xml', { body: rss2('Model Wire', items), type: RSS });
  let edit: Round;

  beforeAll(async () => {
    items.forEach((it, i) => (it.link = url(`/model/story-${i}`)));
    publish();
    const modelDir = writeTinyModel(join(root, 'model'), { seed: 11 });
    h = await startHarness({ corpus: null, env: { ...LOOPBACK_FEEDS, BGE_M3_MODEL_DIR: modelDir, EMBED_DEVICE: 'cpu', EMBED_THREADS: '1' } });
    expect(h.service.embedder).not.toBeNull();
    h.service.outlets.add({ name: 'Model Wire', homepage: `${site.base}/model/`, feeds: [url('/model/feed.xml')], interval: '5m' });
    poller = h.service.createPoller();
  });

  afterAll(async () => {
    await poller?.stop();
    await h?.close();
  });

  it('a text query for a headline ranks that article first', async () => {
    const r = await pollRound(h, poller);
    expect(r.reports.get('Model Wire')).toMatchObject({ newArticles: 4, newRevisions: 4, errors: [] });
    expect(h.service.store.unembeddedCount()).toBe(0);
    for (const target of [items[1], items[2]]) {
      const res = await h.match({ text: target.title, order: 'relevance', limit: 10, min_score: -1 });
      expect(res.status, res.raw).toBe(200);
      expect(res.body.items).toHaveLength(4);
      expect(res.body.items[0].source_url).toBe(target.link);
      expect(res.body.items[0].title).toBe(target.title);
      expect(res.body.items[0].best_chunk).toBe(target.title);
      expect(res.body.items[0].event_time).toBe(iso(target.date));
      expect(res.body.items[1].score).toBeLessThan(res.body.items[0].score);
    }
  });

  it('an edited headline is embedded too: include_edits finds the edit first; the default finds only the original', async () => {
    items[0] = { ...items[0], title: EDITED };
    publish();
    edit = await pollRound(h, poller);
    expect(edit.reports.get('Model Wire')).toMatchObject({ newArticles: 0, newRevisions: 1, unchanged: 3, errors: [] });
    expect(h.service.store.unembeddedCount()).toBe(0);

    const withEdits = await h.match({ text: EDITED, order: 'relevance', limit: 10, min_score: -1, include_edits: true });
    expect(withEdits.status, withEdits.raw).toBe(200);
    expect(withEdits.body.items).toHaveLength(5);
    const top = withEdits.body.items[0];
    expect([top.source_url, top.title, top.best_chunk]).toEqual([items[0].link, EDITED, EDITED]);
    expect(top.event_time >= iso(edit.start) && top.event_time <= iso(edit.end), top.event_time).toBe(true);

    const firstOnly = await h.match({ text: EDITED, order: 'relevance', limit: 10, min_score: -1 });
    expect(firstOnly.status, firstOnly.raw).toBe(200);
    expect(firstOnly.body.items).toHaveLength(4);
    const row = firstOnly.body.items.find((it: any) => it.source_url === items[0].link);
    expect(row.title).toBe('rail workers strike over pay talks');
    expect(row.event_time).toBe(iso(items[0].date));
  });
});

describe('failures are reported and survived; backoff; the sources CLI', () => {
  let h: Harness;
  let poller: Poller;
  let round1: Round;
  const MAX_BYTES = 4096;
  const INTERVAL = 300;

  /** A small valid feed of one article per failing case, listed after (or before) the failing feed. */
  const goodFeed = (slug: string, title: string, date: number) => {
    const path = `/err/${slug}/good.xml`;
    site.set(path, {
      body: rss2(`Good ${slug}`, [{ title, link: url(`/err/${slug}/story`), description: `A working feed beside the ${slug} one.`, date }]),
      type: RSS,
    });
    return path;
  };
  /** A valid feed that must never be ingested (served with a failure around it). */
  const decoyFeed = (slug: string, pad = 0) =>
    rss2(`Decoy ${slug}`, [
      { title: `Decoy ${slug} item that must not be stored`, link: url(`/err/${slug}/decoy`), description: 'x'.repeat(pad), date: NOW - HOUR },
    ]);

  const cases = [
    { outlet: 'Err Malformed', bad: ['/err/malformed/feed.xml'], reason: /malformed XML/ },
    { outlet: 'Err Status', bad: ['/err/status/feed.xml'], reason: /HTTP 500/ },
    { outlet: 'Err Timeout', bad: ['/err/timeout/feed.xml'], reason: /no answer within 300 ms/ },
    { outlet: 'Err Oversized', bad: ['/err/oversized/declared.xml', '/err/oversized/chunked.xml'], reason: /over the 4096-byte cap/ },
    { outlet: 'Err Redirect', bad: ['/err/redirect/a.xml'], reason: /more than 5 redirects/ },
    { outlet: 'Err Robots', bad: ['/private/feed.xml'], reason: /disallowed by robots\.txt/ },
  ];
  const goodTitles = new Map<string, string>();
  const CP1252_TITLES = ['Café owners’ rally draws a crowd', 'Crème brûlée “festival” opens – again'];

  beforeAll(async () => {
    site.set('/err/malformed/feed.xml', {
      body: '<?xml version="1.0"?><rss version="2.0"><channel><title>Broken</title><item><title>Unclosed</item></channel></rss>',
      type: RSS,
    });
    site.set('/err/status/feed.xml', { status: 500, body: decoyFeed('status'), type: RSS });
    site.set('/err/timeout/feed.xml', { body: decoyFeed('timeout'), type: RSS, delayMs: 2000 });
    site.set('/err/oversized/declared.xml', { body: decoyFeed('declared', 20_000), type: RSS });
    site.set('/err/oversized/chunked.xml', { body: decoyFeed('chunked', 20_000), type: RSS, chunked: true });
    site.set('/err/redirect/a.xml', { status: 302, location: '/err/redirect/b.xml' });
    site.set('/err/redirect/b.xml', { status: 302, location: '/err/redirect/a.xml' });
    site.set('/private/feed.xml', { body: decoyFeed('robots'), type: RSS });
    site.set('/err/backoff/feed.xml', { status: 500, body: 'down for maintenance' });
    site.set('/err/healthy/feed.xml', {
      body: rss2('Healthy', [
        { title: 'Healthy outlet story one', link: url('/err/healthy/one'), description: 'One.', date: NOW - 3 * HOUR },
        { title: 'Healthy outlet story two', link: url('/err/healthy/two'), description: 'Two.', date: NOW - 2 * HOUR },
      ]),
      type: RSS,
    });
    // windows-1252 bytes (é = E9, ’ = 92, “ ” = 93 94, – = 96, è = E8, û = FB), declared only in the XML declaration.
    const cp1252Xml = rss2(
      'Cp1252 Desk',
      CP1252_TITLES.map((title, i) => ({ title, link: url(`/err/cp1252/story-${i}`), description: `${title} — résumé`, date: NOW - (i + 1) * HOUR })),
      'windows-1252',
    );
    const bytes = Buffer.from(
      cp1252Xml.replace(/[’“”–—]/g, (c) => String.fromCharCode({ '’': 0x92, '“': 0x93, '”': 0x94, '–': 0x96, '—': 0x97 }[c]!)),
      'latin1',
    );
    expect(bytes.includes(0x92) && bytes.includes(0xe9)).toBe(true);
    site.set('/err/cp1252/feed.xml', { body: bytes, type: 'application/rss+xml' });

    h = await startHarness({ corpus: null, env: { ...LOOPBACK_FEEDS, INGEST_TIMEOUT_MS: '300', INGEST_MAX_BYTES: String(MAX_BYTES) } });
    const add = (name: string, feeds: string[]) => h.service.outlets.add({ name, homepage: `${site.base}/err/`, feeds: feeds.map(url), interval: '5m' });
    add('Err Healthy', ['/err/healthy/feed.xml']);
    cases.forEach((c, i) => {
      const slug = c.outlet.slice(4).toLowerCase();
      const title = `Working feed story for ${slug}`;
      goodTitles.set(c.outlet, title);
      const good = goodFeed(slug, title, NOW - (i + 1) * 60);
      // The failing feed first: the outlet's next feed must still be polled.
      add(c.outlet, [...c.bad, good]);
    });
    add('Err Cp1252', ['/err/cp1252/feed.xml']);
    add('Backoff Desk', ['/err/backoff/feed.xml']);
    poller = h.service.createPoller();
    round1 = await pollRound(h, poller);
  });

  afterAll(async () => {
    await poller?.stop();
    await h?.close();
  });

  it.each(cases)("$outlet: the error names the URL and the reason; the outlet's other feed and the other outlets still ingest", async (c) => {
    const report = round1.reports.get(c.outlet)!;
    expect(report, c.outlet).toBeDefined();
    expect(report.errors, JSON.stringify(report.errors)).toHaveLength(c.bad.length);
    c.bad.forEach((path, i) => {
      expect(report.errors[i]).toContain(url(path));
      expect(report.errors[i]).toMatch(c.reason);
    });
    expect(report).toMatchObject({ newArticles: 1, newRevisions: 1 });
    const outlet = h.service.outlets.get(c.outlet)!;
    expect(outlet.lastError?.message).toBe(report.errors[report.errors.length - 1]);
    expect(outlet.lastError!.at).toBeGreaterThanOrEqual(round1.start);
    // One feed worked: no backoff.
    expect(outlet.failures).toBe(0);
    expect(outlet.lastSuccessAt).toBeGreaterThanOrEqual(round1.start);
    expect(outlet.nextPollAt - round1.start).toBeLessThanOrEqual(Math.round(INTERVAL * 1.1) + (round1.end - round1.start));
    // Exactly the working feed's article: nothing of the failing one.
    expect((await listing(h, c.outlet)).map((it) => it.title)).toEqual([goodTitles.get(c.outlet)]);

    expect(round1.reports.get('Err Healthy')).toMatchObject({ newArticles: 2, errors: [] });
  });

  it('the failures are what they claim: no request for a disallowed path, 5 redirects followed', () => {
    expect(site.hits('/private/feed.xml')).toEqual([]);
    expect(site.hits('/robots.txt').length).toBeGreaterThanOrEqual(1);
    const hops = hitsIn(round1, '/err/redirect/a.xml').length + hitsIn(round1, '/err/redirect/b.xml').length;
    expect(hops).toBe(6); // the first request and 5 redirects
  });

  it('a windows-1252 feed is ingested with its titles and snippets decoded', async () => {
    expect(round1.reports.get('Err Cp1252')).toMatchObject({ newArticles: 2, errors: [] });
    const items = await listing(h, 'Err Cp1252');
    expect(items.map((it) => it.title)).toEqual(CP1252_TITLES);
    expect(items.map((it) => it.body)).toEqual(CP1252_TITLES.map((t) => `${t} — résumé`));
    expect(h.service.outlets.get('Err Cp1252')!.lastError).toBeNull();
  });

  it('an outlet whose only feed fails backs off: failures 1, then 2, each with a later nextPollAt; a success resets it', async () => {
    const path = '/err/backoff/feed.xml';
    const o1 = h.service.outlets.get('Backoff Desk')!;
    expect(round1.reports.get('Backoff Desk')!.errors).toEqual([`${url(path)}: HTTP 500`]);
    expect(o1).toMatchObject({ failures: 1, lastSuccessAt: null, lastError: { message: `${url(path)}: HTTP 500` } });
    // 5 min × 2^1, ±10% jitter.
    expect(o1.nextPollAt).toBeGreaterThanOrEqual(round1.start + 540);
    expect(o1.nextPollAt).toBeLessThanOrEqual(round1.end + 660);

    // Not due: an unforced round leaves it alone.
    const unforced = await poller.round();
    expect(unforced.map((r) => r.outlet)).not.toContain('Backoff Desk');

    const round2 = await pollRound(h, poller);
    const o2 = h.service.outlets.get('Backoff Desk')!;
    expect(round2.reports.get('Backoff Desk')!.errors).toHaveLength(1);
    expect(o2.failures).toBe(2);
    expect(o2.nextPollAt).toBeGreaterThanOrEqual(round2.start + 1080);
    expect(o2.nextPollAt).toBeLessThanOrEqual(round2.end + 1320);
    expect(o2.nextPollAt).toBeGreaterThan(o1.nextPollAt);
    expect(o2.lastSuccessAt).toBeNull();
    // The other outlets did not fail as a whole: no backoff for them.
    expect(h.service.outlets.get('Err Status')!.failures).toBe(0);

    // `sources list` shows last success, last error and article count.
    const list = cli(['sources', 'list'], h.env);
    expect(list.status, list.stderr).toBe(0);
    const line = (name: string) => list.stdout.split('\n').find((l) => l.startsWith(`${name}  `)) ?? '';
    expect(line('Backoff Desk')).toMatch(
      new RegExp(
        `^Backoff Desk  enabled  every 300 s  articles 0  last success never  last error \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ ${escapeRe(url(path))}: HTTP 500$`,
      ),
    );
    expect(line('Err Healthy')).toMatch(/^Err Healthy {2}enabled {2}every 300 s {2}articles 2 {2}last success \d{4}-\d\d-\d\dT\S+Z {2}last error none$/);
    expect(line('Err Malformed')).toMatch(/ articles 1 {2}last success \d{4}-\S+Z {2}last error \d{4}-\S+Z .*malformed XML/);
    expect(list.stdout).toContain(`    feed ${url(path)}\n`);

    // The feed recovers: the next round succeeds and the backoff is over.
    site.set(path, { body: rss2('Backoff', [{ title: 'Back online', link: url('/err/backoff/back'), date: NOW - HOUR }]), type: RSS });
    const round3 = await pollRound(h, poller);
    const o3 = h.service.outlets.get('Backoff Desk')!;
    expect(round3.reports.get('Backoff Desk')).toMatchObject({ newArticles: 1, errors: [] });
    expect(o3.failures).toBe(0);
    expect(o3.lastSuccessAt).toBeGreaterThanOrEqual(round3.start);
    expect(o3.nextPollAt).toBeLessThanOrEqual(round3.end + 330);
  });

  it('`sources disable` stops polling an outlet and hides it from /v1/sources', async () => {
    const before = await sourcesByName(h);
    expect(before.get('Err Healthy')?.article_count).toBe(2);
    const r = cli(['sources', 'disable', 'Err Healthy'], h.env);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe('disabled outlet "Err Healthy"\n');
    // lmdb-js keeps this process's read snapshot until its next timer turn (serve starts each round from a timer).
    await sleep(5);

    // The poller reads outlets from LMDB each round: the CLI's change counts without a restart.
    const round = await pollRound(h, poller);
    expect([...round.reports.keys()]).not.toContain('Err Healthy');
    expect(round.reports.has('Err Status')).toBe(true);

    const after = await sourcesByName(h);
    expect(after.has('Err Healthy')).toBe(false);
    expect(after.get('Err Status')?.article_count).toBe(1);
    expect(after.size).toBe(before.size - 1);
  });

  it('`sources add` with a duplicate name or a bad URL exits 2 with a message and adds nothing', () => {
    const count = h.service.outlets.list().length;
    const dup = cli(['sources', 'add', '--name', 'Err Status', '--homepage', `${site.base}/`, '--feed', url('/other.xml')], h.env);
    expect(dup.status, dup.stderr).toBe(2);
    expect(dup.stderr).toContain('an outlet named "Err Status" exists already');
    const bad = cli(['sources', 'add', '--name', 'Bad Url Desk', '--homepage', `${site.base}/`, '--feed', 'not a url'], h.env);
    expect(bad.status, bad.stderr).toBe(2);
    expect(bad.stderr).toContain('--feed "not a url" is not a URL');
    h.service.store.refresh();
    expect(h.service.outlets.list()).toHaveLength(count);
    expect(h.service.outlets.get('Bad Url Desk')).toBeUndefined();
    expect(h.service.outlets.get('Err Status')!.feeds).toEqual([url('/err/status/feed.xml'), url('/err/status/good.xml')]);
  });
});

describe('kill -9 during `ingest --once`, then again: every item exactly once', () => {
  const PER_FEED = 25;
  const FEEDS = ['a', 'b'];
  const dataDir = () => join(root, 'killed');
  const env = () => ({ ...LOOPBACK_FEEDS, DATA_DIR: dataDir(), LOG_LEVEL: 'silent' });
  const pageUrl = (i: number) => url(`/crash/p/${i}`);
  const textOf = (i: number) => `Synthetic crash-test article ${i}, first paragraph.\n\nSecond paragraph of article ${i}.`;

  beforeAll(() => {
    FEEDS.forEach((f, k) => {
      const items = Array.from({ length: PER_FEED }, (_, j) => {
        const i = k * PER_FEED + j;
        return { title: `Crash desk story number ${i}`, link: pageUrl(i), description: `Story ${i}.`, date: NOW - HOUR - i * 60 };
      });
      site.set(`/crash/${f}.xml`, { body: rss2(`Crash ${f}`, items), type: RSS });
      for (const it of items) {
        const i = Number(it.link.split('/').pop());
        // Served slowly, so the kill lands mid-round (revisits, conditional, are answered at once).
        const body = articlePage({ headline: it.title, text: textOf(i), date: it.date });
        site.set(`/crash/p/${i}`, (req) => ({ body, type: HTML, delayMs: req.headers['if-none-match'] ? 0 : 100 }));
      }
    });
  });

  it('the re-run adds exactly what the killed run had not committed, and a third run adds nothing', async () => {
    const add = cli(
      [
        'sources',
        'add',
        '--name',
        'Crash Desk',
        '--homepage',
        `${site.base}/crash/`,
        '--feed',
        url('/crash/a.xml'),
        '--feed',
        url('/crash/b.xml'),
        '--fetch-articles',
      ],
      env(),
    );
    expect(add.status, add.stderr).toBe(0);
    expect(add.stdout).toContain('added outlet "Crash Desk": 2 feed(s), every 300 s, fetching article pages');

    // Kill once the second feed's pages are being fetched: the first feed's revisions are committed, the second's not.
    const pageHits = () => site.log.filter((x) => x.path.startsWith('/crash/p/') && Number(x.path.split('/').pop()) >= PER_FEED).length;
    const child = spawnCli(['ingest', '--once'], env());
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((r) => child.once('exit', (code, signal) => r([code, signal])));
    let done = false;
    void exited.then(() => (done = true));
    const deadline = Date.now() + 45_000;
    while (!done && pageHits() < 5 && Date.now() < deadline) await sleep(10);
    child.kill('SIGKILL');
    const [code, signal] = await exited;
    expect([code, signal], 'the first run finished before it was killed').toEqual([null, 'SIGKILL']);

    const watcher = new Store(join(dataDir(), 'lmdb'));
    const committed = watcher.nextOrd();
    await watcher.close();
    expect(committed).toBe(PER_FEED);

    const second = await cliAsync(['ingest', '--once'], env());
    expect(second.status, second.stderr).toBe(0);
    expect(second.stdout).toContain(
      `Crash Desk: 2 feed(s) (1 not modified), ${PER_FEED} items, ${PER_FEED} new articles, ${PER_FEED} new revisions, ${PER_FEED} unchanged`,
    );
    expect(second.stdout).toContain(', 0 errors');

    const third = await cliAsync(['ingest', '--once'], env());
    expect(third.status, third.stderr).toBe(0);
    expect(third.stdout).toContain('Crash Desk: 2 feed(s) (2 not modified), 0 items, 0 new articles, 0 new revisions');

    const store = new Store(join(dataDir(), 'lmdb'));
    try {
      const total = PER_FEED * FEEDS.length;
      expect(store.nextOrd()).toBe(total);
      expect(store.timeAll.getKeysCount()).toBe(total);
      expect(store.timeFirst.getKeysCount()).toBe(total);
      expect(store.articles.getKeysCount()).toBe(total);
      for (let i = 0; i < total; i++) {
        const article = store.articles.get(pageUrl(i));
        expect(article?.ords, pageUrl(i)).toHaveLength(1);
        const rev = store.revisions.get(article!.ords[0])!;
        expect(rev.title).toBe(`Crash desk story number ${i}`);
        expect(store.texts.get(article!.ords[0])).toBe(textOf(i));
      }
      expect(store.listSources().find((s) => s.name === 'Crash Desk')?.articleCount).toBe(total);
    } finally {
      await store.close();
    }
  });
});

/** `newsmatch` from source, as helpers/cli.ts runs it, but without blocking: the fixture site is served by this process. */
function spawnCli(args: string[], env: Record<string, string>) {
  return spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function cliAsync(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawnCli(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.once('close', (status) => resolve({ status, stdout, stderr })));
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('serve with INGEST=on: the background loop', () => {
  it('polls a due outlet on its own, and a stopped loop polls no more', async () => {
    site.set('/loop/feed.xml', {
      body: rss2('Loop Desk', [{ title: 'Harbour reopens after storm repairs', link: url('/loop/a'), description: 'Ships return.', date: NOW - HOUR }]),
      type: RSS,
    });
    const h = await startHarness({ corpus: null, env: LOOPBACK_FEEDS });
    const poller = h.service.createPoller();
    try {
      h.service.outlets.add({ name: 'Loop Desk', homepage: url('/loop/'), feeds: [url('/loop/feed.xml')], interval: '10m' });
      poller.start(20);
      await vi.waitFor(() => expect(h.service.store.articles.get(url('/loop/a'))).toBeDefined(), { timeout: 20_000, interval: 20 });
      // Polled once, then not due again for ten minutes: later ticks leave the feed alone.
      await sleep(200);
      expect(site.log.filter((x) => x.path === '/loop/feed.xml')).toHaveLength(1);
      expect(h.service.outlets.get('Loop Desk')!.nextPollAt).toBeGreaterThan(NOW + 8 * 60);
      await poller.stop();
      h.service.outlets.update('Loop Desk', (o) => ({ ...o, nextPollAt: 0 }));
      await sleep(100);
      expect(site.log.filter((x) => x.path === '/loop/feed.xml')).toHaveLength(1);
    } finally {
      await poller.stop();
      await h.close();
    }
  });
});
