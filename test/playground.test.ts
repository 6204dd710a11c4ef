/**
 * The playground at GET / (src/playground/), in a real browser: Debian's chromium driven by
 * playwright-core over a served text-mode corpus (the tiny bge-m3 stand-in). The rows the page
 * renders are checked against the API's own answer to the same request, page by page, in both
 * orders and on /v1/news; a news highlight's markup is shown as text. The page, its assets and
 * its headers are checked without a browser too, and so are the pure helpers (format.ts).
 *
 * The browser part is skipped only where /usr/bin/chromium is missing and CI is not set; CI
 * installs chromium (.ci/run), so there it always runs. A screenshot is written under
 * test-results/ and its path printed.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../src/playground/index.js';
import { countByDay, decodeEntities, highlightSegments, parseVector, safeHref, utcTime } from '../src/playground/browser/format.js';
import { HAS_BROWSER, launchChromium } from './helpers/browser.js';
import { writeLines } from './helpers/corpus.js';
import { Rng } from './helpers/rng.js';
import { startHarness, type Harness } from './helpers/service.js';
import { TINY_WORDS, writeTinyModel } from './helpers/tiny-model.js';

describe('the playground helpers (format.ts)', () => {
  it('a highlight is text and <mark> segments only; any other markup stays text', () => {
    expect(highlightSegments('a &lt;b&gt; <mark>strike</mark> &amp; <mark>port</mark>')).toEqual([
      { text: 'a <b> ', mark: false },
      { text: 'strike', mark: true },
      { text: ' & ', mark: false },
      { text: 'port', mark: true },
    ]);
    expect(highlightSegments('<img src=x onerror=alert(1)><MARK>x</MARK>')).toEqual([
      { text: '<img src=x onerror=alert(1)>', mark: false },
      { text: 'x', mark: true },
    ]);
    expect(highlightSegments('')).toEqual([]);
    expect(decodeEntities('&#39;&#x41;&quot;&nbsp;&#0;&#xd800;')).toBe('\'A"&nbsp;&#0;&#xd800;');
  });

  it('rows per UTC day, empty days filled within a year', () => {
    const rows = ['2026-03-03T23:59:59Z', '2026-03-01T00:00:00Z', '2026-03-03T00:00:00Z', 'nonsense'].map((event_time) => ({ event_time }));
    expect(countByDay(rows)).toEqual([
      { day: '2026-03-01', count: 1 },
      { day: '2026-03-02', count: 0 },
      { day: '2026-03-03', count: 2 },
    ]);
    expect(countByDay([])).toEqual([]);
    expect(countByDay([{ event_time: '2020-01-01T00:00:00Z' }, { event_time: '2026-01-01T00:00:00Z' }])).toHaveLength(2);
  });

  it('vectors, times and links from the form', () => {
    expect(parseVector('[1, -2.5e-3, 3]')).toEqual([1, -2.5e-3, 3]);
    expect(parseVector('1 2\n3')).toEqual([1, 2, 3]);
    expect(parseVector('1, x')).toMatch(/element 2/);
    expect(parseVector(' ')).toMatch(/empty/);
    expect(utcTime('2026-03-01T08:00')).toBe('2026-03-01T08:00:00Z');
    expect(utcTime('2026-03-01T08:00:05')).toBe('2026-03-01T08:00:05Z');
    expect(utcTime('')).toBeUndefined();
    expect(safeHref('https://ledger.example/a')).toBe(true);
    expect(safeHref('javascript:alert(1)')).toBe(false);
    expect(safeHref('not a url')).toBe(false);
  });
});

// ---- a served text-mode corpus: 30 articles over 10 days in 3 sources, no vectors in the file ----

const root = mkdtempSync(join(tmpdir(), 'playground-'));
const modelDir = writeTinyModel(join(root, 'model'), { seed: 11 });
const TEXT_ENV = { BGE_M3_MODEL_DIR: modelDir, EMBED_DEVICE: 'cpu', EMBED_THREADS: '1', CHUNK_MIN_TOKENS: '8', CHUNK_MAX_TOKENS: '24' };
const SOURCES = [
  { name: 'Daily Ledger', homepage: 'https://ledger.example/' },
  { name: 'Other Desk', homepage: 'https://otherdesk.example/' },
  { name: 'Wire One', homepage: 'https://wireone.example/' },
];

const rng = new Rng(2424);
const words = (n: number) => Array.from({ length: n }, () => rng.pick(TINY_WORDS)).join(' ');
const sentence = (n: number) => `${words(n)}.`;
const ARTICLES = 30;
const lines = Array.from({ length: ARTICLES }, (_, i) => {
  const s = SOURCES[i % SOURCES.length];
  return {
    url: `${s.homepage}2026/03/story-${i}`,
    source: s.name,
    source_homepage: s.homepage,
    title: `${words(5)} ${i}`,
    snippet: sentence(12),
    text: Array.from({ length: 3 }, () => sentence(8)).join(' '),
    published_at: `2026-03-${String(1 + (i % 10)).padStart(2, '0')}T${String(6 + (i % 12)).padStart(2, '0')}:00:00Z`,
  };
});
/** A snippet with markup in it: /v1/news escapes it in `highlight`, and the page must show it as text. */
const HOSTILE = '<img src=x onerror="window.__xss=1">';
lines[3].snippet = `Storm ${HOSTILE} and flood warnings for the port.`;
const target = lines[7];

