/**
 * Vector queries over the chunk corpus: every revision at or above a cosine floor (range), or
 * the best k revisions (top-k), under a domain filter. A revision's score is the highest
 * cosine over its own chunks.
 *
 * The planner picks, per query, between an exact scan of the filtered domain (when it holds
 * few chunks, e.g. a narrow time window) and the HNSW index (widening k until the tail falls
 * below the floor). HNSW candidates are rescored exactly from LMDB's float32 vectors, so
 * every returned score is exact; only membership is approximate (~99%+ recall).
 */
import { AppError } from '../errors.js';
import type { Catalog } from '../store/catalog.js';
import type { Store } from '../store/lmdb-store.js';
import type { HnswIndex } from './hnsw.js';
import { dot } from './vector.js';

/** Which revisions a query may return. */
export interface Domain {
  /** Inclusive bounds on event_time, Unix seconds. */
  since?: number;
  until?: number;
  /** false: first revisions only. */
  includeEdits: boolean;
  /** Allowed source ids (null: all). */
  sources: Set<number> | null;
}

export interface Scored {
  ord: number;
  score: number;
  /** The chunk that gave the score. */
  label: number;
}

export interface VectorSearchOptions {
  exactScanMaxChunks: number;
  maxMatches: number;
}

/** f16 quantisation in the index moves a cosine by well under this; candidates within it are rescored. */
const MARGIN = 0.01;
/** order=time widens k until it is this many times the chunks at or above the floor. */
const RANGE_SLACK = 4;

export class VectorSearch {
  /** How queries were answered, for logs and tests: exact scan, HNSW, or HNSW that gave up for a scan. */
  readonly plans = { exact: 0, hnsw: 0, hnswToExact: 0 };

  constructor(
    readonly store: Store,
    readonly catalog: Catalog,
    readonly hnsw: HnswIndex,
    readonly options: VectorSearchOptions,
  ) {}

  /** Whether revision `ord` is in the domain and has vectors. */
  inDomain(ord: number, d: Domain): boolean {
    const c = this.catalog;
    if (c.labelCount[ord] === 0) return false;
    if (!d.includeEdits && c.first[ord] === 0) return false;
    const t = c.eventTime[ord];
    if (d.since !== undefined && t < d.since) return false;
    if (d.until !== undefined && t > d.until) return false;
    return d.sources === null || d.sources.has(c.sourceId[ord]);
  }

  /** Chunks in the domain: the cost of an exact scan. */
  domainChunks(d: Domain): number {
    let n = 0;
    for (let ord = 0; ord < this.catalog.size; ord++) if (this.inDomain(ord, d)) n += this.catalog.labelCount[ord];
    return n;
  }

  /** Exact score of one revision: its best chunk. */
  rescore(query: Float32Array, ord: number): Scored {
    const start = this.catalog.labelStart[ord];
    const end = start + this.catalog.labelCount[ord];
    let best = -Infinity;
    let bestLabel = start;
    for (let label = start; label < end; label++) {
      const s = dot(query, this.store.vector(label));
      if (s > best) {
        best = s;
        bestLabel = label;
      }
    }
    return { ord, score: best, label: bestLabel };
  }

  /**
   * Every revision in the domain scoring at least `minScore`, unordered. Throws
   * too_many_matches past `maxMatches`.
   */
  range(query: Float32Array, minScore: number, d: Domain): Scored[] {
    if (this.#useExact(d)) {
      this.plans.exact++;
      return this.exactRange(query, minScore, d);
    }
    const size = this.hnsw.size();
    const maxK = this.#maxK();
    let k = Math.min(size, 1024);
    for (;;) {
      const hits = this.hnsw.search(query, k);
      const n = hits.labels.length;
      const exhausted = n < k || k >= size;
      // Revisions certainly above the floor already exceed the cap: give up early.
      const sure = this.#domainOrds(hits.labels, hits.sims, minScore + MARGIN, d);
      if (sure.size > this.options.maxMatches) throw tooMany(sure.size);
      // HNSW is least accurate at the tail of its list: widen until the chunks near the floor
      // sit in the first 1/RANGE_SLACK of it, which measured >= 0.99 recall on clustered data.
      let near = 0;
      while (near < n && hits.sims[near] >= minScore - MARGIN) near++;
      if (exhausted || near * RANGE_SLACK <= n) {
        const out: Scored[] = [];
        for (const ord of this.#domainOrds(hits.labels, hits.sims, minScore - MARGIN, d)) {
          const s = this.rescore(query, ord);
          if (s.score >= minScore) out.push(s);
        }
        if (out.length > this.options.maxMatches) throw tooMany(out.length);
        this.plans.hnsw++;
        return out;
      }
      if (k >= maxK) {
        this.plans.hnswToExact++;
        return this.exactRange(query, minScore, d);
      }
      k = Math.min(size, Math.max(k * 2, near * RANGE_SLACK));
    }
  }

