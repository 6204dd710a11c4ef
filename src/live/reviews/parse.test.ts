import { beforeAll, describe, expect, it } from 'vitest';
import { readFixture, scrapeError } from '../../../test/helpers/pages.js';
import { parseCompanyReviews, type CompanyReviewsPage } from './parse.js';

/**
 * One real capture proves the parser (trustpilot.com/review/bt.com, company-reviews/ in
 * test/fixtures/pages/PROVENANCE.md): its __NEXT_DATA__, its JSON-LD and its markup, together and
 * each alone. The synthetic pages are kept only for layouts that capture does not show (said at
 * each describe). The synthetic pages are read with this fetch time.
 */
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

// ---------------------------------------------------------------------------------------------
// The real page. Every expected value below was read by hand from the HTML, not printed by the
// parser; each comment says where (byte offsets as `grep -b -o` gives them). "card N" is the
// N-th `article[data-service-review-card-paper]`; "NEXT" is `script#__NEXT_DATA__`'s
// props.pageProps; "LD" is the `script[data-business-unit-json-ld]` @graph.

const BT = 'company-reviews/trustpilot_review_bt.com_2023-05.html';
const BT_URL = 'https://www.trustpilot.com/review/bt.com';
// Read about 2023-05-07T08:00Z: card 1's "18 hours ago" is 2023-05-06T13:18:34Z, card 14's "Updated 2 hours ago" 2023-05-07T05:52:50Z.
const btAt = new Date('2023-05-07T08:00:00Z');

const BT_COMPANY = {
  name: 'BT', // NEXT businessUnit.displayName "BT" @238903; LD LocalBusiness name; h1 span[class*=displayName] "BT"
  domain: 'bt.com', // the URL's /review/bt.com; NEXT identifyingName "bt.com"
  url: BT_URL,
  rating: 1.5, // NEXT trustScore 1.5 @238973; LD aggregateRating ratingValue "1.5" @10418; p[data-rating-typography] "1.5" @53197
  reviews_count: 13582, // NEXT numberOfReviews 13582 @238949; LD reviewCount "13582" @10438; p[data-reviews-count-typography] "13,582 total" @64683
  // NEXT filters.reviewStatistics.ratings {one: 11798, two: 415, three: 198, four: 208, five: 963} @274216; the LD Dataset's
  // csvw columns "1 star" … "5 stars" @35485; the star rows' titles "11,798 of 13,582 reviews" @68122, "415 of" @67297,
  // "198 of" @66466, "208 of" @65638, "963 of 13,582 reviews" @64810 (their shown 87% 3% 1% 2% 7% would give 11816, 407, 136, 272, 951)
  rating_distribution: { 1: 11798, 2: 415, 3: 198, 4: 208, 5: 963 },
  // NEXT businessUnit.breadcrumb top/mid/bottomLevelDisplayName @239620; LD BreadcrumbList items 2-4 @9034, @9244, @9436;
  // the markup's nav[aria-label=Breadcrumb] links (not the sidebar's "Mobile Network Operator" @204255)
  categories: ['Electronics & Technology', 'Computers & Phones', 'Cell Phone Store'],
};

/** Card 1 (@72029), NEXT reviews[0] (@240665), the first LD Review. */
const BT_FIRST = {
  id: '6456378afe4e676d706281c4', // card 1's a[href="/reviews/6456378afe4e676d706281c4"] @75076
  rating: 1, // card 1's data-service-review-rating="1", img alt "Rated 1 out of 5 stars"
  title: 'Communication shambles', // card 1's h2[data-service-review-title-typography] @75445
  // card 1's p[data-service-review-text-typography], one paragraph
  body: 'Oh my god, you almost have to laugh at how a communications business is so bad at internal communication. After an upgrade a tech expert came and messed up wiring and left with broadband not working. Engineers failed to turn up on two occasions despite promising time slots. Call centre staff are nice but not empowered so just apologise and can’t actually speak to any colleagues. Just hours of wasted time for customers and BT staff going round in circles. Absolute shambles.',
  author: 'jason', // card 1's span[data-consumer-name-typography] "jason" @72850
  author_country: 'GB', // card 1's [data-consumer-country-typography] <span>GB</span>; NEXT consumer.countryCode "GB" @241762
  date: '2023-05-06T13:18:34.000Z', // card 1's <time dateTime="2023-05-06T13:18:34.000Z"> @74868 ("18 hours ago")
  experience_date: '2023-05-05T00:00:00.000Z', // card 1's "Date of experience: May 05, 2023" @76424
  verified: false, // NEXT labels.verification.isVerified false ("not-verified"); no "Verified" label on any card
  reply: {
    // card 1's p[data-service-review-business-reply-text-typography] @77868: "…a review.<br/><br/>I am sorry…recently.  Get in touch…<br/><br/>Thanks,<br/><br/>Robbie"
    body: "Hi Jason. Thank you for taking the time to leave us a review.\n\nI am sorry for the problems you've experienced recently. Get in touch with my colleagues on Facebook (BT) or Twitter @bt_uk and a member of the team will be more than happy to help you out.\n\nThanks,\n\nRobbie",
    date: '2023-05-06T14:54:03.000Z', // the reply's <time dateTime="2023-05-06T14:54:03.000Z"> @77505 ("17 hours ago")
  },
};

