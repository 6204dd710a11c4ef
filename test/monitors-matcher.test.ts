/**
 * The monitors' matching core (src/monitors/matcher.ts) over a generated stream of revisions:
 * advanced window by window along the ingest sequence, every (monitor, revision) that matches
 * comes exactly once, none that does not, late articles and edits included, against a float64
 * oracle over LMDB's vectors (a pair within 1e-4 of its floor may go either way).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inDomain } from '../src/search/index.js';
import { MonitorMatcher, type MonitorMatch, type MonitorSpec } from '../src/monitors/index.js';
import { normalize, perturb, vectorB64, writeLines } from './helpers/corpus.js';
import { Rng } from './helpers/rng.js';
import { startHarness, type Harness } from './helpers/service.js';

let h: Harness;
const rng = new Rng(31337);
const f32 = (v: ArrayLike<number>) => Float32Array.from(normalize(v));

beforeAll(async () => {
  h = await startHarness({ corpus: { articles: 150, seed: 5 } });
});

afterAll(async () => {
  await h?.close();
});

/** The labels the catalog and the engine both hold: a window's end. */
async function synced(): Promise<number> {
  await h.service.catchUp();
  return Math.min(h.service.catalog.labels, h.service.engine.stats().nextLabel);
}

describe('MonitorMatcher', () => {
  it('window by window, every matching revision exactly once per monitor, late ones and edits included', async () => {
    const { store, catalog } = h.service;
    const seq0 = await synced();
    const stored = (label: number) => Float64Array.from(store.vector(label));
    const sourceIds = store.listSources().map((s) => s.id);
    // Monitors near stored chunks (so new chunks near them match), with every kind of filter,
    // and three with several vectors (like).
    const specs: MonitorSpec[] = [];
    for (let i = 0; i < 24; i++) {
      const near = perturb(rng, stored(rng.int(seq0)), 0.25);
      const vectors = i % 8 === 7 ? [f32(near), f32(perturb(rng, stored(rng.int(seq0)), 0.25)), f32(perturb(rng, near, 0.3))] : [f32(near)];
      specs.push({
        id: `m${String(i).padStart(2, '0')}`,
        vectors,
        minScore: rng.uniform(0.55, 0.8),
        domain: {
          includeEdits: i % 3 !== 0,
          sources: i % 4 === 1 ? new Set(sourceIds.slice(0, 2)) : null,
          since: i % 5 === 2 ? Date.parse('2021-01-01T00:00:00Z') / 1000 : undefined,
        },
      });
    }
    const matcher = new MonitorMatcher(h.service.engine, catalog);
    await matcher.set(specs);

    // Three batches: articles whose chunks lie near some monitor or anywhere, published from
    // 2015 to 2030 (late ones among them), and edits of earlier new articles.
    const got: MonitorMatch[] = [];
    let from = seq0;
    const urls: string[] = [];
    const sourceOf = new Map<string, string>();
    for (let batch = 0; batch < 3; batch++) {
      const lines: object[] = [];
      for (let a = 0; a < 40; a++) {
        const edit = batch > 0 && a % 5 === 0;
        const url = edit ? urls[rng.int(urls.length)] : `https://wireone.example/stream/${batch}/${a}`;
        if (!edit) {
          urls.push(url);
          sourceOf.set(url, rng.pick(['Wire One', 'Daily Ledger', 'Metro Courier']));
        }
        const chunks = Array.from({ length: 1 + rng.int(4) }, (_, c) => {
          const base = rng.chance(0.6) ? Float64Array.from(specs[rng.int(specs.length)].vectors[0]) : stored(rng.int(seq0));
          return { text: `chunk ${c}`, vector_b64: vectorB64(perturb(rng, base, rng.uniform(0.1, 0.5))) };
        });
        const year = 2015 + rng.int(16);
        lines.push({
          url,
          source: sourceOf.get(url),
          title: `${url} ${batch}`,
          snippet: 'A streamed article.',
          text: 'Body.',
          published_at: `${year}-03-0${1 + rng.int(9)}T10:00:00Z`,
          ...(edit && { revised_at: `2031-0${1 + batch}-01T00:00:00Z` }),
          chunks,
        });
      }
      const file = join(h.dir, `stream-${batch}.jsonl`);
      writeLines(file, lines);
      const s = await h.service.importFile(file);
      expect(s.rejected, JSON.stringify(s.rejections)).toBe(0);
      const to = await synced();
      got.push(...(await matcher.advance(from, to)));
      from = to;
    }

    // The oracle: every new revision against every monitor, in float64 over LMDB's vectors.
    const want = new Set<string>();
    const edge = new Set<string>();
    const exact = new Map<string, number>();
    for (let ord = 0; ord < catalog.size; ord++) {
      if (catalog.labelStart[ord] < seq0 || catalog.labelCount[ord] === 0) continue;
      for (const spec of specs) {
        if (!inDomain(catalog, ord, spec.domain)) continue;
        let best = -Infinity;
        for (let l = catalog.labelStart[ord]; l < catalog.labelStart[ord] + catalog.labelCount[ord]; l++) {
          const v = store.vector(l);
          for (const q of spec.vectors) {
            let d = 0;
            for (let i = 0; i < q.length; i++) d += q[i] * v[i];
            best = Math.max(best, d);
          }
        }
        const key = `${spec.id} ${ord}`;
        exact.set(key, best);
        if (best >= spec.minScore + 1e-4) want.add(key);
        else if (best > spec.minScore - 1e-4) edge.add(key);
      }
    }
    const keys = got.map((m) => `${m.monitor} ${m.ord}`);
    expect(new Set(keys).size, 'a pair came twice').toBe(keys.length);
    for (const k of want) expect(keys, k).toContain(k);
    for (const m of got) {
      const k = `${m.monitor} ${m.ord}`;
      expect(want.has(k) || edge.has(k), `${k} does not match`).toBe(true);
      expect(Math.abs(m.score - exact.get(k)!), k).toBeLessThan(5e-4);
    }
    // The stream did what it was for: many matches, late ones (published before the corpus'
    // newest article) and edits among them.
    expect(want.size).toBeGreaterThan(40);
    expect(got.some((m) => catalog.eventTime[m.ord] < Date.parse('2020-01-01T00:00:00Z') / 1000)).toBe(true);
    expect(got.some((m) => catalog.first[m.ord] === 0)).toBe(true);
  });

  it('an empty window, or no monitors, matches nothing', async () => {
    const m = new MonitorMatcher(h.service.engine, h.service.catalog);
    const to = await synced();
    expect(await m.advance(0, to)).toEqual([]);
    await m.set([
      {
        id: 'x',
        vectors: [f32(perturb(rng, Float64Array.from(h.service.store.vector(0)), 0.1))],
        minScore: 0.5,
        domain: { includeEdits: true, sources: null },
      },
    ]);
    expect(await m.advance(to, to)).toEqual([]);
  });
});
