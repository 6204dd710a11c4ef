import { beforeAll, describe, expect, it } from 'vitest';
import { readFixture, scrapeError } from '../../../test/helpers/pages.js';
import { parseNewsResults, type NewsResult } from './news.js';

/**
 * No real news-vertical page was captured: the main fixture is synthetic, written by hand after
 * the documented markup (test/fixtures/pages/synthetic/WEB-NEWS.PROVENANCE.md); its values are
 * made up. The real 2022 web page is used to check what is not a news page.
 */
const NEWS = 'https://www.google.com/search?q=grid+battery+storage&tbm=nws';
const at = new Date('2026-02-22T15:00:00Z');
const ctx = (pageUrl = NEWS) => ({ pageUrl, fetchedAt: at });

describe('parseNewsResults: Google news vertical (synthetic, "grid battery storage")', () => {
  let results: NewsResult[];
  beforeAll(() => {
    results = parseNewsResults(readFixture('synthetic/web-news-search-grid-battery-storage.html'), ctx());
  });

  it('reads the 9 cards in page order', () => {
    expect(results.map((r) => [r.position, r.source])).toEqual([
      [1, 'The Harbor Ledger'],
      [2, 'Northfield Energy Wire'],
      [3, 'Meridian Post'],
      [4, 'Copperline Review'],
      [5, 'The Valley Courier'],
      [6, 'Atlas Grid Journal'],
      [7, 'Lakeshore Daily'],
      [8, 'Pinecrest Tribune'],
      [9, 'Southport Herald'],
    ]);
  });

  it('reads a card whole; a data: thumbnail is no image', () => {
    expect(results[0]).toEqual({
      position: 1,
      title: 'Utility signs deal for 400 MWh battery site outside Tacoma',
      url: 'https://www.harborledger.example/business/2026/02/22/utility-battery-site-tacoma/',
      source: 'The Harbor Ledger',
      published_at: '2026-02-22T12:00:00.000Z',
      snippet: 'The four-hour storage project would be the largest in the region and is expected to come online in 2028, the utility said on Sunday.',
      image_url: null,
    });
  });

  it('unwraps a /url?q= link and keeps a real thumbnail', () => {
    expect(results[1]).toMatchObject({
      title: 'Sodium-ion pilot joins the grid as developers look beyond lithium',
      url: 'https://northfieldenergywire.example/news/sodium-ion-pilot-joins-grid',
      published_at: '2026-02-22T10:00:00.000Z',
      snippet: expect.stringMatching(/^A 20 MW pilot using sodium-ion cells/),
      image_url: 'https://encrypted-tbn0.gstatic.com/images?q=tbn:ANd9GcSyntheticThumb02&s=0',
    });
  });

  it('resolves every shown time against the fetch time (rbYSKb-only time line on card 3)', () => {
    expect(results.map((r) => r.published_at)).toEqual([
      '2026-02-22T12:00:00.000Z', // 3 hours ago
      '2026-02-22T10:00:00.000Z', // 5 hours ago
      '2026-02-21T15:00:00.000Z', // 1 day ago
      '2026-02-20T15:00:00.000Z', // 2 days ago
      '2026-02-22T14:15:00.000Z', // 45 mins ago
      '2026-02-20T00:00:00.000Z', // Feb 20, 2026
      '2026-02-15T15:00:00.000Z', // 1 week ago
      '2026-02-14T00:00:00.000Z', // Feb 14, 2026
      '2026-02-08T15:00:00.000Z', // 2 weeks ago
    ]);
  });

  it('a card without snippet or thumbnail still counts', () => {
    expect(results[3]).toMatchObject({ title: 'Why grid batteries keep getting bigger', snippet: null, image_url: null });
    expect(results[4]).toMatchObject({ title: 'County approves zoning rules for battery storage yards', image_url: null });
  });
});

describe('parseNewsResults: small pages', () => {
  it('reads the class names of the 2022 "Top stories" card, where the heading is an OSrXXb too', () => {
    const html = `<html><body><div id="rso"><div class="SoaBEf"><a jsname="YKoRaf" href="https://news.example/a">
      <div class="iRPxbe"><div class="CEMjEf NUnG9d"><g-img><img src="/favicon.png"></g-img><span>Example News</span></div>
      <div class="mCBkyc OSrXXb" role="heading" aria-level="3">A <span>headline</span></div>
      <div class="OSrXXb ZE0LJd"><span>2 hours ago</span></div></div><img src="/thumb.jpg"></a></div>
      <div class="SoaBEf"><div role="heading">No link here</div></div></div></body></html>`;
    expect(parseNewsResults(html, ctx())).toEqual([
      {
        position: 1,
        title: 'A headline',
        url: 'https://news.example/a',
        source: 'Example News',
        published_at: '2026-02-22T13:00:00.000Z',
        snippet: null,
        image_url: 'https://www.google.com/thumb.jpg',
      },
    ]);
  });

  it('a genuine "no results" page gives []', () => {
    const html = '<html><body><div id="res"><div id="topstuff"><p>Your search - <b>qwxzzq</b> - did not match any news results.</p></div><div id="search"></div></div></body></html>';
    expect(parseNewsResults(html, ctx())).toEqual([]);
  });

  it('a robot check is a ScrapeError', () => {
    const sorry = '<html><body><form id="captcha-form" action="index" method="post"></form><p>Our systems have detected unusual traffic from your computer network.</p></body></html>';
    expect(scrapeError(() => parseNewsResults(sorry, ctx('https://www.google.com/sorry/index?continue=x'))).detail).toMatch(/robot check \("unusual traffic"\)/);
  });

  it('a page without news cards is a ScrapeError: the real 2022 web results page, whose "Schlagzeilen" cards are no SoaBEf', () => {
    const detail = 'not a news results page: no news result cards and no "no results" message';
    expect(scrapeError(() => parseNewsResults(readFixture('web-search/google-com-search-test-de-ui-2022.html'), ctx())).detail).toBe(detail);
    expect(scrapeError(() => parseNewsResults('<html><body><h1>Example Domain</h1></body></html>', ctx())).detail).toBe(detail);
  });
});