  /** The best `k` revisions in the domain scoring at least `minScore`, best first. */
  topK(query: Float32Array, k: number, minScore: number, d: Domain): Scored[] {
    if (this.#useExact(d)) {
      this.plans.exact++;
      return best(this.exactRange(query, minScore, d, Infinity), k);
    }
    const size = this.hnsw.size();
    const maxK = this.#maxK();
    const seen = new Map<number, Scored>();
    let width = Math.min(size, Math.max(64, k * 8));
    for (;;) {
      const hits = this.hnsw.search(query, width);
      const n = hits.labels.length;
      const tail = n > 0 ? hits.sims[n - 1] : -Infinity;
      for (const ord of this.#domainOrds(hits.labels, hits.sims, minScore - MARGIN, d)) {
        if (!seen.has(ord)) seen.set(ord, this.rescore(query, ord));
      }
      const top = best([...seen.values()].filter((s) => s.score >= minScore), k);
      const exhausted = n < width || width >= size;
      // Any revision not seen has every chunk below the tail (up to HNSW's approximation).
      const settled = top.length >= k && top[k - 1].score >= tail + MARGIN;
      if (exhausted || settled || tail < minScore - MARGIN) {
        this.plans.hnsw++;
        return top;
      }
      if (width >= maxK) {
        this.plans.hnswToExact++;
        return best(this.exactRange(query, minScore, d, Infinity), k);
      }
      width = Math.min(size, width * 4);
    }
  }

  /** The oracle: every revision in the domain at or above `minScore`, by exact scan. */
  exactRange(query: Float32Array, minScore: number, d: Domain, cap = this.options.maxMatches): Scored[] {
    const out: Scored[] = [];
    for (let ord = 0; ord < this.catalog.size; ord++) {
      if (!this.inDomain(ord, d)) continue;
      const s = this.rescore(query, ord);
      if (s.score < minScore) continue;
      out.push(s);
      if (out.length > cap) throw tooMany(out.length);
    }
    return out;
  }

  #useExact(d: Domain): boolean {
    return this.hnsw.size() < this.catalog.labels || this.domainChunks(d) <= this.options.exactScanMaxChunks;
  }

  /**
   * Past this k, HNSW visits more of the graph than an exact scan reads (measured: at k near
   * an eighth of the index the two cost the same in JS), so the planner switches to the scan.
   */
  #maxK(): number {
    return Math.max(1024, Math.floor(this.hnsw.size() / 8));
  }

  /** Distinct domain revisions among hits whose similarity is at least `floor`. */
  #domainOrds(labels: Float64Array, sims: Float32Array, floor: number, d: Domain): Set<number> {
    const ords = new Set<number>();
    for (let i = 0; i < labels.length && sims[i] >= floor; i++) {
      const ord = this.catalog.labelOrd[labels[i]];
      if (this.inDomain(ord, d)) ords.add(ord);
    }
    return ords;
  }
}

const best = (xs: Scored[], k: number): Scored[] => xs.sort((a, b) => b.score - a.score || a.ord - b.ord).slice(0, k);

const tooMany = (n: number): AppError =>
  new AppError('too_many_matches', undefined, { extra: { matched_at_least: n } });
