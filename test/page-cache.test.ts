/**
 * order=time pages after the first come from a cached result set; without the cache (evicted,
 * or PAGE_CACHE_ENTRIES=0) the cursor still works and pages the same rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeQuery, pickMinScore, vec } from './helpers/oracle.js';
import { Rng } from './helpers/rng.js';
import { SMALL, startHarness, type Harness } from './helpers/service.js';

let cached: Harness;
let uncached: Harness;

beforeAll(async () => {
  cached = await startHarness({ corpus: SMALL });
  uncached = await startHarness({ corpus: SMALL, env: { PAGE_CACHE_ENTRIES: '0' } });
});
afterAll(async () => {
  await cached?.close();
  await uncached?.close();
});

describe('paging with and without the result cache', () => {
  it('pages the same rows to the end; the cache holds the set after page one', async () => {
    const q = makeQuery(cached.corpus!, new Rng(3), 'topic');
    const body = { vector: vec(q), min_score: pickMinScore(cached.corpus!, q, {}, 60) };
    const a = await cached.pageAll(body, 7);
    const b = await uncached.pageAll(body, 7);
    expect(a.items.length).toBeGreaterThan(7);
    // Two data directories give revisions different ids, so rows tied on event_time may swap: compare as sets.
    const key = (i: { source_url: string; event_time: string; score: number }) => `${i.event_time}|${i.source_url}|${i.score.toFixed(5)}`;
    expect(b.items.map(key).sort()).toEqual(a.items.map(key).sort());
    expect(b.items.map((i) => i.event_time)).toEqual(a.items.map((i) => i.event_time));
    expect(cached.service.pages.size).toBeGreaterThan(0);
    expect(uncached.service.pages.size).toBe(0);
  });
});
