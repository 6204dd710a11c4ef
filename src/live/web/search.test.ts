import { beforeAll, describe, expect, it } from 'vitest';
import { readFixture, scrapeError } from '../../../test/helpers/pages.js';
import { decodeResultUrl, parseWebResults, type WebResult } from './search.js';

/** Real pages: test/fixtures/pages/web-search (see test/fixtures/pages/PROVENANCE.md). */
const DDG = 'https://html.duckduckgo.com/html/';
const GOOGLE = 'https://www.google.com/search?q=test';
const at = new Date('2026-02-23T12:00:00Z');
const ctx = (pageUrl: string, offset = 0, fetchedAt = at) => ({ pageUrl, offset, fetchedAt });

/** Shape checks every result of every page must pass. */
function expectWellFormed(results: WebResult[], offset = 0) {
  expect(results.map((r) => r.position)).toEqual(results.map((_, i) => offset + i + 1));
  for (const r of results) {
    expect(r.title.length).toBeGreaterThan(3);
    expect(r.url).toMatch(/^https:\/\//);
    expect(r.url).not.toMatch(/duckduckgo\.com\/l\/|google\.com\/url\?/);
    expect(r.snippet?.length).toBeGreaterThan(20);
  }
}

describe('parseWebResults: DuckDuckGo html, 2026 ("openclaw")', () => {
  let results: WebResult[];
  beforeAll(() => {
    results = parseWebResults(readFixture('web-search/duckduckgo-html-search-openclaw-2026.html'), ctx(DDG));
  });

  it('reads the 10 results, every uddg redirect unwrapped', () => {
    expect(results).toHaveLength(10);
    expectWellFormed(results);
  });

  it('reads title, target, shown URL and snippet as the page shows them', () => {
    expect(results[0]).toEqual({
      position: 1,
      title: 'OpenClaw — Personal AI Assistant',
      url: 'https://openclaw.ai/',
      displayed_url: 'openclaw.ai',
      snippet: expect.stringMatching(/^OpenClaw The AI that actually does things\. Clears your inbox, sends emails/),
      date: null,
    });
    expect(results[3]).toMatchObject({
      position: 4,
      title: 'OpenClaw - Wikipedia',
      url: 'https://en.wikipedia.org/wiki/OpenClaw',
      displayed_url: 'en.wikipedia.org/wiki/OpenClaw',
      snippet: expect.stringMatching(/^OpenClaw \(formerly Clawdbot and Moltbot\) is a free and open-source autonomous/),
      date: null,
    });
    expect(results[9]).toMatchObject({
      position: 10,
      title: 'OpenClaw - OpenClaw',
      url: 'https://docs.openclaw.ai/',
      displayed_url: 'docs.openclaw.ai',
      snippet: expect.stringMatching(/^OpenClaw is a self-hosted gateway that connects your favorite chat apps — WhatsApp/),
    });
  });

  it('reads the timestamp in the extras as UTC (Forbes, 2026-02-06T16:34:00.0000000)', () => {
    expect(results[4]).toMatchObject({
      position: 5,
      title: 'What Is OpenClaw, Formerly Moltbot? Everything You Need To Know - Forbes',
      url: 'https://www.forbes.com/sites/kateoflahertyuk/2026/02/06/what-is-openclaw-formerly-moltbot--everything-you-need-to-know/',
      displayed_url: 'www.forbes.com/sites/kateoflahertyuk/2026/02/06/what-is-openclaw-formerly-moltbot--everything-you-need-to-know/',
      snippet: expect.stringMatching(/^OpenClaw, formerly Moltbot, has burst into the mainstream\. Here's everything/),
      date: '2026-02-06T16:34:00.000Z',
    });
    expect(results.map((r) => r.date?.slice(0, 10) ?? null)).toEqual([
      null,
      null,
      null,
      null,
      '2026-02-06',
      '2026-02-11',
      '2026-02-07',
      '2026-02-02',
      '2026-01-30',
      null,
    ]);
  });

  it('numbers from the offset: page 2 starts at 11', () => {
    const page2 = parseWebResults(readFixture('web-search/duckduckgo-html-search-openclaw-2026.html'), ctx(DDG, 10));
    expect(page2.map((r) => r.position)).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    expect(page2[0]!.url).toBe('https://openclaw.ai/');
  });
});

describe('parseWebResults: DuckDuckGo html, 2026 ("OpenAI news")', () => {
  let results: WebResult[];
  beforeAll(() => {
    results = parseWebResults(readFixture('web-search/duckduckgo-html-search-openai-news-2026.html'), ctx(DDG));
  });

  it('reads the 10 results', () => {
    expect(results).toHaveLength(10);
    expectWellFormed(results);
  });

  it('reads title, target, shown URL, snippet and date (CNBC, Google News, TechCrunch)', () => {
    expect(results[1]).toEqual({
      position: 2,
      title: 'OpenAI resets spend expectations, targets around $600 billion by 2030',
      url: 'https://www.cnbc.com/2026/02/20/openai-resets-spend-expectations-targets-around-600-billion-by-2030.html',
      displayed_url: 'www.cnbc.com/2026/02/20/openai-resets-spend-expectations-targets-around-600-billion-by-2030.html',
      snippet: expect.stringMatching(/^OpenAI told investors it's targeting roughly \$600 billion in total compute spend by 2030/),
      date: '2026-02-20T22:29:00.000Z',
    });
    // the target's own query survives the unwrapping: uddg=…%3Fhl%3Den%2DUS%26ceid%3DUS%253Aen
    expect(results[5]).toEqual({
      position: 6,
      title: 'Google News - OpenAI - Latest',
      url: 'https://news.google.com/topics/CAAqKAgKIiJDQkFTRXdvTkwyY3ZNVEZpZUdNMk5UWjJOaElDWlc0b0FBUAE?hl=en-US&ceid=US%3Aen',
      displayed_url: 'news.google.com/topics/CAAqKAgKIiJDQkFTRXdvTkwyY3ZNVEZpZUdNMk5UWjJOaElDWlc0b0FBUAE?hl=en-US&ceid=US:en',
      snippet: 'Read full articles, watch videos, browse thousands of titles and more on the "OpenAI" topic with Google News.',
      date: null,
    });
    expect(results[9]).toMatchObject({
      position: 10,
      title: 'OpenAI reportedly finalizing $100B deal at more than $850B ...',
      url: 'https://techcrunch.com/2026/02/19/openai-reportedly-finalizing-100b-deal-at-more-than-850b-valuation/',
      displayed_url: 'techcrunch.com/2026/02/19/openai-reportedly-finalizing-100b-deal-at-more-than-850b-valuation/',
      snippet: expect.stringMatching(/^OpenAI is reportedly getting close to closing a \$100 billion deal/),
      date: '2026-02-19T15:35:00.000Z',
    });
    expect(results[7]).toMatchObject({ title: 'OpenAI Races to Quell Concerns Over Its Finances', date: '2025-11-06T00:00:00.000Z' });
  });
});

describe('parseWebResults: Google, 2022 layout, German UI ("test")', () => {
  let results: WebResult[];
  beforeAll(() => {
    results = parseWebResults(readFixture('web-search/google-com-search-test-de-ui-2022.html'), ctx(GOOGLE, 0, new Date('2022-11-28T12:00:00Z')));
  });

  it('reads the 7 organic results: no sitelinks, "Ähnliche Fragen" or "Schlagzeilen" cards among them', () => {
    expect(results).toHaveLength(7);
    expectWellFormed(results);
    expect(results.map((r) => r.url)).not.toContain('https://www.test.de/shop/test-hefte/');
    expect(results.map((r) => r.title)).not.toContain('Was versteht man unter test?');
    // NDR is both a "Schlagzeilen" card and an organic result: it counts once
    expect(results.filter((r) => r.url.startsWith('https://www.ndr.de/'))).toHaveLength(1);
  });

  it('reads title, target, cite and snippet as the page shows them', () => {
    expect(results[0]).toEqual({
      position: 1,
      title: 'Stiftung Warentest | Unabhängig. Objektiv. Unbestechlich.',
      url: 'https://www.test.de/',
      displayed_url: 'https://www.test.de',
      snippet: expect.stringMatching(/^test\.de-Flatrate Jetzt zum Aktionspreis! Alle Testergebnisse/),
      date: null,
    });
    expect(results[2]).toMatchObject({
      position: 3,
      title: 'Test - Wikipedia',
      url: 'https://de.wikipedia.org/wiki/Test',
      displayed_url: 'https://de.wikipedia.org › wiki › Test',
      snippet: expect.stringMatching(/^Ein Test ist ein methodischer Versuch, mit dem festgestellt werden soll/),
    });
    expect(results[5]).toMatchObject({
      position: 6,
      title: 'Testen - Zusammen gegen Corona',
      url: 'https://www.zusammengegencorona.de/testen/',
      displayed_url: 'https://www.zusammengegencorona.de › testen',
      snippet: expect.stringMatching(/^Corona-Test\. Corona-Tests sind wichtige Instrumente/),
    });
  });

  it('reads the "vor 2 Tagen — " prefix of the NDR snippet as its date, and cuts it', () => {
    expect(results[6]).toEqual({
      position: 7,
      title: 'Positiver Corona-Selbsttest: Kein offizieller Test mehr notwendig',
      url: 'https://www.ndr.de/nachrichten/hamburg/Positiver-Corona-Selbsttest-Kein-offizieller-Test-mehr-notwendig,corona11256.html',
      displayed_url: 'https://www.ndr.de › nachrichten › hamburg › Positiver-C...',
      snippet: expect.stringMatching(/^Hamburgerinnen und Hamburger müssen nach einem positiven Corona-Selbsttest/),
      date: '2022-11-26T12:00:00.000Z', // fetched 2022-11-28T12:00Z, less two days
    });
  });
});

describe('parseWebResults: small pages', () => {
  const ddgCard = (n: number, extra = '') =>
    `<div class="result results_links results_links_deep web-result ${extra}"><div class="links_main links_deep result__body">
      <h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2F${n}&amp;rut=abc">Result ${n}</a></h2>
      <div class="result__extras"><div class="result__extras__url"><a class="result__url" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2F${n}">example.com/${n}</a></div></div>
      <a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2F${n}">Snippet ${n}</a></div></div>`;
  const ddgPage = (cards: string) =>
    `<html><body class="body--html"><div class="serp__results"><div id="links" class="results">${cards}</div></div></body></html>`;

  it('DuckDuckGo: ads are dropped, at most 10 results, numbered from the offset', () => {
    const ad = `<div class="result results_links results_links_deep result--ad"><div class="result__body">
      <h2 class="result__title"><a class="result__a" href="https://duckduckgo.com/y.js?ad_domain=shop.example&amp;u3=x">Buy now</a></h2>
      <a class="result__snippet" href="https://duckduckgo.com/y.js?ad_domain=shop.example">An ad</a></div></div>`;
    const html = ddgPage(ad + Array.from({ length: 12 }, (_, i) => ddgCard(i + 1)).join(''));
    const results = parseWebResults(html, ctx(DDG, 20));
    expect(results).toHaveLength(10);
    expect(results[0]).toEqual({
      position: 21,
      title: 'Result 1',
      url: 'https://example.com/1',
      displayed_url: 'example.com/1',
      snippet: 'Snippet 1',
      date: null,
    });
    expect(results[9]).toMatchObject({ position: 30, url: 'https://example.com/10' });
  });

  it('Google: ads, "People also ask" and carousels are skipped; /url wrappers and date prefixes are read', () => {
    const g = (href: string, title: string, snippet: string) =>
      `<div class="MjjYud"><div class="g"><div class="yuRUbf"><a href="${href}"><h3 class="LC20lb">${title}</h3><cite>${title.toLowerCase()}.example</cite></a></div><div class="VwiC3b">${snippet}</div></div></div>`;
    const html = `<html><body><div id="search"><div id="tads"><div class="uEierd">${g('https://ad.example/', 'Ad', 'Sponsored')}</div></div><div id="rso">
      ${g('/url?q=https://one.example/a%3Fb%3D1&amp;sa=U&amp;ved=x', 'One', '<span class="MUxGbd wuQ4Ob WZ8Tjf"><span>3 days ago</span> — </span><span>First snippet.</span>')}
      <div class="MjjYud"><div class="related-question-pair">${g('https://paa.example/', 'Paa', 'An answer')}</div></div>
      <div class="MjjYud"><g-scrolling-carousel>${g('https://video.example/', 'Video', 'A video')}</g-scrolling-carousel></div>
      ${g('/url?url=https%3A%2F%2Ftwo.example%2F&amp;rct=j', 'Two', '12.03.2022 — Second snippet.')}
      ${g('https://three.example/', 'Three', 'Cars — and what they cost')}
    </div></div></body></html>`;
    expect(parseWebResults(html, ctx(GOOGLE))).toEqual([
      {
        position: 1,
        title: 'One',
        url: 'https://one.example/a?b=1',
        displayed_url: 'one.example',
        snippet: 'First snippet.',
        date: '2026-02-20T12:00:00.000Z',
      },
      { position: 2, title: 'Two', url: 'https://two.example/', displayed_url: 'two.example', snippet: 'Second snippet.', date: '2022-03-12T00:00:00.000Z' },
      // a dash that follows no date is snippet text
      { position: 3, title: 'Three', url: 'https://three.example/', displayed_url: 'three.example', snippet: 'Cars — and what they cost', date: null },
    ]);
  });

  it('a genuine "no results" page gives [] (DuckDuckGo, Google in English and German)', () => {
    expect(
      parseWebResults(
        ddgPage('<div class="result results_links_deep highlight_d result--no-result"><div class="no-results">No  results.</div></div>'),
        ctx(DDG),
      ),
    ).toEqual([]);
    const google = (msg: string) =>
      `<html><body><div id="center_col"><div id="res"><div id="topstuff"><div class="card-section"><p>${msg}</p></div></div><div id="search"></div></div></div></body></html>`;
    expect(parseWebResults(google('Your search - <b>qwxzzq</b> - did not match any documents.'), ctx(GOOGLE))).toEqual([]);
    expect(parseWebResults(google('Die Suche nach - <b>qwxzzq</b> - ergab keine Treffer.'), ctx(GOOGLE))).toEqual([]);
  });

  it('robot checks are ScrapeErrors: Google /sorry/, the DuckDuckGo challenge, a captcha', () => {
    const sorry = `<html><head><title>https://www.google.com/search?q=test</title></head><body><div id="captcha-form-wrap"><form id="captcha-form" action="index" method="post"><div class="g-recaptcha"></div></form></div>
      <div>Our systems have detected unusual traffic from your computer network.</div></body></html>`;
    expect(scrapeError(() => parseWebResults(sorry, ctx('https://www.google.com/sorry/index?continue=x'))).detail).toBe(
      'the search engine answered with a robot check ("unusual traffic") instead of results',
    );
    // the words alone, on a page that is not the /sorry/ URL, still count
    expect(
      scrapeError(() => parseWebResults('<html><body><p>Our systems have detected unusual traffic from your computer network.</p></body></html>', ctx(GOOGLE)))
        .detail,
    ).toMatch(/unusual traffic/);
    const anomaly = `<html><body><form id="challenge-form" action="//duckduckgo.com/anomaly.js?sv=html&amp;cc=botnet" method="POST">
      <div class="anomaly-modal__modal"><div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div>
      <div class="anomaly-modal__description">Please complete the following challenge to confirm this search was made by a human.</div></div></form></body></html>`;
    expect(scrapeError(() => parseWebResults(anomaly, ctx(DDG))).detail).toBe(
      'the search engine answered with a bot challenge ("bots use DuckDuckGo too") instead of results',
    );
    expect(scrapeError(() => parseWebResults('<html><body><div class="h-captcha"></div></body></html>', ctx(DDG))).detail).toMatch(/robot check/);
  });

  it('a page with neither layout is "not a results page" (a real marketplace search page and a news article too)', () => {
    const detail = 'not a results page: neither DuckDuckGo nor Google result markup, and no "no results" message';
    expect(scrapeError(() => parseWebResults('<html><body><h1>Example Domain</h1></body></html>', ctx(DDG))).detail).toBe(detail);
    expect(scrapeError(() => parseWebResults(readFixture('amazon-search/amazon-com-search-portable-charger-2026.html'), ctx(GOOGLE))).detail).toBe(detail);
    expect(scrapeError(() => parseWebResults(readFixture('publisher/reuters-article-israeli-tank-2024-03-07.html'), ctx(GOOGLE))).detail).toBe(detail);
  });

  it('a results frame without results or a "no results" message means the layout changed', () => {
    expect(
      scrapeError(() =>
        parseWebResults('<html><body><div id="rso"><div class="MjjYud"><div class="related-question-pair">Q?</div></div></div></body></html>', ctx(GOOGLE)),
      ).detail,
    ).toMatch(/^a results page without organic results/);
  });
});

describe('decodeResultUrl', () => {
  it('unwraps DuckDuckGo and Google redirects to their target', () => {
    expect(
      decodeResultUrl('//duckduckgo.com/l/?uddg=https%3A%2F%2Fopenclaw.ai%2F&rut=b50856dec302f4571be69e2d55922c69f78e78daaf2ff17e3a28301f0296a139', DDG),
    ).toBe('https://openclaw.ai/');
    expect(decodeResultUrl('/url?q=https://example.com/a%3Fb%3D1&sa=U&ved=x', GOOGLE)).toBe('https://example.com/a?b=1');
    expect(decodeResultUrl('https://www.google.de/url?url=https%3A%2F%2Fexample.org%2F&rct=j', GOOGLE)).toBe('https://example.org/');
  });

  it('keeps a direct link and resolves a relative one against the page', () => {
    expect(decodeResultUrl('https://www.test.de/', GOOGLE)).toBe('https://www.test.de/');
    expect(decodeResultUrl('/search?q=more', GOOGLE)).toBe('https://www.google.com/search?q=more');
  });

  it('is null for anything that does not end at an http(s) URL', () => {
    expect(decodeResultUrl('javascript:void(0)', GOOGLE)).toBeNull();
    expect(decodeResultUrl('/url?q=javascript:alert(1)', GOOGLE)).toBeNull();
    expect(decodeResultUrl('//duckduckgo.com/l/?uddg=mailto%3Aa%40b.example', DDG)).toBeNull();
    expect(decodeResultUrl('//duckduckgo.com/l/?rut=abc', DDG)).toBeNull();
    expect(decodeResultUrl('/url?sa=U', GOOGLE)).toBeNull();
    expect(decodeResultUrl('ftp://files.example/x', GOOGLE)).toBeNull();
  });
});