/** Card 20 (@186255), the last NEXT review, the last LD Review (@34366). */
const BT_LAST = {
  id: '645293ca9ce7558c6f001b91', // card 20's a[href="/reviews/645293ca9ce7558c6f001b91"] @189348
  rating: 1, // card 20's data-service-review-rating="1"
  title: 'I rang up customer services to renew my…', // card 20's h2, cut by the site (LD headline the same)
  // card 20's p[data-service-review-text-typography] ("don&#x27;t" is "don't")
  body: "I rang up customer services to renew my contract and was confronted by the most disagreeable and rude person I have had the displeasure of talking to in a long time. Also he lied and talked over me! They are also expensive and don't seem to want to keep old customers. Would never recommend them to anybody. Absolutely awful company. 😡😡😡😡😡",
  author: 'David Roberts', // card 20's span[data-consumer-name-typography] @187118
  author_country: 'GB', // card 20's <span>GB</span>
  date: '2023-05-03T19:03:06.000Z', // card 20's <time dateTime="2023-05-03T19:03:06.000Z"> @189142 ("4 days ago")
  experience_date: '2023-05-03T00:00:00.000Z', // card 20's "Date of experience: May 03, 2023" @190596
  verified: false,
  reply: {
    // card 20's reply text @192038, "<br/><br/>" between its paragraphs, "  " after two sentences
    body: "Hi David. Thank you for your review. I am sorry for the problems you had when you contacted us to renew your contract. That's not good enough.\n\nMessage us on Facebook (BT) or Twitter @bt_uk and one of the guys will be happy to help you with this.\n\nIf you do decide to reach out for support, let the team know I've sent you over from Trustpilot.\n\nThanks,\n\nRobbie",
    date: '2023-05-04T08:16:58.000Z', // the reply's <time dateTime="2023-05-04T08:16:58.000Z"> @191677 ("3 days ago")
  },
};

// The 20 cards' data-service-review-rating values in page order (grep -o 'data-service-review-rating="."').
const BT_RATINGS = '11111113111211151111';
// The cards that hold a [data-service-review-business-reply-text-typography] (12 on the page), by author.
const BT_REPLIED = [
  'jason',
  'Tom Hills',
  'Rebecca H',
  'Mrs Loraine Gleave',
  'Jonny',
  'Paul Hodder',
  'Guest',
  'Arthur',
  'Mr Watson',
  'philip selby',
  'UKRes',
  'David Roberts',
];

/** The page with one or more of its sources taken out: the structured scripts removed, or the cards' marker renamed. */
const withoutNext = (h: string) => h.replace(/<script id="__NEXT_DATA__"[\s\S]*?<\/script>/, '');
const withoutLd = (h: string) => h.replace(/<script type="application\/ld\+json"[\s\S]*?<\/script>/g, '');
const withoutCards = (h: string) => h.replaceAll('data-service-review-card-paper', 'data-gone');

