import { beforeAll, describe, expect, it } from 'vitest';
import { readFixture, scrapeError } from '../../../test/helpers/pages.js';
import { parseCompanyReviews, type CompanyReviewsPage } from './parse.js';

/** Synthetic pages only: no real review profile was captured (synthetic/REVIEWS-JOBS.PROVENANCE.md). */
const at = new Date('2026-03-01T12:00:00Z');

/** Shape checks every parsed page must pass. */
function expectWellFormed(p: CompanyReviewsPage) {
  for (const r of p.reviews) {
    expect(r.rating).toBeGreaterThanOrEqual(1);
    expect(r.rating).toBeLessThanOrEqual(5);
    expect(r.id).toMatch(/^[0-9a-f]{24}$/);
    expect(r.body.length).toBeGreaterThan(10);
    expect(r.date).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/);
    expect(r.author_country).toMatch(/^[A-Z]{2}$/);
    if (r.reply) expect(r.reply.date! > r.date!).toBe(true);
  }
  const d = p.company.rating_distribution!;
  expect(d[1] + d[2] + d[3] + d[4] + d[5]).toBe(p.company.reviews_count);
}

describe('parseCompanyReviews: JSON-LD page (northwind-mobile.example, page 3 of 3)', () => {
  let p: CompanyReviewsPage;
  beforeAll(() => {
    p = parseCompanyReviews(readFixture('synthetic/company-reviews-northwind-mobile-jsonld.html'), 'https://www.trustpilot.com/review/northwind-mobile.example?page=3', at)!;
  });

  it('reads the company from the LocalBusiness, the breadcrumb and the Dataset, not the site Organization', () => {
    expect(p.company).toEqual({
      name: 'Northwind Mobile',
      domain: 'northwind-mobile.example',
      url: 'https://www.trustpilot.com/review/northwind-mobile.example',
      rating: 3.8,
      reviews_count: 48,
      // exact counts from the Dataset, not the header's rounded percentages
      rating_distribution: { 1: 8, 2: 3, 3: 4, 4: 9, 5: 24 },
      categories: ['Electronics & Technology', 'Mobile Phone Store'],
    });
    expect([p.page, p.total_pages]).toEqual([3, 3]);
    expectWellFormed(p);
  });

  it('reads the 8 reviews in page order, each joined with its card', () => {
    expect(p.reviews).toHaveLength(8);
    expect(p.reviews.map((r) => r.rating)).toEqual([5, 1, 4, 5, 3, 5, 2, 5]);
    expect(p.reviews[0]).toEqual({
      id: '6790a1b2c3d4e5f601234501',
      rating: 5,
      title: 'Unlocked phone arrived next day',
      body: 'Ordered a refurbished handset on Monday and it was here Tuesday morning. Battery health was 94%, exactly as listed.',
      author: 'Priya Raman',
      // country, experience date and the label exist only in the markup
      author_country: 'GB',
      date: '2025-09-14T08:21:07.000Z',
      experience_date: '2025-09-09T00:00:00.000Z',
      verified: true,
      reply: null,
    });
    expect(p.reviews[7]).toMatchObject({ id: '6790a1b2c3d4e5f601234508', author: 'Sam Whitaker', author_country: 'AU', date: '2025-07-21T23:12:05.000Z', verified: false, reply: null });
  });

  it("the company's reply comes from the card; the JSON-LD body is whole where the card cuts it", () => {
    expect(p.reviews[1]).toMatchObject({
      title: 'Still waiting for my refund',
      reply: { body: 'Hi Tom, we are sorry for the delay. Your refund was issued today and should show within 5 working days.', date: '2025-09-04T10:02:00.000Z' },
    });
    expect(p.reviews.filter((r) => r.reply).map((r) => r.author)).toEqual(['Tom Hadley', 'Lena Fischer']);
    expect(p.reviews[2]!.body).toMatch(/which is why I took off a star\.$/);
  });
});

describe('parseCompanyReviews: markup only (acmeoutdoor.example, page 2 of 7, no JSON-LD)', () => {
  let p: CompanyReviewsPage;
  beforeAll(() => {
    p = parseCompanyReviews(readFixture('synthetic/company-reviews-acmeoutdoor-markup.html'), 'https://uk.trustpilot.com/review/acmeoutdoor.example?page=2', at)!;
  });

  it('reads the header: name, "Reviews 132", the rating, percentages turned into counts, breadcrumb categories', () => {
    expect(p.company).toEqual({
      name: 'Acme Outdoor',
      domain: 'acmeoutdoor.example',
      url: 'https://uk.trustpilot.com/review/acmeoutdoor.example',
      rating: 4.2,
      reviews_count: 132,
      // 11%, 4%, 7%, 17%, 61% of 132
      rating_distribution: { 1: 15, 2: 5, 3: 9, 4: 22, 5: 81 },
      // not the footer's "Electronics & Technology"
      categories: ['Sports', 'Camping Store'],
    });
    expect([p.page, p.total_pages]).toEqual([2, 7]);
    expectWellFormed(p);
  });

  it('reads 20 cards; the first has a <time> without datetime, so its shown date is read', () => {
    expect(p.reviews).toHaveLength(20);
    expect(p.reviews[0]).toEqual({
      id: '67a4e0c1b2d3f4a5b6c7d801',
      rating: 5,
      title: 'Tent arrived two days early',
      body: 'Ordered the four-person tunnel tent for a festival and it turned up two days before the promised date. Pitched it in the garden in twenty minutes.',
      author: 'Gareth Lewis',
      author_country: 'GB',
      date: '2026-02-14T00:00:00.000Z',
      experience_date: '2026-02-10T00:00:00.000Z',
      verified: true,
      reply: null,
    });
    expect(p.reviews[19]).toEqual({
      id: '67a4e0c1b2d3f4a5b6c7d820',
      rating: 5,
      title: 'Perfect gift',
      body: 'Bought a flask and mug set as a present, gift wrapped nicely.',
      author: 'Freya Anderson',
      author_country: 'GB',
      date: '2026-01-26T16:44:02.000Z',
      experience_date: '2026-01-24T00:00:00.000Z',
      verified: false,
      reply: null,
    });
  });

  it('ratings, the Verified label and replies per card; the reply date is not taken for the review date', () => {
    expect(p.reviews.map((r) => r.rating).join('')).toBe('54515545352545551545');
    expect(p.reviews.filter((r) => r.verified)).toHaveLength(9);
    expect(p.reviews[3]).toMatchObject({
      author: 'Rachel Green',
      rating: 1,
      date: '2026-02-11T16:40:05.000Z',
      reply: { body: 'Hi Rachel, we are very sorry. A stock label was wrong; the navy jacket is on its way by next-day delivery.', date: '2026-02-12T09:11:00.000Z' },
    });
    expect(p.reviews.filter((r) => r.reply).map((r) => r.author)).toEqual(['Rachel Green', "Liam O'Connor", 'Ravi Shah']);
  });
});

