import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { extractArticle, MAX_HTML_CHARS } from './extract.js';

/** Real pages captured from apnews.com and reuters.com: test/fixtures/pages (see PROVENANCE.md there). */
const PAGES = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../test/fixtures/pages/publisher');
const AP = `${PAGES}/apnews-article-presidential-campaigns-2024-09-03.html`;
const REUTERS = `${PAGES}/reuters-article-israeli-tank-2024-03-07.html`;
const read = (path: string) => readFileSync(path, 'utf8');

const unix = (iso: string) => Date.parse(iso) / 1000;
const paragraphsOf = (text: string) => text.split('\n\n');
const JSON_LD = /<script[^>]*type="application\/ld\+json"[^>]*>[\s\S]*?<\/script>/g;

interface RealPage {
  name: string;
  path: string;
  url: string;
  headline: string;
  ogTitle: string;
  firstParagraphStart: string;
  lastParagraph: string | RegExp;
  paragraphs: [number, number];
  datePublished: string;
  dateModified: string;
  metaModified: string;
  canonical: string;
  /** Text of the page's nav, script and style elements; none of it may reach the article text. */
  furniture: string[];
}

const REAL_PAGES: RealPage[] = [
  {
    name: 'AP News',
    path: AP,
    url: 'https://apnews.com/article/trump-harris-presidential-election-2024-labor-day-151f82b59473d29a448ef1cea9afe471',
    headline: 'The presidential campaigns brace for a sprint to Election Day',
    ogTitle: 'The presidential campaigns brace for an intense sprint to Election Day',
    firstParagraphStart: 'LA CROSSE, Wis. (AP) — After a summer of historic tumult, the path to the presidency',
    lastParagraph: /^Peoples reported from New York .* Will Weissert in Johnstown, Pennsylvania, and Bill Barrow in Atlanta contributed to this report\.$/,
    paragraphs: [40, 60],
    datePublished: '2024-09-03T04:03:19Z',
    dateModified: '2024-09-03T13:11:33Z',
    // <meta property="article:modified_time" content="2024-09-03T13:23:07.627">: no offset, read as UTC.
    metaModified: '2024-09-03T13:23:07Z',
    canonical: 'https://apnews.com/article/trump-harris-presidential-election-2024-labor-day-151f82b59473d29a448ef1cea9afe471',
    furniture: ['Russia-Ukraine War', 'Do Not Sell or Share My Personal Information', '_comscore', '--button-border-radius'],
  },
  {
    name: 'Reuters',
    path: REUTERS,
    url: 'https://www.reuters.com/world/middle-east/israeli-tank-likely-scenario-fired-machine-gun-reporters-after-deadly-shelling-2024-03-07/',
    headline: "Israeli tank 'likely' fired machine gun at reporters after deadly shelling, report finds",
    ogTitle: "Israeli tank 'likely' fired machine gun at reporters after deadly shelling, report finds",
    firstParagraphStart: 'BEIRUT/THE HAGUE, March 7 (Reuters) - An Israeli tank crew killed a Reuters reporter',
    // Reuters' standards link follows the credits inside the article body; Readability keeps it and so do we.
    lastParagraph: 'Our Standards: The Thomson Reuters Trust Principles.',
    paragraphs: [28, 42],
    datePublished: '2024-03-07T07:55:25Z',
    dateModified: '2024-03-07T12:21:53Z',
    metaModified: '2024-03-07T12:21:53Z',
    canonical: 'https://www.reuters.com/world/middle-east/israeli-tank-likely-scenario-fired-machine-gun-reporters-after-deadly-shelling-2024-03-07/',
    furniture: ['Healthcare & Pharmaceuticals', 'Site Index', 'BOOMR_mq', 'gtm.start'],
  },
];

