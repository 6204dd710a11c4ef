import { Readability } from '@mozilla/readability';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { HttpClient, Page } from '../net/index.js';
import { Store } from '../store/index.js';
import { extractArticle } from './extract.js';
import { FeedError, parseFeed } from './feed.js';
import { Outlets } from './outlets.js';
import { IngestParsePool } from './parse-pool.js';
import { Poller } from './poller.js';

/** A real page (captured from apnews.com, test/fixtures/pages/PROVENANCE.md) with no articleBody: Readability extracts it. */
const AP = readFileSync(
  resolve(fileURLToPath(new URL('.', import.meta.url)), '../../test/fixtures/pages/publisher/apnews-article-presidential-campaigns-2024-09-03.html'),
);
const AP_URL = 'https://apnews.example/article/campaigns';
const NOW = 1_725_400_000;
const FEED = new TextEncoder().encode(
  `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Desk</title><link>https://apnews.example/</link>` +
    `<item><title>The campaigns brace for a sprint</title><link>${AP_URL}</link><pubDate>${new Date((NOW - 600) * 1000).toUTCString()}</pubDate></item></channel></rss>`,
);
const HTML = 'text/html; charset=utf-8';

const pools = [new IngestParsePool(1), new IngestParsePool(0)];
afterAll(() => Promise.all(pools.map((p) => p.close())));

describe.each([
  ['on worker threads', pools[0]],
  ['inline (INGEST_PARSE_THREADS=0)', pools[1]],
])('IngestParsePool %s', (_name, pool) => {
  it('extracts a page as extractArticle does (Readability on the real page)', async () => {
    const a = await pool.page(AP, HTML, AP_URL);
    expect(a).toEqual(extractArticle(AP.toString('utf8'), AP_URL));
    expect(a.source).toBe('readability');
    expect(a.text.startsWith('LA CROSSE, Wis. (AP)')).toBe(true);
  });

  it('parses a feed as parseFeed does, and a broken one fails with the same FeedError', async () => {
    const opts = { url: 'https://apnews.example/rss', contentType: 'application/rss+xml', now: NOW };
    expect(await pool.feed(FEED, opts)).toEqual(parseFeed(FEED, opts));
    const cut = FEED.subarray(0, FEED.length - 30);
    const e = await pool.feed(cut, opts).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(FeedError);
    expect((e as FeedError).message).toBe(
      (() => {
        try {
          parseFeed(cut, opts);
        } catch (x) {
          return (x as Error).message;
        }
      })(),
    );
  });
});

describe('Poller: pages are extracted off the event loop', () => {
  const dirs: string[] = [];
  afterEach(() => {
    vi.restoreAllMocks();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** One round over a feed listing the AP page, served by a stand-in fetcher; Readability.parse counted on this thread. */
  async function round(parseThreads: number): Promise<{ mainThreadParses: number; text: string }> {
    const dir = mkdtempSync(join(tmpdir(), 'newsmatch-parse-pool-'));
    dirs.push(dir);
    const store = new Store(join(dir, 'lmdb'));
    const outlets = new Outlets(store);
    outlets.add({ name: 'AP Desk', homepage: 'https://apnews.example/', feeds: ['https://apnews.example/rss'], fetchArticles: true });
    const fetcher = {
      async get(url: string): Promise<Partial<Page>> {
        const body = url.endsWith('/rss') ? FEED : AP;
        return { status: 200, url, body, contentType: url.endsWith('/rss') ? 'application/rss+xml' : HTML, validators: { etag: null, lastModified: null } };
      },
      async close() {},
    } as unknown as HttpClient;
    // Worker threads load their own copy of Readability: this spy sees the main thread's parses only.
    const parse = vi.spyOn(Readability.prototype, 'parse');
    const poller = new Poller({ store, outlets, fetcher, log: pino({ level: 'silent' }), revisitHours: 48, now: () => NOW, parseThreads });
    try {
      const [report] = await poller.round({ force: true });
      expect(report).toMatchObject({ items: 1, newArticles: 1, pagesFetched: 1, errors: [] });
      const ord = store.articles.get(AP_URL)!.ords[0];
      return { mainThreadParses: parse.mock.calls.length, text: store.texts.get(ord) ?? '' };
    } finally {
      await poller.stop();
      await store.close();
    }
  }

  it('with INGEST_PARSE_THREADS > 0 Readability never runs on the main thread, and the text is stored', async () => {
    const off = await round(1);
    expect(off.mainThreadParses).toBe(0);
    expect(off.text.startsWith('LA CROSSE, Wis. (AP)')).toBe(true);
    // The spy does see a parse on this thread: with 0 threads the page is extracted here.
    const inline = await round(0);
    expect(inline.mainThreadParses).toBe(1);
    expect(inline.text).toBe(off.text);
  });
});
