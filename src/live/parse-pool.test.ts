import { afterAll, describe, expect, it } from 'vitest';
import { readFixture } from '../../test/helpers/pages.js';
import { ScrapeError } from './page.js';
import { ParsePool } from './parse-pool.js';
import { PARSERS } from './parsers.js';

const pools = [new ParsePool(2), new ParsePool(0)];
afterAll(() => Promise.all(pools.map((p) => p.close())));

const DDG = 'https://html.duckduckgo.com/html/?q=openclaw';
const at = new Date('2026-02-23T12:00:00Z');

describe.each([
  ['on worker threads', pools[0]],
  ['inline (LIVE_PARSE_THREADS=0)', pools[1]],
])('ParsePool %s', (_name, pool) => {
  it('answers what the parser answers, Dates and all', async () => {
    const html = readFixture('web-search/duckduckgo-html-search-openclaw-2026.html');
    const ctx = { pageUrl: DDG, offset: 10, fetchedAt: at };
    expect(await pool.run('parseWebResults', html, ctx)).toEqual(PARSERS.parseWebResults(html, ctx));
  });

  it('passes a ScrapeError on as a ScrapeError with its detail', async () => {
    const robot = '<html><head><title>Robot Check</title></head><body><form action="/errors/validateCaptcha"></form></body></html>';
    const e = await pool.run('parseWebResults', robot, { pageUrl: DDG, offset: 0, fetchedAt: at }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ScrapeError);
    expect((e as ScrapeError).detail).toMatch(/robot check/);
  });

  it('runs parses side by side', async () => {
    const html = readFixture('web-search/duckduckgo-html-search-openclaw-2026.html');
    const all = await Promise.all(Array.from({ length: 6 }, (_, i) => pool.run('parseWebResults', html, { pageUrl: DDG, offset: i * 10, fetchedAt: at })));
    expect(all.map((r) => r[0].position)).toEqual([1, 11, 21, 31, 41, 51]);
  });
});