describe('extractArticle on real pages', () => {
  for (const page of REAL_PAGES) {
    describe(page.name, () => {
      const html = read(page.path);

      it('has a NewsArticle in JSON-LD but no articleBody, so the text comes from Readability', () => {
        expect(html).toMatch(/"@type":\s*"NewsArticle"/);
        expect(html).not.toContain('articleBody');
        const a = extractArticle(html, page.url);
        expect(a.source).toBe('readability');
      });

      it('takes headline, dates and canonical URL from the metadata', () => {
        const a = extractArticle(html, page.url);
        expect(a.title).toBe(page.headline);
        expect(a.publishedAt).toBe(unix(page.datePublished));
        expect(a.modifiedAt).toBe(Math.floor(unix(page.dateModified)));
        expect(a.canonicalUrl).toBe(page.canonical);
      });

      it('finds the article text, first to last paragraph', () => {
        const paragraphs = paragraphsOf(extractArticle(html, page.url).text);
        expect(paragraphs[0].startsWith(page.firstParagraphStart)).toBe(true);
        if (typeof page.lastParagraph === 'string') expect(paragraphs.at(-1)).toBe(page.lastParagraph);
        else expect(paragraphs.at(-1)).toMatch(page.lastParagraph);
        expect(paragraphs.length).toBeGreaterThanOrEqual(page.paragraphs[0]);
        expect(paragraphs.length).toBeLessThanOrEqual(page.paragraphs[1]);
        for (const p of paragraphs) {
          expect(p).toBe(p.replace(/\s+/g, ' ').trim());
          expect(p).toMatch(/[\p{L}\p{N}]/u);
        }
      });

      it('with its JSON-LD removed: same text from Readability, metadata from <meta> and <link>', () => {
        const withLd = extractArticle(html, page.url);
        const stripped = html.replace(JSON_LD, '');
        expect(html.match(JSON_LD)).toHaveLength(2);
        const a = extractArticle(stripped, page.url);
        expect(a.source).toBe('readability');
        expect(paragraphsOf(a.text)[0].startsWith(page.firstParagraphStart)).toBe(true);
        expect(a.text).toBe(withLd.text);
        expect(a.title).toBe(page.ogTitle);
        expect(a.publishedAt).toBe(unix(page.datePublished));
        expect(a.modifiedAt).toBe(Math.floor(unix(page.metaModified)));
        expect(a.canonicalUrl).toBe(page.canonical);
      });

      it('leaves out nav, script and style text', () => {
        const text = extractArticle(html.replace(JSON_LD, ''), page.url).text;
        for (const s of page.furniture) {
          expect(html).toContain(s);
          expect(text).not.toContain(s);
        }
        expect(text).not.toMatch(/function\s*\(|window\.|\{\s*--[\w-]+\s*:/);
      });
    });
  }

  it('AP: section headings are paragraphs of their own, the "___" rule is dropped', () => {
    const paragraphs = paragraphsOf(extractArticle(read(AP), 'https://apnews.com/').text);
    expect(paragraphs).toContain('The electoral map settles on seven states');
    expect(paragraphs).toContain('Here’s what the polls say');
    expect(paragraphs).not.toContain('___');
  });

  it('Reuters: a link with an icon does not split its paragraph, and screen-reader hints are left out', () => {
    const a = extractArticle(read(REUTERS), 'https://www.reuters.com/');
    const paragraphs = paragraphsOf(a.text);
    expect(paragraphs[1]).toMatch(/^The report by the Netherlands Organisation for Applied Scientific Research \(TNO\) - which was contracted by Reuters/);
    expect(a.text).not.toContain('opens new tab');
  });
});

// Everything below is synthetic: small hand-written pages, one behaviour each.

const page = (head: string, body = '') => `<!DOCTYPE html><html><head>${head}</head><body>${body}</body></html>`;
const ld = (value: unknown) => `<script type="application/ld+json">${JSON.stringify(value)}</script>`;
const URL_ = 'https://news.example/world/port-strike?utm_source=feed';

/** Long enough paragraphs for Readability (and its isProbablyReaderable gate) to take the page for an article. */
const LONG = [
  'Dock workers at the harbour returned to work on Monday morning after a twelve-day strike over pay and shift lengths, the union said, ending the longest stoppage at the port in more than two decades of records.',
  'The agreement, reached late on Sunday after talks mediated by the regional labour office, raises wages by seven percent over two years and caps night shifts at four a week for every crane operator on the quay.',
  'Shipping lines had diverted at least thirty vessels to neighbouring ports during the strike, and freight forwarders warned that the backlog of containers on the quay would take several weeks to clear completely.',
  'Local businesses that depend on the port welcomed the deal but said the stoppage had already cost them orders, and the chamber of commerce asked the city to review how future disputes could be settled sooner.',
];

describe('extractArticle on synthetic pages: JSON-LD', () => {
  it('skips a block of invalid JSON and reads the valid one after it', () => {
    const html = page(
      `<script type="application/ld+json">{"@type": "NewsArticle", "headline": "Broken",</script>` +
        ld({ '@context': 'https://schema.org', '@type': 'NewsArticle', headline: 'Port strike ends', articleBody: 'Dock workers returned on Monday.' }),
    );
    const a = extractArticle(html, URL_);
    expect(a).toMatchObject({ source: 'json-ld', title: 'Port strike ends', text: 'Dock workers returned on Monday.' });
  });

  it('finds the article inside @graph, with @type as an array, and its url', () => {
    const html = page(
      ld({
        '@context': 'https://schema.org',
        '@graph': [
          { '@type': 'WebSite', name: 'Harbour News', url: 'https://news.example/' },
          { '@type': 'WebPage', '@id': 'https://news.example/world/port-strike' },
          {
            '@type': ['NewsArticle', 'Article'],
            headline: 'Port strike ends',
            datePublished: '2025-06-10T06:00:00+02:00',
            dateModified: '2025-06-10T08:30:00Z',
            mainEntityOfPage: { '@id': 'https://news.example/world/port-strike' },
            articleBody: 'Dock workers returned on Monday.\n\nShips are moving again.',
          },
        ],
      }),
    );
    const a = extractArticle(html, URL_);
    expect(a).toEqual({
      title: 'Port strike ends',
      text: 'Dock workers returned on Monday.\n\nShips are moving again.',
      source: 'json-ld',
      publishedAt: unix('2025-06-10T04:00:00Z'),
      modifiedAt: unix('2025-06-10T08:30:00Z'),
      canonicalUrl: 'https://news.example/world/port-strike',
    });
  });

  it('takes the first article object that has a body, and skips other types', () => {
    const html = page(
      ld([
        { '@type': 'Organization', name: 'Harbour News', articleBody: 'not an article' },
        { '@type': 'NewsArticle', headline: 'Teaser', articleBody: '   ' },
        { '@type': 'http://schema.org/ReportageNewsArticle', headline: 'Port strike ends', articleBody: 'Dock workers returned.' },
      ]),
    );
    expect(extractArticle(html, URL_)).toMatchObject({ source: 'json-ld', title: 'Port strike ends', text: 'Dock workers returned.' });
  });

  it('splits articleBody on newlines and blank lines, collapses spaces, keeps one paragraph when there are none', () => {
    const body = (articleBody: string) => extractArticle(page(ld({ '@type': 'BlogPosting', headline: 'H', articleBody })), URL_).text;
    expect(body('First  paragraph\there.\n\n\nSecond one.\r\nThird one.\n \n')).toBe('First paragraph here.\n\nSecond one.\n\nThird one.');
    expect(body('One long paragraph with no breaks. It goes on. And on.')).toBe('One long paragraph with no breaks. It goes on. And on.');
  });

  it('decodes HTML entities in articleBody and headline', () => {
    const html = page(
      ld({
        '@type': 'NewsArticle',
        headline: 'Smith &amp; Sons&#8217; deal',
        articleBody: 'Smith &amp; Sons said &ldquo;yes&rdquo; &mdash; at last.&nbsp;Costs fell &lt;5%.\n\nA &lt;b&gt; tag stays text.',
      }),
    );
    const a = extractArticle(html, URL_);
    expect(a.title).toBe('Smith & Sons’ deal');
    expect(a.text).toBe('Smith & Sons said “yes” — at last. Costs fell <5%.\n\nA <b> tag stays text.');
  });

  it('reads an articleBody that holds HTML as paragraphs', () => {
    const html = page(ld({ '@type': 'NewsArticle', headline: 'H', articleBody: '<p>Dock workers <b>returned</b>.</p><p>Ships &amp; cranes move.</p>' }));
    expect(extractArticle(html, URL_).text).toBe('Dock workers returned.\n\nShips & cranes move.');
  });

  it('repairs raw newlines inside a JSON string (invalid JSON some CMSs emit)', () => {
    const html = page('<script type="application/ld+json">{"@type":"NewsArticle","headline":"H","articleBody":"Line one.\nLine two."}</script>');
    expect(extractArticle(html, URL_)).toMatchObject({ source: 'json-ld', text: 'Line one.\n\nLine two.' });
  });
});

describe('extractArticle on synthetic pages: metadata', () => {
  it('resolves a relative canonical link against the page URL, ahead of the JSON-LD url', () => {
    const html = page(
      `<link rel="canonical" href="/world/port-strike">${ld({ '@type': 'NewsArticle', headline: 'H', url: 'https://other.example/a', articleBody: 'Body.' })}`,
    );
    expect(extractArticle(html, URL_).canonicalUrl).toBe('https://news.example/world/port-strike');
  });

  it('prefers JSON-LD headline and dates to <meta>, and reads <meta> when JSON-LD lacks them', () => {
    const head =
      '<meta property="og:title" content="OG &amp; title"><meta property="article:published_time" content="2025-06-10T06:00:00">' +
      '<meta name="article:modified_time" content="2025-06-11T00:00:00+01:00">';
    const withLd = extractArticle(
      page(head + ld({ '@type': 'NewsArticle', headline: 'LD title', datePublished: '2025-06-09T00:00:00Z', articleBody: 'B.' })),
      URL_,
    );
    expect(withLd).toMatchObject({ title: 'LD title', publishedAt: unix('2025-06-09T00:00:00Z'), modifiedAt: unix('2025-06-10T23:00:00Z') });
    // A date-time with no offset is read as UTC, not as the server's local time.
    const metaOnly = extractArticle(page(head + ld({ '@type': 'NewsArticle', articleBody: 'B.' })), URL_);
    expect(metaOnly).toMatchObject({ title: 'OG & title', publishedAt: unix('2025-06-10T06:00:00Z') });
  });

  it('gives null for dates that do not parse and for non-http canonical links', () => {
    const html = page(`<link rel="canonical" href="javascript:void(0)">${ld({ '@type': 'NewsArticle', datePublished: 'soon', articleBody: 'B.' })}`);
    expect(extractArticle(html, URL_)).toMatchObject({ publishedAt: null, modifiedAt: null, canonicalUrl: null, title: null });
  });
});

describe('extractArticle on synthetic pages: Readability', () => {
  const article = (extra = '') =>
    page(
      '<title>Dock workers end twelve-day port strike | Harbour News</title>',
      `<nav><a href="/">Home</a><a href="/world">World news section</a></nav>
       <article><h1>Dock workers end twelve-day port strike</h1><p class="byline">By Jane Doe</p>
         <p>${LONG[0]}</p><p>Advertisement</p><p>${LONG[1]}</p>
         <h2>What the deal says</h2><p>${LONG[2]}</p>
         <ul><li>Wages rise by seven percent over two years.</li><li>Night shifts are capped at four a week.</li></ul>
         <blockquote>It is a fair deal for everyone on the quay, the union leader said on Monday.</blockquote>
         <p>${LONG[3]}</p>${extra}</article>
       <footer>Copyright Harbour News. All rights reserved. Contact us for syndication.</footer>`,
    );

  it('turns block elements into paragraphs and drops short furniture', () => {
    const a = extractArticle(article(), URL_);
    expect(a.source).toBe('readability');
    // No JSON-LD, no og:title: Readability's title, which is <title> less the site name; it drops the h1 repeating it.
    expect(a.title).toBe('Dock workers end twelve-day port strike');
    expect(paragraphsOf(a.text)).toEqual([
      LONG[0],
      LONG[1],
      'What the deal says',
      LONG[2],
      'Wages rise by seven percent over two years.',
      'Night shifts are capped at four a week.',
      'It is a fair deal for everyone on the quay, the union leader said on Monday.',
      LONG[3],
    ]);
    expect(a.text).not.toMatch(/Advertisement|By Jane Doe|World news section|Copyright/);
  });

  it('keeps a linked phrase inside its paragraph', () => {
    const sentence = (link: string) =>
      `The union published the ${link} on its website on Monday evening, with a summary of the new pay scales for every grade of worker at the port.`;
    // Readability splits a paragraph around a link holding an svg icon (svg is not "phrasing content" to it).
    const a = extractArticle(article(`<div>${sentence('<a href="/deal.pdf">full agreement<svg viewBox="0 0 8 8"><path d="M0 0h8"/></svg></a>')}</div>`), URL_);
    expect(paragraphsOf(a.text).at(-1)).toBe(sentence('full agreement'));
  });

  it('returns source none and empty text for a page with no article', () => {
    const html = page(
      '<title>Harbour News</title>',
      '<nav><a href="/">Home</a></nav><div class="grid"><a href="/a">Port strike ends</a><a href="/b">Ferry fares rise</a></div>',
    );
    // Readability never runs on it (isProbablyReaderable says no), so its <title> is not used either.
    expect(extractArticle(html, URL_)).toEqual({ title: null, text: '', source: 'none', publishedAt: null, modifiedAt: null, canonicalUrl: null });
  });
});

describe('extractArticle on synthetic pages: odd input', () => {
  it('never throws', () => {
    const odd = [
      '',
      'plain text',
      '<<<>>>&&&',
      '\u0000\uffff<div',
      '<p>x</p>',
      '<html>',
      '<svg><p>x</svg>',
      '<script>',
      '<script type="application/ld+json">{"@graph":[null,1,"x",[[]]]}</script>',
      '<div>'.repeat(20_000) + LONG.join('</p><p>'),
    ];
    for (const html of odd) {
      const a = extractArticle(html, 'not a url');
      expect(['json-ld', 'readability', 'none']).toContain(a.source);
      if (a.source === 'none') expect(a.text).toBe('');
    }
  });

  it('reads a page with no <html> element (linkedom does not create one)', () => {
    const html = `<title>T</title><meta property="og:title" content="Port strike ends"><p>${LONG.join('</p><p>')}</p>`;
    expect(extractArticle(html, URL_)).toMatchObject({ source: 'readability', title: 'Port strike ends', text: LONG.join('\n\n') });
  });

  it(`reads only the first ${MAX_HTML_CHARS} characters`, () => {
    const body = (headline: string) => ld({ '@type': 'NewsArticle', headline, articleBody: `${headline} body.` });
    const padding = `<!--${'x'.repeat(MAX_HTML_CHARS)}-->`;
    const a = extractArticle(page(body('Early'), padding + body('Late')), URL_);
    expect(a).toMatchObject({ source: 'json-ld', title: 'Early' });
    const b = extractArticle(page('', padding + body('Late')), URL_);
    expect(b).toMatchObject({ source: 'none', title: null, text: '' });
  });
});
