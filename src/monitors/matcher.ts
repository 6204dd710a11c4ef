/**
 * The matching core of monitors (standing match queries): each window of the ingest sequence
 * (chunk labels [from, to), as POST /v1/match after_seq reads it) is scored once against every
 * monitor in the addon (search/monitors.ts), and the matches leave as (monitor, revision, best
 * chunk, score). Windows are disjoint and a revision's chunks are labelled in one write, so a
 * caller that advances from each window's end to the next sees every matching revision exactly
 * once, late articles included: a revision's place is when it became searchable, not its
 * event_time. Delivery (webhooks, streams) is built on top.
 */
import { DIMS } from '../dims.js';
import { inDomain, type Domain, type MonitorSet, type SearchEngine } from '../search/index.js';
import type { Catalog } from '../store/index.js';

export interface MonitorSpec {
  id: string;
  /** The query: one vector, or several (`like`: an article's chunk vectors; a revision scores its best against any). L2-normalised. */
  vectors: Float32Array[];
  minScore: number;
  /** Time window, sources and first revisions only, as for /v1/match (its `labels` are the window's). */
  domain: Omit<Domain, 'labels'>;
}

export interface MonitorMatch {
  monitor: string;
  ord: number;
  /** The revision's best chunk in the window. */
  label: number;
  score: number;
}

export class MonitorMatcher {
  #specs: MonitorSpec[] = [];
  /** The kernel's rows: one a query vector, each naming its monitor. */
  #rowOf: number[] = [];
  #set: MonitorSet | null = null;
  /** Whether each monitor filters at all (most standing queries do not: no domain check then). */
  #filtered: boolean[] = [];

  constructor(
    readonly engine: SearchEngine,
    readonly catalog: Catalog,
  ) {}

  /** Replaces the standing monitors (prepared once, on the engine's threads, for every window after). */
  async set(specs: MonitorSpec[]): Promise<void> {
    const rows = specs.flatMap((s, i) => s.vectors.map(() => i));
    const vectors = new Float32Array(rows.length * DIMS);
    const floors = new Float32Array(rows.length);
    let r = 0;
    specs.forEach((s) => {
      for (const v of s.vectors) {
        vectors.set(v, r * DIMS);
        floors[r++] = s.minScore;
      }
    });
    this.#set = rows.length === 0 ? null : await this.engine.prepareMonitors(vectors, floors);
    this.#specs = specs;
    this.#rowOf = rows;
    this.#filtered = specs.map(({ domain: d }) => !d.includeEdits || d.sources !== null || d.since !== undefined || d.until !== undefined);
  }

  /**
   * Every (monitor, revision) matching among the revisions whose chunks are labelled in
   * [from, to): labels the catalog and the engine have absorbed (the caller catches up first),
   * read from the engine's rows. A revision's score is its best chunk against any of the
   * monitor's vectors.
   */
  async advance(from: number, to: number): Promise<MonitorMatch[]> {
    const c = await this.advanceColumns(from, to);
    return Array.from(c.spec, (spec, i) => ({ monitor: this.#specs[spec].id, ord: c.ords[i], label: c.labels[i], score: c.scores[i] }));
  }

  /**
   * The same as columns, grouped by monitor in the order of `set`'s specs (`spec`: the index),
   * each monitor's by ord: what the pump writes as a window, with no object a match.
   */
  async advanceColumns(from: number, to: number): Promise<MatchColumns> {
    if (!this.#set || to <= from) return { spec: new Uint32Array(0), ords: new Uint32Array(0), labels: new Uint32Array(0), scores: new Float32Array(0) };
    const m = await this.#set.scoreLabels(from, to);
    const k = m.monitor.length;
    // The kernel's columns, converted once and compacted in place: a window may hold tens of
    // thousands of matches, so nothing here is done per match that can be done per monitor.
    const out: MatchColumns = { spec: new Uint32Array(k), ords: new Uint32Array(m.ord), labels: new Uint32Array(m.label), scores: m.score };
    let kept = 0;
    // The kernel gives each (row, revision) once, rows in monitor order (a monitor's rows are
    // consecutive), each row's by ord: taken a monitor at a time. One of one vector and no
    // filter (most standing queries) is kept whole.
    for (let a = 0; a < k; ) {
      const specIndex = this.#rowOf[m.monitor[a]];
      let b = a;
      while (b < k && this.#rowOf[m.monitor[b]] === specIndex) out.spec[b++] = specIndex;
      const spec = this.#specs[specIndex];
      const filtered = this.#filtered[specIndex];
      if (spec.vectors.length > 1) {
        // Several vectors (like) may each match a revision: its best counts.
        const best = new Map<number, number>();
        for (let i = a; i < b; i++) {
          if (filtered && !inDomain(this.catalog, out.ords[i], spec.domain)) continue;
          const had = best.get(out.ords[i]);
          if (had === undefined || out.scores[i] > out.scores[had]) best.set(out.ords[i], i);
        }
        const picked = [...best.values()].sort((x, y) => out.ords[x] - out.ords[y]);
        const rows = picked.map((i) => [out.ords[i], out.labels[i], out.scores[i]] as const);
        for (const [ord, label, score] of rows) {
          out.spec[kept] = specIndex;
          out.ords[kept] = ord;
          out.labels[kept] = label;
          out.scores[kept++] = score;
        }
      } else if (!filtered) {
        if (kept !== a) for (const col of [out.spec, out.ords, out.labels, out.scores]) col.copyWithin(kept, a, b);
        kept += b - a;
      } else {
        for (let i = a; i < b; i++) {
          if (!inDomain(this.catalog, out.ords[i], spec.domain)) continue;
          out.spec[kept] = specIndex;
          out.ords[kept] = out.ords[i];
          out.labels[kept] = out.labels[i];
          out.scores[kept++] = out.scores[i];
        }
      }
      a = b;
    }
    return { spec: out.spec.subarray(0, kept), ords: out.ords.subarray(0, kept), labels: out.labels.subarray(0, kept), scores: out.scores.subarray(0, kept) };
  }
}

/** A window's matches as columns: entry i is spec `spec[i]` matching revision `ords[i]` (best chunk `labels[i]`, `scores[i]`). */
export interface MatchColumns {
  spec: Uint32Array;
  ords: Uint32Array;
  labels: Uint32Array;
  scores: Float32Array;
}
