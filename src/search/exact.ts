/**
 * The oracle: an exhaustive float32 scan over LMDB's vectors in plain JS. Slow (it reads every
 * chunk), exact, and independent of the native code, so benchmarks and conformance tests
 * measure the engine against it.
 */
import type { Catalog, Store } from '../store/index.js';
import type { Domain, Scored } from './vector-search.js';
import { dot } from './vector.js';

export function inDomain(c: Catalog, ord: number, d: Domain): boolean {
  if (c.labelCount[ord] === 0) return false;
  if (!d.includeEdits && c.first[ord] === 0) return false;
  const t = c.eventTime[ord];
  if (d.since !== undefined && t < d.since) return false;
  if (d.until !== undefined && t > d.until) return false;
  if (d.labels && (c.labelStart[ord] < d.labels.from || c.labelStart[ord] >= d.labels.to)) return false;
  return d.sources === null || d.sources.has(c.sourceId[ord]);
}

/** Exact score of one revision: the max cosine over its own chunks, in float32. */
export function exactScore(store: Store, c: Catalog, query: Float32Array, ord: number): Scored {
  const start = c.labelStart[ord];
  const end = start + c.labelCount[ord];
  let best = -Infinity;
  let bestLabel = start;
  for (let label = start; label < end; label++) {
    const s = dot(query, store.vector(label));
    if (s > best) {
      best = s;
      bestLabel = label;
    }
  }
  return { ord, score: best, label: bestLabel };
}

/** Every revision in the domain scoring at least `minScore` (unordered). */
export function exactRange(store: Store, c: Catalog, query: Float32Array, minScore: number, d: Domain): Scored[] {
  const out: Scored[] = [];
  for (let ord = 0; ord < c.size; ord++) {
    if (!inDomain(c, ord, d)) continue;
    const s = exactScore(store, c, query, ord);
    if (s.score >= minScore) out.push(s);
  }
  return out;
}
