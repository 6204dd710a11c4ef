import { beforeAll, describe, expect, it } from 'vitest';
import { readFixture, scrapeError } from '../../../test/helpers/pages.js';
import { parseNewsResults, type NewsResult } from './news.js';

/**
 * The real page: Google's News tab for "asthma", en-NZ, 2021 (test/fixtures/pages/PROVENANCE.md,
 * web-news-search/). Every expected value was read in the HTML by hand; the comments say where.
 * Its capture time is the `sxsrf=…:1613128614390` timestamp its own links carry
 * (2021-02-12T11:16:54.390Z). The search was limited to 1–5 March 2020 (its links carry
 * `tbs=cdr:1,cd_min:3/1/2020,cd_max:3/5/2020`), so its cards show dates ("5/03/2020"), no
 * relative times: relative times are checked on the synthetic page below.
 */
const REAL = 'web-news-search/google_search_tbm_nws_asthma_en-NZ_2021-02.html';
const REAL_URL = 'https://www.google.com/search?q=asthma&tbm=nws&tbs=cdr:1,cd_min:3/1/2020,cd_max:3/5/2020&lr=lang_en&cr=countryNZ&gl=nz';
const captured = new Date(1613128614390);

/** The synthetic page's search and fetch time, and the context the small pages are read in. */
const NEWS = 'https://www.google.com/search?q=grid+battery+storage&tbm=nws';
const at = new Date('2026-02-22T15:00:00Z');
const ctx = (pageUrl = NEWS) => ({ pageUrl, fetchedAt: at });

