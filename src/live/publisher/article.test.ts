import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ScrapeError } from '../page.js';
import { parseArticle } from './article.js';

/** Real pages: test/fixtures/pages/publisher (see test/fixtures/pages/PROVENANCE.md). */
const PAGES = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../test/fixtures/pages/publisher');
const read = (name: string) => readFileSync(`${PAGES}/${name}`, 'utf8');

describe('parseArticle: Reuters 2024 (real page)', () => {
  const url = 'https://www.reuters.com/world/middle-east/israeli-tank-likely-scenario-fired-machine-gun-reporters-after-deadly-shelling-2024-03-07/';
  const a = parseArticle(read('reuters-article-israeli-tank-2024-03-07.html'), url);

  it('reads the JSON-LD NewsArticle, and the section (which it lacks) from article:section', () => {
    expect(a).toMatchObject({
      headline: "Israeli tank 'likely' fired machine gun at reporters after deadly shelling, report finds",
      authors: ['Maya Gebeily', 'Anthony Deutsch'],
      byline: 'Maya Gebeily and Anthony Deutsch',
      published_at: '2024-03-07T07:55:25.000Z',
      modified_at: '2024-03-07T12:21:53.078Z',
      section: 'Middle East',
      canonical_url: url,
      description:
        'An Israeli tank crew killed a Reuters reporter in Lebanon in October by firing two shells at a clearly identified group of journalists and then "likely" opened fire on them with a heavy machine gun in an attack that lasted 1 minute and 45 seconds, according to a report into the incident published on Thursday.',
      image_url:
        'https://www.reuters.com/resizer/F0DinetwB0azvrVr3AXlSsg4c-E=/1920x1005/smart/filters:quality(80)/cloudfront-us-east-2.images.arcpublishing.com/reuters/MTY5VYZ5JFOZ5BGV66FE3M5AQI.jpg',
    });
  });

  it('reads the 30 paragraph-N blocks, without the sign-off or the hidden ", opens new tab" link text', () => {
    expect(a.body).toHaveLength(30);
    expect(a.body[0]).toBe(
      'BEIRUT/THE HAGUE, March 7 (Reuters) - An Israeli tank crew killed a Reuters reporter in Lebanon in October by firing two shells at a clearly identified group of journalists and then "likely" opened fire on them with a heavy machine gun in an attack that lasted 1 minute and 45 seconds, according to a report into the incident published on Thursday.',
    );
    expect(a.body[1]).toMatch(/^The report by the Netherlands Organisation for Applied Scientific Research \(TNO\) - which/);
    expect(a.body[29]).toBe(
      "The day after the attack, Israel's military said it had visuals of the incident and it was being investigated. No results have been made public.",
    );
  });
});

describe('parseArticle: AP 2024 (real page)', () => {
  const url = 'https://apnews.com/article/trump-harris-presidential-election-2024-labor-day-151f82b59473d29a448ef1cea9afe471';
  const a = parseArticle(read('apnews-article-presidential-campaigns-2024-09-03.html'), url);

  it('reads the JSON-LD NewsArticle', () => {
    expect(a).toMatchObject({
      // JSON-LD first: its headline, not the h1's "…brace for an intense sprint to Election Day"
      headline: 'The presidential campaigns brace for a sprint to Election Day',
      authors: ['STEVE PEOPLES', 'THOMAS BEAUMONT', 'AMELIA THOMSON-DEVEAUX'],
      // as .Page-authors shows it, less the "By"
      byline: 'STEVE PEOPLES, THOMAS BEAUMONT and AMELIA THOMSON-DEVEAUX',
      published_at: '2024-09-03T04:03:19.000Z',
      // JSON-LD dateModified (= the page's bsp-timestamp 1725369093000), not the meta's 13:23:07.627
      modified_at: '2024-09-03T13:11:33.000Z',
      section: 'Politics',
      canonical_url: url,
      image_url:
        'https://dims.apnews.com/dims4/default/3bd1afa/2147483647/strip/false/crop/3014x2017+0+0/resize/1486x994!/quality/90/?url=https%3A%2F%2Fassets.apnews.com%2F43%2Fc8%2F1ad075f731f516d980479bc7622f%2F040034dc1ab44c97adc76c7d28d7f642',
    });
    expect(a.description).toMatch(/^After a summer of historic tumult, .* as an eight-week sprint to Election Day begins\.$/);
  });

  it('reads the 41 direct p children of .RichTextStoryBody', () => {
    expect(a.body).toHaveLength(41);
    expect(a.body[0]).toBe(
      'LA CROSSE, Wis. (AP) — After a summer of historic tumult, the path to the presidency for both Kamala Harris and Donald Trump this fall is becoming much clearer.',
    );
    expect(a.body[40]).toBe(
      'Peoples reported from New York and Thomson-DeVeaux from Washington. Associated Press writers Will Weissert in Johnstown, Pennsylvania, and Bill Barrow in Atlanta contributed to this report.',
    );
  });
});

