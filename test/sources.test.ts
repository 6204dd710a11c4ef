/** GET /v1/sources: the shape the README shows, against the generated corpus. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isoSecond, type Corpus } from './helpers/corpus.js';
import { MEDIUM, EVENT_TIME, expectError, startHarness, type Harness } from './helpers/service.js';

let h: Harness;
let corpus: Corpus;

beforeAll(async () => {
  h = await startHarness({ corpus: MEDIUM });
  corpus = h.corpus!;
});

afterAll(async () => {
  await h?.close();
});

describe('GET /v1/sources', () => {
  it('lists every source sorted by name with homepage, article_count and last_event_time', async () => {
    const res = await h.inject({ url: '/v1/sources' });
    expect(res.status, res.raw).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(['count', 'sources']);
    const names = corpus.sources.map((s) => s.name).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(res.body.count).toBe(names.length);
    expect(res.body.sources.map((s: any) => s.name)).toEqual(names);
    for (const s of res.body.sources) {
      expect(Object.keys(s).sort()).toEqual(['article_count', 'homepage', 'last_event_time', 'name']);
      const src = corpus.sources.find((x) => x.name === s.name)!;
      const articles = corpus.articles.filter((a) => a.source === s.name);
      expect(s.homepage).toBe(src.homepage);
      expect(s.article_count).toBe(articles.length);
      expect(s.last_event_time).toMatch(EVENT_TIME);
      // The latest event of the source: over first versions, or over every revision.
      const lastFirst = isoSecond(Math.max(...articles.map((a) => a.revisions[0].eventSec)));
      const lastAny = isoSecond(Math.max(...articles.flatMap((a) => a.revisions.map((r) => r.eventSec))));
      expect([lastFirst, lastAny]).toContain(s.last_event_time);
    }
  });

  it('names round-trip: each is accepted by sources and exclude_sources and selects exactly its articles', async () => {
    const res = await h.inject({ url: '/v1/sources' });
    for (const s of res.body.sources) {
      const page = await h.match({ sources: [s.name], limit: 100 });
      expect(page.status, page.raw).toBe(200);
      expect(page.body.items.every((i: any) => i.source_name === s.name)).toBe(true);
      const ex = await h.match({ exclude_sources: [s.name], limit: 100 });
      expect(ex.status, ex.raw).toBe(200);
      expect(ex.body.items.some((i: any) => i.source_name === s.name)).toBe(false);
    }
    const all = await h.pageAll({ sources: res.body.sources.map((s: any) => s.name) }, 100);
    expect(all.items.length).toBe(corpus.articles.length);
  });

  it('is the same through the Bearer door', async () => {
    const a = await h.inject({ url: '/v1/sources' });
    const b = await h.inject({ url: '/v1/sources', headers: h.bearerHeaders, noAuth: true });
    expect(b.status).toBe(200);
    expect(b.body).toEqual(a.body);
  });

  it('needs a key', async () => {
    expectError(await h.inject({ url: '/v1/sources', noAuth: true }), 401, 'unauthorized');
  });

  it('lists an enabled outlet not polled yet (no articles), and leaves out a disabled one', async () => {
    const svc = await startHarness({ corpus: null });
    try {
      svc.service.outlets.add({ name: 'Morning Bell', homepage: 'https://bell.example/', feeds: ['https://bell.example/rss'] });
      svc.service.outlets.add({ name: 'Attic Gazette', homepage: 'https://attic.example/', feeds: ['https://attic.example/rss'] });
      let res = await svc.inject({ url: '/v1/sources' });
      expect(res.body).toEqual({
        count: 2,
        sources: [
          { name: 'Attic Gazette', homepage: 'https://attic.example/', article_count: 0, last_event_time: null },
          { name: 'Morning Bell', homepage: 'https://bell.example/', article_count: 0, last_event_time: null },
        ],
      });
      // A name it lists is accepted as a filter, and selects nothing yet.
      const m = await svc.match({ sources: ['Morning Bell'] });
      expect(m.status, m.raw).toBe(200);
      expect(m.body.count).toBe(0);
      svc.service.outlets.setEnabled('Attic Gazette', false);
      res = await svc.inject({ url: '/v1/sources' });
      expect(res.body.sources.map((s: { name: string }) => s.name)).toEqual(['Morning Bell']);
    } finally {
      await svc.close();
    }
  });

  it('an empty service lists no source', async () => {
    const empty = await startHarness({ corpus: null });
    try {
      const res = await empty.inject({ url: '/v1/sources' });
      expect(res.status, res.raw).toBe(200);
      expect(res.body).toEqual({ count: 0, sources: [] });
      const m = await empty.match();
      expect(m.status, m.raw).toBe(200);
      expect(m.body).toEqual({ model: 'bge-m3', order: 'time', count: 0, items: [], next_cursor: null, seq: 0 });
      // With no source known, any name is unknown.
      expectError(await empty.match({ sources: ['Wire One'] }), 422, 'invalid_request', { names: 'Wire One' });
    } finally {
      await empty.close();
    }
  });
});