describe('parseNewsResults: the real 2021 news page ("asthma", en-NZ)', () => {
  let results: NewsResult[];
  beforeAll(() => {
    results = parseNewsResults(readFixture(REAL), { pageUrl: REAL_URL, fetchedAt: captured });
  });

  it('reads the 7 cards in page order', () => {
    // #rso holds 7 `g-card` > … > `div.dbsr` (data-hveid 48, 56, 63, 71, 78, 86, 94); the
    // source of each is the text of its `div.XTjFC`
    expect(results.map((r) => [r.position, r.source])).toEqual([
      [1, 'Stuff.co.nz'],
      [2, 'Scoop.co.nz'],
      [3, 'Scoop.co.nz'],
      [4, 'Scoop.co.nz'],
      [5, 'New Zealand Doctor Online'],
      [6, 'New Zealand Doctor Online'],
      [7, 'New Zealand Doctor Online'],
    ]);
  });

  it('reads the first card whole', () => {
    expect(results[0]).toEqual({
      position: 1,
      // div.JheGif[role=heading] of g-card data-hveid="48"
      title: 'Thinking about taking your business fleet electric?',
      // its a[href] (plain, with an onmousedown rwt() tracker, not a /url?q= redirect)
      url: 'https://www.stuff.co.nz/motoring/119994958/thinking-about-taking-your-business-fleet-electric',
      source: 'Stuff.co.nz', // div.XTjFC, after its favicon g-img
      published_at: '2020-03-05T00:00:00.000Z', // div.wxp1Sb span.WG9SHc: "5/03/2020", day first (en-NZ)
      // div.Y3v8qd, its three source lines joined
      snippet:
        'Selected as inspirational fare for the campaign are NZ Post, Asthma NZ, a not-for-profit centring in Auckland, and a Christchurch t-shirt maker Verboom T-Shirts ...',
      // img#dimg_11 in div.KNcnob is a 1×1 data: gif that a script swaps for an inline
      // data:image/jpeg (`_setImagesSrc(['dimg_11'], …)`): the page has no thumbnail URL
      image_url: null,
    });
  });

  it('reads the last card whole', () => {
    expect(results[6]).toEqual({
      position: 7,
      // div.JheGif of g-card data-hveid="94": "After-hours pressure grows in north Waikato as <br>riverside ..."
      title: 'After-hours pressure grows in north Waikato as riverside ...',
      url: 'https://www.nzdoctor.co.nz/article/news/after-hours-pressure-grows-north-waikato-riverside-towns-swallowed',
      source: 'New Zealand Doctor Online',
      published_at: '2020-03-03T00:00:00.000Z', // "3/03/2020"
      snippet:
        'Warning for parents as asthma hospitalisations spike on return to school. 02/02/2021. COVID-19 vaccine approval sets stage for sector to jump through hoops.',
      image_url: null, // img#dimg_31: data: as well
    });
  });

  it('reads dates day first, as the page language (lang="en-NZ") writes them, not US month first', () => {
    // the wxp1Sb spans, card by card: 5/03/2020, 4/03/2020, 3/03/2020, 3/03/2020, 4/03/2020,
    // 4/03/2020, 3/03/2020: all inside the searched 1–5 March 2020 (month first they would be
    // 3 May, 3 April and 3 March)
    expect(results.map((r) => r.published_at)).toEqual([
      '2020-03-05T00:00:00.000Z',
      '2020-03-04T00:00:00.000Z',
      '2020-03-03T00:00:00.000Z',
      '2020-03-03T00:00:00.000Z',
      '2020-03-04T00:00:00.000Z',
      '2020-03-04T00:00:00.000Z',
      '2020-03-03T00:00:00.000Z',
    ]);
    // A shown date is absolute: it does not move with the fetch time.
    const later = parseNewsResults(readFixture(REAL), { pageUrl: REAL_URL, fetchedAt: new Date('2026-01-01T00:00:00Z') });
    expect(later.map((r) => r.published_at)).toEqual(results.map((r) => r.published_at));
  });

  it('a title cut with <br> keeps its words apart; a card without a thumbnail still counts', () => {
    // card 2 (data-hveid="56") has no div.KNcnob thumbnail; its heading reads "…Of Spending <br>Time ..."
    expect(results[1]).toMatchObject({ title: 'New Research Shows Wellbeing Benefits Of Spending Time ...', image_url: null });
    // card 5's heading has "Māori" and "<br>'thin ..."
    expect(results[4]!.title).toBe("Māori and Pacific babies bigger and leaner, Asian babies 'thin ...");
  });

  it('a page of another site is a ScrapeError naming the cards it lacks', () => {
    const detail = 'not a news results page: no news result cards (div.SoaBEf, div.dbsr) and no "no results" message';
    expect(scrapeError(() => parseNewsResults(readFixture('publisher/reuters-article-israeli-tank-2024-03-07.html'), ctx())).detail).toBe(detail);
    expect(scrapeError(() => parseNewsResults(readFixture('launches/producthunt_homepage_2026-03-08.html'), ctx())).detail).toBe(detail);
  });

  it('cards whose source or date moved are a ScrapeError, not results with empty fields', () => {
    const html = readFixture(REAL);
    const noSource = html.replaceAll('class="XTjFC WF4CUc"', 'class="moved"');
    expect(scrapeError(() => parseNewsResults(noSource, ctx())).detail).toBe(
      'news result cards without a source line (.MgUUmf, .NUnG9d, .XTjFC): the layout changed',
    );
    const noDate = html.replaceAll('class="wxp1Sb"', 'class="moved"');
    expect(scrapeError(() => parseNewsResults(noDate, ctx())).detail).toMatch(/^news result cards without a date line \(/);
    const oddDate = html.replace(/<span>\d\/03\/2020<\/span>/g, '<span>March, the third</span>');
    expect(scrapeError(() => parseNewsResults(oddDate, ctx())).detail).toBe('news result dates in a form this parser does not read ("March, the third")');
  });
});

/**
 * The synthetic page (synthetic/WEB-NEWS.PROVENANCE.md; its values are made up) is kept for the
 * newer `div.SoaBEf` card, which no real capture shows, and for relative times ("3 hours ago"),
 * which the real page, limited to a past date range, does not show.
 */
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
    const html =
      '<html><body><div id="res"><div id="topstuff"><p>Your search - <b>qwxzzq</b> - did not match any news results.</p></div><div id="search"></div></div></body></html>';
    expect(parseNewsResults(html, ctx())).toEqual([]);
  });

  it('a robot check is a ScrapeError', () => {
    const sorry =
      '<html><body><form id="captcha-form" action="index" method="post"></form><p>Our systems have detected unusual traffic from your computer network.</p></body></html>';
    expect(scrapeError(() => parseNewsResults(sorry, ctx('https://www.google.com/sorry/index?continue=x'))).detail).toMatch(
      /robot check \("unusual traffic"\)/,
    );
  });

  it('a page without news cards is a ScrapeError: the real 2022 web results page, whose "Schlagzeilen" cards are no SoaBEf', () => {
    const detail = 'not a news results page: no news result cards (div.SoaBEf, div.dbsr) and no "no results" message';
    expect(scrapeError(() => parseNewsResults(readFixture('web-search/google-com-search-test-de-ui-2022.html'), ctx())).detail).toBe(detail);
    expect(scrapeError(() => parseNewsResults('<html><body><h1>Example Domain</h1></body></html>', ctx())).detail).toBe(detail);
  });
});