describe('parseArticle: the fallback order', () => {
  const PAGE = 'https://news.example.com/world/some-story?utm_source=feed';

  it('a field the JSON-LD lacks comes from the markup; @graph, @type arrays, a string author, a section array, articleBody', () => {
    const html = `<html><head>
      <link rel="canonical" href="/world/some-story">
      <meta property="og:title" content="OG title | Example News">
      <meta property="og:description" content="OG description.">
      <meta property="og:image" content="/img/lead.jpg">
      <meta property="article:published_time" content="2026-02-20T09:30:00+01:00">
      <meta property="article:modified_time" content="2026-02-20T11:00:00Z">
      <meta property="article:section" content="Meta section">
      <script type="application/ld+json">{ not json</script>
      <script type="application/ld+json">{"@context":"https://schema.org","@graph":[
        {"@type":"WebSite","name":"Example News"},
        {"@type":["ReportageNewsArticle"],"headline":"Floods close the valley road &amp; rail line","author":"By Jane Roe",
         "articleSection":["World","Europe"],"articleBody":"First paragraph.\\n\\nSecond paragraph."}
      ]}</script>
    </head><body><h1>Markup headline</h1></body></html>`;
    expect(parseArticle(html, PAGE)).toEqual({
      headline: 'Floods close the valley road & rail line',
      byline: 'Jane Roe',
      authors: ['Jane Roe'],
      published_at: '2026-02-20T08:30:00.000Z',
      modified_at: '2026-02-20T11:00:00.000Z',
      section: 'World',
      canonical_url: 'https://news.example.com/world/some-story',
      description: 'OG description.',
      image_url: 'https://news.example.com/img/lead.jpg',
      // no body paragraphs in the markup: articleBody, split on its line breaks
      body: ['First paragraph.', 'Second paragraph.'],
    });
  });

  it('an author object, an array of types, an ImageObject; markup paragraphs win over articleBody', () => {
    const html = `<html><head><script type="application/ld+json">[{"@type":["Article","AnalysisNewsArticle"],"headline":"H",
      "author":{"@type":"Person","name":"Ann Lee"},"image":{"@type":"ImageObject","url":"https://cdn.example.com/a.jpg"},
      "articleBody":"One flattened blob."}]</script></head>
      <body><article><h1>H</h1><p>Para one.</p><p>Para two.</p></article></body></html>`;
    expect(parseArticle(html, PAGE)).toMatchObject({
      headline: 'H',
      byline: 'Ann Lee',
      authors: ['Ann Lee'],
      image_url: 'https://cdn.example.com/a.jpg',
      body: ['Para one.', 'Para two.'],
    });
  });

  it('no JSON-LD at all: h1, meta, time[datetime], byline, article p without the boxes around the story', () => {
    const html = `<html><head><title>Story | Example</title>
      <meta property="og:url" content="https://news.example.com/local/bridge">
      <meta name="description" content="The old bridge reopens.">
      <meta property="article:section" content="Local">
      </head><body><article>
      <h1> The old bridge reopens </h1>
      <div class="byline">By Sam Hill, Ana Ruiz &amp; Bo Chen</div>
      <time datetime="2026-02-19T18:00:00Z">Feb 19, 2026</time>
      <p>After two years of work, the bridge is open.</p>
      <aside class="newsletter-signup"><p>Sign up for our newsletter!</p></aside>
      <p>   </p>
      <div class="related-stories"><p>Related: the bridge closes</p></div>
      <figure><img src="/b.jpg"><figcaption><p>The bridge.</p></figcaption></figure>
      <p>Cars crossed at <a href="/traffic">noon</a>.</p>
      </article></body></html>`;
    expect(parseArticle(html, PAGE)).toEqual({
      headline: 'The old bridge reopens',
      byline: 'Sam Hill, Ana Ruiz and Bo Chen',
      authors: ['Sam Hill', 'Ana Ruiz', 'Bo Chen'],
      published_at: '2026-02-19T18:00:00.000Z',
      modified_at: null,
      section: 'Local',
      canonical_url: 'https://news.example.com/local/bridge',
      description: 'The old bridge reopens.',
      image_url: null,
      body: ['After two years of work, the bridge is open.', 'Cars crossed at noon.'],
    });
  });

  it('a page with neither a NewsArticle nor a headline with paragraphs is a ScrapeError', () => {
    const cases = [
      '<html><body><h1>Sections</h1><ul><li><a href="/a">A</a></li></ul></body></html>',
      '<html><body><article><p>Text without a headline.</p></article></body></html>',
      '<html><head><script type="application/ld+json">{"@type":"Organization","name":"Example"}</script></head><body></body></html>',
    ];
    for (const html of cases) {
      try {
        parseArticle(html, PAGE);
        throw new Error('no ScrapeError thrown');
      } catch (e) {
        expect(e).toBeInstanceOf(ScrapeError);
        expect((e as ScrapeError).detail).toBe('neither a NewsArticle (JSON-LD) nor a headline with body paragraphs: not an article page');
      }
    }
  });
});

describe('parseArticle: a real page of another site', () => {
  // Issue 22: a results page is not an article: 502 naming what is missing, never an empty article.
  const FIXTURES = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../test/fixtures/pages');
  it.each(['web-search/duckduckgo-html-search-openai-news-2026.html', 'amazon-bestsellers/amazon-com-bestsellers-tools-home-improvement-2022.html'])(
    '%s is a ScrapeError',
    (name) => {
      expect(() => parseArticle(readFileSync(resolve(FIXTURES, name), 'utf8'), 'https://example.com/x')).toThrow(ScrapeError);
    },
  );
});
