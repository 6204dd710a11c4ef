/**
 * The examples /openapi.json shows, by operationId: a request body where the operation takes
 * one, and a 200 answer. Short and made up (`.example` hosts), but each passes its operation's
 * schema (test/openapi.test.ts checks, and `redocly lint` too).
 */

interface Example {
  request?: unknown;
  response: unknown;
}

import { DIMS } from '../dims.js';

/** A bge-m3-sized vector (the service normalises it); the API takes no shorter one. */
const EXAMPLE_VECTOR = Array.from({ length: DIMS }, (_, i) => Math.round(Math.sin(i + 1) * 1000) / 32000);

const ID = ['0b8f6d2e-5c1a-4f3e-9a7b-2d4c6e8f1a3b', '7e2a9c41-3b5d-4e6f-8a1c-9d0b2f4e6a8c'];

const article = (i: number, title: string, source: string, time: string) => ({
  id: ID[i],
  title,
  body: `${title}. Dock workers returned after a week-long stoppage over automation at the container terminals.`,
  source_name: source,
  source_url: `https://${source.toLowerCase().replace(/ /g, '')}.example/${title.toLowerCase().replace(/ /g, '-')}`,
  event_time: time,
});

/** A live scrape's envelope (schemas.ts `liveEnvelope`) around its results. */
const live = (engine: string, family: string, query: Record<string, unknown>, results: Record<string, unknown>[]) => ({
  engine,
  family,
  query,
  count: results.length,
  results,
  next_cursor: null,
});

const asin = 'B0DR8G428S';
const seller = 'A2DP2EEPU3VU45';
const mp = (extra: Record<string, unknown>) => ({ country: 'us', zip_code: null, ...extra });

const MONITOR = {
  id: 'mon_4f1c2b7a9e0d3c5b6a81',
  created: '2026-05-01T09:00:00Z',
  status: 'active',
  paused_reason: null,
  paused_seq: null,
  query: { text: 'port strikes and dock automation' },
  min_score: 0.6,
  sources: null,
  exclude_sources: null,
  include_edits: false,
  delivery: { type: 'webhook', url: 'https://hooks.example/newsmatch' },
  start_seq: 51200,
  failures: 0,
};