describe.each([
  ['the whole page: __NEXT_DATA__, JSON-LD and markup', (h: string) => h],
  ['__NEXT_DATA__ alone (JSON-LD removed, cards unmarked)', (h: string) => withoutCards(withoutLd(h))],
  ['JSON-LD and markup (__NEXT_DATA__ removed)', withoutNext],
  ['markup alone (both scripts removed)', (h: string) => withoutLd(withoutNext(h))],
])('parseCompanyReviews: trustpilot.com/review/bt.com, real capture: %s', (source, strip) => {
  let p: CompanyReviewsPage;
  beforeAll(() => {
    p = parseCompanyReviews(strip(readFixture(BT)), BT_URL, btAt)!;
  });

  it('reads the company: name, trust score, review count, the exact count per star, the breadcrumb categories', () => {
    expect(p.company).toEqual(BT_COMPANY);
    // NEXT filters.pagination {currentPage: 1, totalPages: 83} @273666; a[name="pagination-button-1"][aria-current="page"] @193340
    // and a[name="pagination-button-last"] "Page number 83", href …&page=83 @195512 (the numbered buttons stop at 4)
    expect([p.page, p.total_pages]).toEqual([1, 83]);
    expectWellFormed(p);
  });

  it('reads the 20 reviews in page order: the first and the last whole, with replies and their line breaks', () => {
    expect(p.reviews).toHaveLength(20); // 20 article[data-service-review-card-paper], 20 NEXT reviews, 20 LD Reviews
    expect(p.reviews[0]).toEqual(BT_FIRST);
    expect(p.reviews[19]).toEqual(BT_LAST);
    expect(p.reviews.map((r) => r.rating).join('')).toBe(BT_RATINGS);
    expect(p.reviews.filter((r) => r.reply).map((r) => r.author)).toEqual(BT_REPLIED);
    // card 2's <span>UA</span> @82259, card 9's CA; the other 18 cards say GB
    expect(p.reviews.map((r) => r.author_country).filter((c) => c !== 'GB')).toEqual(['UA', 'CA']);
    // card 4's text "…in 1 room only.<br/>Complained to BT…" @93654 on; the LD reviewBody drops that break ("only.Complained")
    expect(p.reviews[3]!.body).toContain('in 1 room only.\nComplained to BT');
  });

  it('dates edited reviews by their first publication, except from the markup alone', () => {
    // Cards 11, 12 and 14 show "Updated 2 days ago" (@133980), "Updated 3 days ago", "Updated 2 hours ago": their <time>
    // holds the edit; NEXT dates.publishedDate and LD datePublished hold the first publication.
    const edited = [10, 11, 13].map((i) => [p.reviews[i]!.author, p.reviews[i]!.date]);
    if (source.startsWith('markup alone')) {
      expect(edited).toEqual([
        ['Jonny', '2023-05-05T19:11:10.000Z'],
        ['Harrison Mills', '2023-05-04T15:34:30.000Z'],
        ['HC', '2023-05-07T05:52:50.000Z'],
      ]);
    } else {
      expect(edited).toEqual([
        ['Jonny', '2023-05-05T18:15:14.000Z'], // NEXT / LD for 64552b9273f9318af24833c8
        ['Harrison Mills', '2023-05-03T19:36:49.000Z'], // 64529bb11c7491460db4f163
        ['HC', '2023-05-06T11:00:23.000Z'], // 645617276499695b738ac0ec
      ]);
    }
  });
});

describe('parseCompanyReviews: the real capture with only its JSON-LD (no __NEXT_DATA__, cards unmarked)', () => {
  it('still gives the company and every review, less what only the others carry (country, experience date, reply, line breaks)', () => {
    const p = parseCompanyReviews(withoutCards(withoutNext(readFixture(BT))), BT_URL, btAt)!;
    expect(p.company).toEqual(BT_COMPANY);
    expect(p.reviews).toHaveLength(20);
    expect(p.reviews.map((r) => r.rating).join('')).toBe(BT_RATINGS);
    const { author_country: _c, experience_date: _e, reply: _r, ...ldFields } = BT_LAST;
    expect(p.reviews[19]).toEqual({ ...ldFields, author_country: null, experience_date: null, reply: null });
    expect(p.reviews[3]!.body).toContain('in 1 room only.Complained to BT'); // the LD reviewBody as written
  });
});