describe('parseCompanyReviews: other pages', () => {
  it('the "page not found" page is null, though it carries the site\'s own Organization JSON-LD', () => {
    expect(parseCompanyReviews(readFixture('synthetic/company-reviews-not-found.html'), 'https://www.trustpilot.com/review/no-such-company.example', at)).toBeNull();
  });

  it('a robot check and a Cloudflare challenge are ScrapeErrors', () => {
    const captcha = '<html><head><title>Robot Check</title></head><body><form action="/errors/validateCaptcha"></form></body></html>';
    expect(scrapeError(() => parseCompanyReviews(captcha, 'https://www.trustpilot.com/review/a.example', at)).detail).toBe(
      'the site answered with a robot check (captcha) instead of the page',
    );
    const cloudflare = '<html><head><title>Just a moment...</title></head><body><div id="challenge-running">Checking your browser</div></body></html>';
    expect(scrapeError(() => parseCompanyReviews(cloudflare, 'https://www.trustpilot.com/review/a.example', at)).detail).toBe(
      'the site answered with a bot challenge instead of the page',
    );
  });

  it('a page that is neither a profile nor a not-found page is a ScrapeError', () => {
    const other = '<html><head><title>Example Domain</title></head><body><h1>Example Domain</h1></body></html>';
    const detail = 'no company profile or review cards on the page: the layout changed or the page is not a review profile';
    expect(scrapeError(() => parseCompanyReviews(other, 'https://www.trustpilot.com/review/a.example', at)).detail).toBe(detail);
    expect(scrapeError(() => parseCompanyReviews(readFixture('synthetic/job-board-no-results.html'), 'https://www.trustpilot.com/review/a.example', at)).detail).toBe(detail);
  });

  it('review cards none of which has a rating are a ScrapeError', () => {
    const html = '<html><body><h1>Acme</h1><article data-service-review-card-paper="true"><p data-service-review-text-typography="true">No stars here at all.</p></article></body></html>';
    expect(scrapeError(() => parseCompanyReviews(html, 'https://www.trustpilot.com/review/acme.example', at)).detail).toBe('review cards without star ratings: the layout changed');
  });

  it('reviews nested in the business, cards without ids paired by position, stars from the image alt, one page only', () => {
    const ld = {
      '@context': 'https://schema.org',
      '@type': ['LocalBusiness'],
      name: 'Tiny Shop',
      url: 'https://tiny.example/',
      aggregateRating: { ratingValue: 4.5, reviewCount: 2 },
      review: [
        { '@type': 'Review', author: 'Ann', datePublished: '2026-02-01', reviewBody: 'Lovely mugs.', reviewRating: { ratingValue: '5' } },
        { '@type': 'Review', author: { name: 'Bo' }, datePublished: '2026-01-15', reviewBody: 'Fine.', reviewRating: { ratingValue: 4 } },
      ],
    };
    const card = (stars: number, country: string) =>
      `<article data-service-review-card-paper="true"><img alt="Rated ${stars} out of 5 stars"><time>Jan 1, 2026</time><p data-service-review-text-typography="true">card text</p><div data-consumer-country-typography="true">${country}</div></article>`;
    const html = `<html><head><script type="application/ld+json">${JSON.stringify(ld)}</script></head><body>${card(5, 'NZ')}${card(4, 'CA')}</body></html>`;
    const p = parseCompanyReviews(html, 'https://www.trustpilot.com/review/tiny.example', at)!;
    expect(p.company).toMatchObject({ name: 'Tiny Shop', domain: 'tiny.example', rating: 4.5, reviews_count: 2, rating_distribution: null, categories: [] });
    expect(p.reviews.map((r) => [r.author, r.rating, r.body, r.date, r.author_country])).toEqual([
      ['Ann', 5, 'Lovely mugs.', '2026-02-01T00:00:00.000Z', 'NZ'],
      ['Bo', 4, 'Fine.', '2026-01-15T00:00:00.000Z', 'CA'],
    ]);
    // no page parameter and no pagination: the first page is the only one
    expect([p.page, p.total_pages]).toEqual([1, 1]);
  });
});