let h: Harness;
let base: string;
let key: string;

beforeAll(async () => {
  h = await startHarness({ corpus: null, env: TEXT_ENV });
  const file = join(root, 'corpus.jsonl');
  writeLines(file, lines);
  const summary = await h.service.importFile(file);
  expect(summary).toMatchObject({ articles: ARTICLES, rejected: 0 });
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  const addr = h.app.server.address();
  if (addr === null || typeof addr === 'string') throw new Error('no port');
  base = `http://127.0.0.1:${addr.port}`;
  key = h.bearer.secret;
});

afterAll(async () => {
  await h?.close();
  rmSync(root, { recursive: true, force: true });
});

/** The API's own answer, with the key the page is given. */
async function api(method: 'GET' | 'POST', path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json;
}

describe('GET / and its assets, without a browser', () => {
  it('the page: no key, not metered, a strict CSP, no inline script, nothing from another origin', async () => {
    const res = await fetch(`${base}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toContain("default-src 'self'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-inline');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // every script has a src
    expect(html).not.toMatch(/\bstyle=/);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    for (const [path, type] of [
      ['/playground/app.js', /^text\/javascript/],
      ['/playground/format.js', /^text\/javascript/],
      ['/playground/style.css', /^text\/css/],
      ['/playground/icon.svg', /^image\/svg\+xml/],
    ] as const) {
      const asset = await fetch(`${base}${path}`);
      expect(asset.status, path).toBe(200);
      expect(asset.headers.get('content-type'), path).toMatch(type);
      expect((await asset.text()).length, path).toBeGreaterThan(100);
    }
    // The compiled script is ES2022 JavaScript: its import is kept, its types are gone.
    const js = await (await fetch(`${base}/playground/app.js`)).text();
    expect(js).toContain("from './format.js'");
    expect(js).not.toMatch(/^interface /m);
  });

  it('odd requests on / and the assets: never a 5xx, errors in the catalogue shape', async () => {
    const cases: [string, string][] = [
      ['GET', '/?x=1&x=2&__proto__=1'],
      ['GET', '/?%ff'],
      ['HEAD', '/'],
      ['OPTIONS', '/'],
      ['POST', '/'],
      ['PUT', '/playground/app.js'],
      ['GET', '/playground/'],
      ['GET', '/playground/../package.json'],
      ['GET', '/playground/%2e%2e%2fpackage.json'],
      ['GET', '/playground/app.ts'],
      ['GET', '/playground/browser/app.js'],
    ];
    for (const [method, path] of cases) {
      const res = await h.inject({ method: method as 'GET', url: path, noAuth: true, payload: method === 'POST' || method === 'PUT' ? '{"a":' : undefined });
      expect(res.status, `${method} ${path}: ${res.raw.slice(0, 200)}`).toBeLessThan(500);
      if (res.status >= 400) expect(typeof res.body?.error, `${method} ${path}`).toBe('string');
    }
  });
});

/** The rendered rows: id, title, link, source, and whether a score bar and a best-chunk box are shown. */
async function renderedRows(page: Page) {
  return page.$$eval('#results .result', (els: any[]) =>
    els.map((e) => ({
      id: e.dataset.id as string,
      title: e.querySelector('.title')?.textContent as string,
      href: (e.querySelector('a.title')?.getAttribute('href') ?? null) as string | null,
      source: e.querySelector('.source')?.textContent as string,
      meter: e.querySelector('meter') !== null,
      best: (e.querySelector('.best')?.textContent ?? null) as string | null,
    })),
  );
}

/** Waits for the search or page in flight to finish (the page marks #output) and returns its state. */
async function settled(page: Page, pages?: number): Promise<string> {
  await page.waitForFunction((n: number | null) => {
    const o = (globalThis as any).document.getElementById('output');
    return (o.dataset.state === 'done' && (n === null || o.dataset.pages === String(n))) || o.dataset.state === 'error';
  }, pages ?? null);
  return page.$eval('#output', (o: any) => o.dataset.state as string);
}

/** The chart's bars as the page drew them. */
async function chartBars(page: Page) {
  return page.$$eval('#chart rect', (rs: any[]) => rs.map((r) => ({ day: r.dataset.day as string, count: Number(r.dataset.count) })));
}

const expectRowsMatch = (rendered: Awaited<ReturnType<typeof renderedRows>>, items: any[]) => {
  expect(rendered.map((r) => r.title)).toEqual(items.map((it) => it.title));
  expect(rendered.map((r) => r.id)).toEqual(items.map((it) => it.id));
  expect(rendered.map((r) => r.href)).toEqual(items.map((it) => it.source_url));
  expect(rendered.map((r) => r.source)).toEqual(items.map((it) => it.source_name));
};

describe.skipIf(!HAS_BROWSER)('the playground in chromium', () => {
  let browser: Browser;
  let page: Page;
  /** Uncaught errors and console errors other than an HTTP error status (CSP violations land here). */
  const problems: string[] = [];
  /** Every /v1/match body the page sent. */
  const matchBodies: any[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console: ${m.text()}`);
    });
    page.on('request', (r) => {
      if (r.url().endsWith('/v1/match')) matchBodies.push(JSON.parse(r.postData() ?? '{}'));
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('loads with no key, lists the sources once a key is typed, and keeps the key out of localStorage', async () => {
    await page.goto(`${base}/`);
    await page.waitForFunction(() => (globalThis as any).document.getElementById('output').dataset.state === 'ready');
    await page.fill('#key', key);
    await page.click('#load-sources');
    await page.waitForFunction(() => (globalThis as any).document.getElementById('sources').dataset.loaded !== undefined);
    const options = await page.$$eval('#sources option', (os: any[]) => os.map((o) => o.value as string));
    const listed = await api('GET', '/v1/sources');
    expect(options).toEqual(listed.sources.map((s: any) => s.name));
    expect(options).toEqual(SOURCES.map((s) => s.name));
    expect(await page.evaluate(() => (globalThis as any).localStorage.getItem('newsmatch.playground.key'))).toBeNull();
  });

  it('a text query, newest first: the rows are the API page, then "Load more" appends the next page', async () => {
    await page.fill('#text', 'storm flood rain water');
    await page.fill('#min-score', '-1');
    await page.fill('#limit', '10');
    await page.click('#search');
    expect(await settled(page, 1)).toBe('done');
    const body = { order: 'time', limit: 10, min_score: -1, text: 'storm flood rain water' };
    expect(matchBodies.at(-1)).toEqual(body);
    const first = await api('POST', '/v1/match', body);
    expect(first.count).toBe(10);
    expect(typeof first.next_cursor).toBe('string');
    const rows1 = await renderedRows(page);
    expectRowsMatch(rows1, first.items);
    expect(rows1.every((r) => r.meter)).toBe(true);
    expect(rows1.map((r) => r.best)).toEqual(first.items.map((it: any) => it.best_chunk));
    expect(await chartBars(page)).toEqual(countByDay(first.items));
    expect(await page.isVisible('#more')).toBe(true);

    await page.click('#more');
    expect(await settled(page, 2)).toBe('done');
    expect(matchBodies.at(-1)).toEqual({ ...body, cursor: first.next_cursor });
    const second = await api('POST', '/v1/match', { ...body, cursor: first.next_cursor });
    expect(second.count).toBe(10);
    const rows2 = await renderedRows(page);
    expect(rows2).toHaveLength(20);
    expectRowsMatch(rows2.slice(0, 10), first.items);
    expectRowsMatch(rows2.slice(10), second.items);
    const bars = await chartBars(page);
    expect(bars).toEqual(countByDay([...first.items, ...second.items]));
    expect(bars.reduce((n, b) => n + b.count, 0)).toBe(20);

    await page.click('#more');
    expect(await settled(page, 3)).toBe('done');
    const third = await api('POST', '/v1/match', { ...body, cursor: second.next_cursor });
    expect(third.next_cursor).toBeNull();
    expectRowsMatch((await renderedRows(page)).slice(20), third.items);
    expect(await page.isVisible('#more')).toBe(false);
  });

  it('by relevance: the API top 10, the article whose headline is the text first, no "Load more"', async () => {
    await page.fill('#text', target.title);
    await page.check('input[name="order"][value="relevance"]');
    await page.click('#search');
    expect(await settled(page, 1)).toBe('done');
    const body = { order: 'relevance', limit: 10, min_score: -1, text: target.title };
    expect(matchBodies.at(-1)).toEqual(body);
    const answer = await api('POST', '/v1/match', body);
    const rows = await renderedRows(page);
    expectRowsMatch(rows, answer.items);
    expect(rows[0].title).toBe(target.title);
    expect(rows[0].best).toBe(target.title);
    expect(await page.isVisible('#more')).toBe(false);
    const screenshot = resolve('test-results', `playground-${process.pid}.png`);
    mkdirSync(resolve('test-results'), { recursive: true });
    await page.screenshot({ path: screenshot, fullPage: true });
    console.log(`[playground] screenshot: ${screenshot}`);
    expect(existsSync(screenshot)).toBe(true);
  });

  it('a source filter and a time window reach the request and narrow the rows', async () => {
    await page.selectOption('#sources', ['Other Desk']);
    await page.fill('#since', '2026-03-03T00:00:00');
    await page.fill('#until', '2026-03-06T23:59:59');
    await page.check('input[name="order"][value="time"]');
    await page.click('#search');
    expect(await settled(page, 1)).toBe('done');
    const body = {
      order: 'time',
      limit: 10,
      min_score: -1,
      text: target.title,
      since: '2026-03-03T00:00:00Z',
      until: '2026-03-06T23:59:59Z',
      sources: ['Other Desk'],
    };
    expect(matchBodies.at(-1)).toEqual(body);
    const answer = await api('POST', '/v1/match', body);
    expect(answer.count).toBeGreaterThan(0);
    const rows = await renderedRows(page);
    expectRowsMatch(rows, answer.items);
    expect(new Set(rows.map((r) => r.source))).toEqual(new Set(['Other Desk']));
    await page.selectOption('#sources', []);
    await page.fill('#since', '');
    await page.fill('#until', '');
  });

  it('"More like this" sends the result id as `like` with the form’s order and floor, and shows the API page without the liked article', async () => {
    const id = (await renderedRows(page))[0].id;
    await page.click(`#results .result[data-id="${id}"] .like`);
    expect(await settled(page)).toBe('done');
    expect(matchBodies.at(-1)).toEqual({ order: 'time', limit: 10, min_score: -1, like: id });
    expect(await page.inputValue('#like')).toBe(id);
    const answer = (await h.match({ order: 'time', limit: 10, min_score: -1, like: id })).body;
    const rows = await renderedRows(page);
    expect(rows.length).toBeGreaterThan(0);
    expectRowsMatch(rows, answer.items);
    expect(rows.map((r) => r.id)).not.toContain(id);
    await page.check('input[name="mode"][value="text"]');
  });

  it('API errors are shown with their code and message', async () => {
    await page.fill('#key', 'nmb_not_a_key');
    await page.click('#search');
    expect(await settled(page)).toBe('error');
    expect(await page.textContent('#error code')).toBe('unauthorized');
    expect(await page.textContent('#error')).toMatch(/unauthorized \(HTTP 401\): \S/);
    expect(await page.$$('#results .result')).toHaveLength(0);
    await page.fill('#key', key);
  });

  it('/v1/news: rows as the API gives them, <mark>s as elements, markup in the text shown as text', async () => {
    await page.check('input[name="endpoint"][value="news"]');
    await page.fill('#q', 'storm');
    await page.fill('#limit', '100');
    await page.click('#search');
    expect(await settled(page, 1)).toBe('done');
    const answer = await api('GET', '/v1/news?q=storm&sort=time&limit=100');
    expect(answer.count).toBeGreaterThan(0);
    const rows = await renderedRows(page);
    expectRowsMatch(rows, answer.results);
    expect(rows.every((r) => r.best === null)).toBe(true);
    const hostile = answer.results.find((r: any) => r.source_url === lines[3].url);
    expect(hostile?.highlight).toContain('&lt;img');
    const shown = await page.$eval(`#results .result[data-id="${hostile.id}"] .highlight`, (p: any) => ({
      text: p.textContent as string,
      marks: [...p.querySelectorAll('mark')].map((m: any) => m.textContent as string),
      elements: [...p.querySelectorAll('*')].map((e: any) => e.tagName as string),
    }));
    expect(shown.text).toContain(HOSTILE);
    expect(shown.marks.map((m) => m.toLowerCase())).toContain('storm');
    expect(new Set(shown.elements)).toEqual(new Set(['MARK']));
    expect(await page.$$('#results img')).toHaveLength(0);
    expect(await page.evaluate(() => (globalThis as any).__xss)).toBeUndefined();
  });

  it('"remember" keeps the key across a reload; unticking forgets it', async () => {
    await page.check('#remember');
    expect(await page.evaluate(() => (globalThis as any).localStorage.getItem('newsmatch.playground.key'))).toBe(key);
    await page.reload();
    await page.waitForFunction(() => (globalThis as any).document.getElementById('sources').dataset.loaded !== undefined);
    expect(await page.inputValue('#key')).toBe(key);
    expect(await page.isChecked('#remember')).toBe(true);
    await page.uncheck('#remember');
    expect(await page.evaluate(() => (globalThis as any).localStorage.getItem('newsmatch.playground.key'))).toBeNull();
  });

  it('no script error and no CSP violation in the whole session', () => {
    expect(problems).toEqual([]);
  });
});