export const EXAMPLES: Record<string, Example> = {
  matchArticles: {
    request: { text: 'dock workers strike over automation', order: 'relevance', limit: 2, since: '2026-05-01T00:00:00Z' },
    response: {
      model: 'bge-m3',
      order: 'relevance',
      count: 2,
      items: [
        { ...article(0, 'Port strike ends', 'Daily Ledger', '2026-05-03T08:00:00Z'), score: 0.81, best_chunk: 'Dock workers return after a week…' },
        { ...article(1, 'Terminal automation talks resume', 'Wire One', '2026-05-02T14:30:00Z'), score: 0.74, best_chunk: 'Union and operators meet again…' },
      ],
      next_cursor: null,
      seq: 1048576,
    },
  },
  listSources: {
    response: {
      count: 2,
      sources: [
        { name: 'Daily Ledger', homepage: 'https://ledger.example/', article_count: 1204, last_event_time: '2026-05-03T08:00:00Z' },
        { name: 'Wire One', homepage: 'https://wireone.example/', article_count: 596, last_event_time: '2026-05-02T14:30:00Z' },
      ],
    },
  },
  searchNews: {
    response: {
      results: [
        {
          ...article(0, 'Port strike ends', 'Daily Ledger', '2026-05-03T08:00:00Z'),
          highlight: 'Dock workers returned after a week-long <mark>strike</mark>…',
        },
      ],
      count: 1,
      next_cursor: null,
      partial: false,
    },
  },
  searchJobs: {
    response: {
      results: [
        {
          id: ID[1],
          url: 'https://jobs.example/postings/4411',
          title: 'Senior Backend Engineer',
          company: 'Harbor Logistics',
          location: 'Rotterdam, Netherlands',
          remote: false,
          employment_type: 'full_time',
          salary_min: 70000,
          salary_max: 90000,
          salary_currency: 'EUR',
          skills: ['TypeScript', 'PostgreSQL'],
          posted_at: '2026-05-02T09:00:00Z',
          source: 'jobs.example',
          snippet: 'Build the services that schedule container moves…',
          highlight: 'Build the services in <mark>TypeScript</mark>…',
        },
      ],
      count: 1,
      next_cursor: 'eyJrIjoxfQ',
      partial: false,
    },
  },
  getSkillsMarket: {
    response: {
      interval: 'month',
      since: '2026-03-01',
      until: '2026-04-01',
      skills: [
        {
          name: 'TypeScript',
          category: 'Programming languages',
          total: 412,
          series: [
            { period_start: '2026-03-01', postings: 198 },
            { period_start: '2026-04-01', postings: 214 },
          ],
          co_occurring: [{ name: 'React', postings: 160 }],
        },
      ],
    },
  },
  getNewsVolume: {
    response: {
      total: 5,
      days: [
        { date: '2026-05-02', count: 2, by_source: { 'Wire One': 2 } },
        { date: '2026-05-03', count: 3, by_source: { 'Daily Ledger': 2, 'Wire One': 1 } },
      ],
      sources: [
        { name: 'Wire One', count: 3 },
        { name: 'Daily Ledger', count: 2 },
      ],
    },
  },
  getNewsVolumeByVector: {
    request: { vector: EXAMPLE_VECTOR, min_score: 0.6, since: '2026-05-01', until: '2026-05-03', sources: ['Daily Ledger'] },
    response: { total: 2, days: [{ date: '2026-05-03', count: 2, by_source: { 'Daily Ledger': 2 } }], sources: [{ name: 'Daily Ledger', count: 2 }] },
  },
  getSkillsTaxonomy: {
    response: {
      count: 2,
      categories: ['Databases', 'Programming languages'],
      skills: [
        { name: 'PostgreSQL', category: 'Databases', aliases: ['Postgres'] },
        { name: 'TypeScript', category: 'Programming languages', aliases: ['TS'] },
      ],
    },
  },
  getSourcesTaxonomy: {
    response: {
      count: 1,
      sources: [{ name: 'Daily Ledger', homepage: 'https://ledger.example/', language: 'en', country: 'GB', article_count: 1204 }],
    },
  },
  getAccount: {
    response: {
      id: 'acme',
      name: 'Acme Research',
      created_at: '2026-01-10T12:00:00Z',
      unlimited: false,
      credits: { total: 950, subscription: 700, free: 50, purchased: 200, expiring: [{ credits: 700, expires_at: '2026-06-01T00:00:00Z' }] },
      subscriptions: [
        {
          product: 'match',
          plan: 'pro',
          period_start: '2026-05-01T00:00:00Z',
          period_end: '2026-06-01T00:00:00Z',
          used: 300,
          credits_per_call: 1,
          rate_limit: { limit: '10/1s', quota: 10, window_s: 1 },
        },
      ],
    },
  },
  createMonitor: {
    request: { text: 'port strikes and dock automation', min_score: 0.6, webhook_url: 'https://hooks.example/newsmatch' },
    response: { monitor: MONITOR, secret: 'whsec_3q2-7wVvbE1mDJz2nC8u0k1Yh9sLx4aP' },
  },
  listMonitors: { response: { count: 1, items: [MONITOR] } },
  getMonitor: { response: MONITOR },
  deleteMonitor: { response: { id: MONITOR.id, deleted: true } },
  resumeMonitor: { request: {}, response: MONITOR },
  listMonitorDeliveries: {
    response: {
      count: 2,
      items: [
        { event: 'evt_4f1c2b7a9e0d3c5b6a81_52311', at: '2026-05-02T08:01:30Z', attempt: 2, status: 200, ok: true, error: null, duration_ms: 84, next_at: null },
        {
          event: 'evt_4f1c2b7a9e0d3c5b6a81_52311',
          at: '2026-05-02T08:01:00Z',
          attempt: 1,
          status: 503,
          ok: false,
          error: 'HTTP 503',
          duration_ms: 41,
          next_at: '2026-05-02T08:01:30Z',
        },
      ],
    },
  },
  getHealth: { response: { status: 'ok' } },
  getReadiness: { response: { status: 'ready' } },
  getMetrics: {
    response:
      '# HELP http_requests_total Requests answered, by route and status.\n# TYPE http_requests_total counter\nhttp_requests_total{route="/v1/match",status="200"} 1027\n',
  },
  searchLive: {
    response: live('web_search', 'web', { q: 'container terminal automation', page: 1, country: 'us', language: 'en' }, [
      {
        position: 1,
        title: 'Automation at container terminals',
        url: 'https://ports.example/automation',
        displayed_url: 'ports.example › automation',
        snippet: 'How automated cranes changed the quay…',
        date: null,
      },
    ]),
  },
  getProduct: {
    response: live('marketplace', 'ecommerce', mp({ asin }), [
      {
        asin,
        title: 'Stainless Steel Water Bottle, 750 ml',
        url: `https://marketplace.example/dp/${asin}`,
        brand: 'Harbor',
        price_text: '$24.99',
        price: 24.99,
        currency: 'USD',
        availability: 'In Stock',
        rating: 4.6,
        ratings_count: 1843,
      },
    ]),
  },
  getProductReviews: {
    response: live('marketplace', 'ecommerce', mp({ asin }), [
      {
        id: 'R2XK4Q9EXAMPLE',
        title: 'Keeps water cold all day',
        rating: 5,
        author: 'Sam',
        date_text: 'July 8, 2026',
        date: '2026-07-08',
        location: 'United States',
        verified_purchase: true,
        body: 'Still cold after ten hours in the car.',
        helpful_votes: 12,
      },
    ]),
  },
  getProductOffers: {
    response: live('marketplace', 'ecommerce', mp({ asin }), [
      {
        condition: 'New',
        price_text: '$24.99',
        price: 24.99,
        delivery: 'FREE delivery Friday',
        ships_from: 'Marketplace',
        seller: { name: 'Harbor Goods', id: seller },
      },
    ]),
  },
  getSeller: {
    response: live('marketplace', 'ecommerce', mp({ seller_id: seller }), [
      { id: seller, name: 'Harbor Goods', rating: 4.8, ratings_count: 5120, business_name: 'Harbor Goods LLC' },
    ]),
  },
  lookupProduct: {
    response: live('marketplace', 'ecommerce', { gtin: '0012345678905' }, [
      { asin, title: 'Stainless Steel Water Bottle, 750 ml', url: `https://marketplace.example/dp/${asin}`, price: 24.99, currency: 'USD' },
    ]),
  },
  getSellerProducts: {
    response: live('marketplace', 'ecommerce', mp({ seller_id: seller, page: 1 }), [
      { asin, title: 'Stainless Steel Water Bottle, 750 ml', url: `https://marketplace.example/dp/${asin}`, price: 24.99, currency: 'USD' },
    ]),
  },
  getCategories: {
    response: live('marketplace', 'ecommerce', mp({ node: null }), [
      { name: 'Sports & Outdoors', node: '3375251', url: 'https://marketplace.example/b?node=3375251' },
    ]),
  },
  getBestsellers: {
    response: live('marketplace', 'ecommerce', mp({ category: 'sporting-goods', page: 1 }), [
      {
        rank: 1,
        asin,
        title: 'Stainless Steel Water Bottle, 750 ml',
        url: `https://marketplace.example/dp/${asin}`,
        price: 24.99,
        currency: 'USD',
        rating: 4.6,
      },
    ]),
  },
  getPublisherListing: {
    response: live('wire_listing', 'publisher', { section: 'business', page: 1 }, [
      { title: 'Port strike ends', url: 'https://wire.example/business/port-strike-ends', published_at: '2026-05-03T08:00:00Z' },
    ]),
  },
  getPublisherArticle: {
    response: live('publisher_article', 'publisher', { url: 'https://wire.example/business/port-strike-ends' }, [
      {
        headline: 'Port strike ends',
        byline: 'A. Reporter',
        published_at: '2026-05-03T08:00:00Z',
        section: 'Business',
        canonical_url: 'https://wire.example/business/port-strike-ends',
        paragraphs: ['Dock workers returned on Monday after a week-long stoppage.'],
      },
    ]),
  },
  getLaunches: {
    response: live('launches', 'launches', { date: '2026-05-03', q: null }, [
      {
        rank: 1,
        slug: 'example-app',
        name: 'Example App',
        tagline: 'Ship release notes from your commits',
        topics: ['Developer Tools'],
        votes: 412,
        comments: 38,
        url: 'https://launches.example/products/example-app',
      },
    ]),
  },
  getLaunch: {
    response: live('launches', 'launches', { slug: 'example-app' }, [
      {
        slug: 'example-app',
        name: 'Example App',
        tagline: 'Ship release notes from your commits',
        makers: [{ name: 'Ada', username: 'ada' }],
        website: 'https://app.example/',
      },
    ]),
  },
  getCompanyReviews: {
    response: live('company_reviews', 'reviews', { company: 'example.com', page: 1 }, [
      { id: 'r-1021', rating: 4, title: 'Quick delivery', author: 'Lee', date: '2026-04-28', body: 'Arrived in two days, well packed.' },
    ]),
  },
  searchJobBoard: {
    response: live('job_boards', 'jobs', { q: 'backend engineer', location: 'Rotterdam', page: 1 }, [
      { title: 'Senior Backend Engineer', company: 'Harbor Logistics', location: 'Rotterdam', url: 'https://board.example/jobs/4411', posted_at: '2026-05-02' },
    ]),
  },
  getContacts: {
    response: live('contacts', 'contacts', { domain: 'example.com' }, [
      { type: 'email', value: 'press@example.com', kind: null, network: null, shown: null, page: 'https://example.com/contact' },
      { type: 'phone', value: '+15555550123', kind: 'phone', network: null, shown: '(555) 555-0123', page: 'https://example.com/contact' },
    ]),
  },
};
