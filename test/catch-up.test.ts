/**
 * A request after a large write beside the server (another process's import, the poller)
 * catches the catalog and the engine up a slice at a time, with the event loop free between
 * slices, and still answers over everything written before it (issue 21: nothing blocks the
 * event loop; the scan stays exact).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalise } from '../src/search/index.js';
import type { RevisionInput } from '../src/store/index.js';
import { DIM } from './helpers/corpus.js';
import { Rng } from './helpers/rng.js';
import { SMALL, startHarness, type Harness } from './helpers/service.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ corpus: SMALL });
});

afterAll(async () => {
  await h?.close();
});

describe('catching up with LMDB', () => {
  it('5,000 revisions written beside the server: the next match reads them in slices, timers run between slices, and it sees all of them', async () => {
    const rng = new Rng(5);
    const topic = Float32Array.from({ length: DIM }, () => rng.gauss());
    const written: RevisionInput[] = [];
    for (let i = 0; i < 5000; i++) {
      const v = normalise(Array.from(topic, (x) => x + rng.gauss() * 0.5))!;
      written.push({
        url: `https://wireone.example/slice/${i}`,
        source: 'Wire One',
        title: `Slice ${i}`,
        body: `Slice ${i}.`,
        text: `Slice ${i} text.`,
        publishedAt: 1_767_225_600 + i,
        chunks: [{ text: `Slice ${i}`, vector: v }],
      });
    }
    // As another process would: straight into LMDB, the service not told.
    for (let i = 0; i < written.length; i += 500) h.service.store.writeRevisions(written.slice(i, i + 500));
    const catalogBefore = h.service.catalog.size;
    expect(h.service.store.nextOrd()).toBe(catalogBefore + 5000);

    const events: string[] = [];
    const catalog = h.service.catalog;
    const maintenance = h.service.maintenance;
    const catchUp = catalog.catchUp.bind(catalog);
    const sync = maintenance.sync.bind(maintenance);
    catalog.catchUp = (store, max) => {
      const n = catchUp(store, max);
      if (n > 0) events.push(`revisions ${n}`);
      return n;
    };
    maintenance.sync = (max) => {
      const n = sync(max);
      if (n > 0) events.push(`chunks ${n}`);
      return n;
    };
    try {
      setTimeout(() => events.push('timer'), 0);
      const q = normalise(Array.from(topic))!;
      const res = await h.match({ vector: Array.from(q), order: 'time', min_score: 0.3, limit: 100 });
      expect(res.status, res.raw).toBe(200);
      // Every slice within its budget, and more than one of each.
      const revSlices = events.filter((e) => e.startsWith('revisions')).map((e) => Number(e.split(' ')[1]));
      const chunkSlices = events.filter((e) => e.startsWith('chunks')).map((e) => Number(e.split(' ')[1]));
      expect(revSlices.length).toBeGreaterThanOrEqual(5);
      expect(Math.max(...revSlices)).toBeLessThanOrEqual(1000);
      expect(revSlices.reduce((a, b) => a + b, 0)).toBe(5000);
      expect(chunkSlices.length).toBeGreaterThanOrEqual(4);
      expect(chunkSlices.reduce((a, b) => a + b, 0)).toBe(5000);
      // The timer set before the request ran while it was still catching up.
      const timer = events.indexOf('timer');
      expect(timer).toBeGreaterThan(0);
      expect(timer).toBeLessThan(events.length - 1);
      // And the answer covers everything written before it: the newest first, all above the floor.
      expect(h.service.catalog.size).toBe(h.service.store.nextOrd());
      expect(h.service.engine.stats().nextLabel).toBe(h.service.store.nextLabel());
      expect(res.body.items[0].title).toBe('Slice 4999');
      expect(res.body.items.map((i: { title: string }) => i.title).slice(0, 5)).toEqual(['Slice 4999', 'Slice 4998', 'Slice 4997', 'Slice 4996', 'Slice 4995']);
    } finally {
      catalog.catchUp = catchUp;
      maintenance.sync = sync;
    }
  }, 60_000);
});