describe('parseCompanyReviews: pages that are not a review profile', () => {
  const detail =
    'no company profile on the page: no __NEXT_DATA__ businessUnit, no JSON-LD business with aggregateRating, no rating header ([data-rating-typography], [data-reviews-count-typography]) and no review cards (article[data-service-review-card-paper]); the layout changed or the page is not a review profile';

  it.each([
    'publisher/reuters-article-israeli-tank-2024-03-07.html',
    'publisher/apnews-article-presidential-campaigns-2024-09-03.html',
    // a real page of another site's reviews: 8 div[data-hook="review"], none of this site's markers
    'amazon-product/amazon-com-product-portable-charger-2026.html',
  ])('a real page of another site (%s) is a ScrapeError naming what is missing, never an empty profile', (name) => {
    expect(scrapeError(() => parseCompanyReviews(readFixture(name), BT_URL, btAt)).detail).toBe(detail);
  });

  it('the real profile with its reviews gone from every source is a ScrapeError, not a profile with no reviews', () => {
    const bare = withoutCards(withoutLd(withoutNext(readFixture(BT))));
    expect(scrapeError(() => parseCompanyReviews(bare, BT_URL, btAt)).detail).toBe(
      'the profile counts 13582 reviews but the page shows none: no __NEXT_DATA__ reviews, no JSON-LD Review and no review cards (article[data-service-review-card-paper]); the layout changed',
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Synthetic pages, for what the real capture does not show.

/** Kept for: "Verified" labels (no review on the capture is verified), a card text cut with "…" beside the whole JSON-LD body, a JSON-LD page without __NEXT_DATA__, and the last page of a profile (page 3 of 3, no "last" button). */
describe('parseCompanyReviews: JSON-LD page (northwind-mobile.example, page 3 of 3)', () => {
  let p: CompanyReviewsPage;
  beforeAll(() => {
    p = parseCompanyReviews(
      readFixture('synthetic/company-reviews-northwind-mobile-jsonld.html'),
      'https://www.trustpilot.com/review/northwind-mobile.example?page=3',
      at,
    )!;
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
    expect(p.reviews[7]).toMatchObject({
      id: '6790a1b2c3d4e5f601234508',
      author: 'Sam Whitaker',
      author_country: 'AU',
      date: '2025-07-21T23:12:05.000Z',
      verified: false,
      reply: null,
    });
  });

  it("the company's reply comes from the card; the JSON-LD body is whole where the card cuts it", () => {
    expect(p.reviews[1]).toMatchObject({
      title: 'Still waiting for my refund',
      reply: {
        body: 'Hi Tom, we are sorry for the delay. Your refund was issued today and should show within 5 working days.',
        date: '2025-09-04T10:02:00.000Z',
      },
    });
    expect(p.reviews.filter((r) => r.reply).map((r) => r.author)).toEqual(['Tom Hadley', 'Lena Fischer']);
    expect(p.reviews[2]!.body).toMatch(/which is why I took off a star\.$/);
  });
});

/** Kept for: star rows that show percentages only (the capture's rows carry exact counts in their titles), a card <time> without datetime, an h1 reading "Reviews 132", Verified labels, and category links in the footer. */
describe('parseCompanyReviews: markup only (acmeoutdoor.example, page 2 of 7, no JSON-LD)', () => {
  let p: CompanyReviewsPage;
  beforeAll(() => {
    p = parseCompanyReviews(
      readFixture('synthetic/company-reviews-acmeoutdoor-markup.html'),
      'https://uk.trustpilot.com/review/acmeoutdoor.example?page=2',
      at,
    )!;
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
      reply: {
        body: 'Hi Rachel, we are very sorry. A stock label was wrong; the navy jacket is on its way by next-day delivery.',
        date: '2026-02-12T09:11:00.000Z',
      },
    });
    expect(p.reviews.filter((r) => r.reply).map((r) => r.author)).toEqual(['Rachel Green', "Liam O'Connor", 'Ravi Shah']);
  });
});

/** Kept for: the site's "page not found" page (none was captured), robot checks, and small hand-made pages for single rules. */
describe('parseCompanyReviews: other pages', () => {
  it('the "page not found" page is null, though it carries the site\'s own Organization JSON-LD', () => {
    expect(
      parseCompanyReviews(readFixture('synthetic/company-reviews-not-found.html'), 'https://www.trustpilot.com/review/no-such-company.example', at),
    ).toBeNull();
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
    const detail =
      'no company profile on the page: no __NEXT_DATA__ businessUnit, no JSON-LD business with aggregateRating, no rating header ([data-rating-typography], [data-reviews-count-typography]) and no review cards (article[data-service-review-card-paper]); the layout changed or the page is not a review profile';
    expect(scrapeError(() => parseCompanyReviews(other, 'https://www.trustpilot.com/review/a.example', at)).detail).toBe(detail);
    expect(
      scrapeError(() => parseCompanyReviews(readFixture('synthetic/job-board-no-results.html'), 'https://www.trustpilot.com/review/a.example', at)).detail,
    ).toBe(detail);
  });

  it('review cards none of which has a rating are a ScrapeError', () => {
    const html =
      '<html><body><h1>Acme</h1><article data-service-review-card-paper="true"><p data-service-review-text-typography="true">No stars here at all.</p></article></body></html>';
    expect(scrapeError(() => parseCompanyReviews(html, 'https://www.trustpilot.com/review/acme.example', at)).detail).toBe(
      'review cards without star ratings (no [data-service-review-rating], no "Rated N out of 5" image): the layout changed',
    );
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
