/**
 * POST /v1/match `after_seq`: what became searchable since an earlier answer's `seq`, whatever
 * its event_time. The polling loop on `since` misses a late article (published before the last
 * poll, ingested after it); this one does not, and pages a fixed set (the cursor carries where
 * it ends), so revisions imported between two pages come in the next round, never twice.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from './helpers/rng.js';
import { dot, normalize, perturb, randUnit, vectorB64 } from './helpers/corpus.js';
import { expectError, startHarness, type Harness } from './helpers/service.js';
import { writeLines } from './helpers/corpus.js';

let h: Harness;
const rng = new Rng(2718);
const topic = randUnit(rng);

interface Arrival {
  url: string;
  published: string;
  vector: Float64Array;
}

function line(a: Arrival, source = 'Wire One'): object {
  return {
    url: a.url,
    source,
    title: a.url.split('/').pop(),
    snippet: 'A test article.',
    text: 'Body.',
    published_at: a.published,
    chunks: [{ text: a.url, vector_b64: vectorB64(a.vector) }],
  };
}

let n = 0;
async function arrive(published: string[], near: boolean[]): Promise<Arrival[]> {
  const batch = published.map((p, i) => ({
    url: `https://wireone.example/seq/${n++}`,
    published: p,
    vector: near[i] ? perturb(rng, topic, 0.35) : randUnit(rng),
  }));
  const file = join(h.dir, `arrivals-${n}.jsonl`);
  writeLines(
    file,
    batch.map((a) => line(a)),
  );
  expect((await h.service.importFile(file)).newRevisions).toBe(batch.length);
  return batch;
}

const q = () => Array.from(normalize(topic));
const urls = (items: { source_url: string }[]) => items.map((i) => i.source_url).sort();
const sent = (batch: Arrival[]) => batch.map((a) => a.url).sort();

beforeAll(async () => {
  h = await startHarness({ corpus: { articles: 120, seed: 77 } });
});

afterAll(async () => {
  await h?.close();
});

describe('after_seq', () => {
  it('every answer says how far the ingest sequence was in reach; after it comes exactly what was imported since, late articles included', async () => {
    const first = await h.match({ limit: 5 });
    expect(first.status, first.raw).toBe(200);
    const s0 = first.body.seq;
    expect(s0).toBe(h.service.store.nextLabel());
    // Three new articles: one published today, two "late" ones published long before the
    // corpus' newest article (a `since` loop would never see them).
    const newest = first.body.items[0].event_time;
    const batch = await arrive(['2031-06-01T00:00:00Z', '2020-01-01T00:00:00Z', '2019-05-05T05:05:05Z'], [true, true, false]);
    const bySince = await h.pageAll({ since: newest }, 50);
    expect(urls(bySince.items)).not.toContain(batch[1].url);

    const res = await h.match({ after_seq: s0, limit: 50 });
    expect(res.status, res.raw).toBe(200);
    expect(urls(res.body.items)).toEqual(sent(batch));
    expect(res.body.items.map((i: { event_time: string }) => i.event_time)).toEqual(['2031-06-01T00:00:00Z', '2020-01-01T00:00:00Z', '2019-05-05T05:05:05Z']);
    expect(res.body.seq).toBe(h.service.store.nextLabel());
    // Nothing new since: an empty answer at the same seq.
    const again = await h.match({ after_seq: res.body.seq });
    expect([again.body.count, again.body.seq]).toEqual([0, res.body.seq]);
    // A seq from the future answers nothing and never sends the loop back.
    const ahead = await h.match({ after_seq: res.body.seq + 1000 });
    expect([ahead.body.count, ahead.body.seq]).toEqual([0, res.body.seq + 1000]);
  });

  it('with a vector: the new revisions scoring at least min_score, exactly (the oracle: a float64 dot over the batch)', async () => {
    const s0 = (await h.match({ limit: 1 })).body.seq;
    const batch = await arrive(
      Array.from({ length: 12 }, (_, i) => `2024-0${1 + (i % 9)}-1${i % 10}T10:00:00Z`),
      Array.from({ length: 12 }, (_, i) => i % 3 !== 0),
    );
    const query = normalize(topic);
    for (const min of [0.2, 0.5, 0.8]) {
      const want = batch.filter((a) => dot(query, normalize(a.vector)) >= min + 1e-4).map((a) => a.url);
      const edge = batch.filter((a) => Math.abs(dot(query, normalize(a.vector)) - min) <= 1e-4).map((a) => a.url);
      const res = await h.match({ vector: q(), min_score: min, after_seq: s0, limit: 100 });
      expect(res.status, res.raw).toBe(200);
      const got = urls(res.body.items);
      for (const u of want) expect(got, `min ${min}`).toContain(u);
      for (const u of got) expect([...want, ...edge], `min ${min}`).toContain(u);
    }
  });

  it('pages a fixed set: revisions imported between two pages wait for the next round, and nothing comes twice', async () => {
    const s0 = (await h.match({ limit: 1 })).body.seq;
    const round1 = await arrive(
      Array.from({ length: 7 }, (_, i) => `2023-03-0${i + 1}T00:00:00Z`),
      Array.from({ length: 7 }, () => true),
    );
    const p1 = await h.match({ after_seq: s0, limit: 3 });
    expect(p1.body.count).toBe(3);
    // Arrives mid-walk, older than every row of the walk (so after its cursor): not on a later page.
    const late = await arrive(['2023-01-01T00:00:00Z'], [true]);
    const seen = [...p1.body.items];
    let cursor = p1.body.next_cursor;
    while (cursor) {
      const p = await h.match({ after_seq: s0, limit: 3, cursor });
      expect(p.status, p.raw).toBe(200);
      expect(p.body.seq).toBe(p1.body.seq);
      seen.push(...p.body.items);
      cursor = p.body.next_cursor;
    }
    expect(urls(seen)).toEqual(sent(round1));
    const round2 = await h.match({ after_seq: p1.body.seq, limit: 50 });
    expect(urls(round2.body.items)).toEqual(sent(late));
  });

  it('honours the other filters, and a window started inside a revision leaves that revision out', async () => {
    const s0 = (await h.match({ limit: 1 })).body.seq;
    const [a, b] = await arrive(['2022-02-02T00:00:00Z', '2022-02-03T00:00:00Z'], [true, true]);
    expect(urls((await h.match({ after_seq: s0, until: '2022-02-02' })).body.items)).toEqual([a.url]);
    expect((await h.match({ after_seq: s0, sources: ['Daily Ledger'] })).body.count).toBe(0);
    // b's one chunk has label s0 + 1; a window from there holds b alone.
    expect(urls((await h.match({ after_seq: s0 + 1 })).body.items)).toEqual([b.url]);
    expect((await h.match({ after_seq: s0 + 2 })).body.count).toBe(0);
  });

  it('order=relevance, a negative or fractional after_seq, or a cursor of another walk: 4xx', async () => {
    expectError(await h.match({ vector: q(), order: 'relevance', after_seq: 0 }), 422, 'invalid_request', { names: /after_seq: only with order=time/ });
    expectError(await h.match({ after_seq: -1 }), 422, 'invalid_request', { names: /after_seq/ });
    expectError(await h.match({ after_seq: 1.5 }), 422, 'invalid_request', { names: /after_seq/ });
    const p = await h.match({ after_seq: 0, limit: 1 });
    expectError(await h.match({ after_seq: 1, limit: 1, cursor: p.body.next_cursor }), 400, 'bad_cursor');
  });
});
