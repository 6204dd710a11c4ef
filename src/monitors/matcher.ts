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
import type { Catalog, Store } from '../store/index.js';

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
    readonly store: Store,
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
   * [from, to): the labels the catalog has absorbed (the caller catches up first). A
   * revision's score is its best chunk against any of the monitor's vectors.
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
    const n = to - from;
    const vectors = new Float32Array(n * DIMS);
    const ords = new Float64Array(n);
    const labels = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const label = from + i;
      vectors.set(this.store.vector(label), i * DIMS);
      // The catalog maps every label below its `labels` (the caller's window is within them).
      ords[i] = this.catalog.labelOrd[label];
      labels[i] = label;
    }
    const m = await this.#set.score({ vectors, ords, labels });
    const k = m.monitor.length;
    const out: MatchColumns = { spec: new Uint32Array(k), ords: new Uint32Array(k), labels: new Uint32Array(k), scores: new Float32Array(k) };
    let kept = 0;
    // The kernel gives each (row, revision) once, rows in monitor order (a monitor's rows are
    // consecutive): a monitor of one vector needs no merging, and one without filters no domain check.
    const merging: { spec: number; best: Map<number, number> | null } = { spec: -1, best: null };
    const flush = () => {
      if (!merging.best) return;
      const start = kept;
      for (const [ord, i] of merging.best) {
        out.spec[kept] = merging.spec;
        out.ords[kept] = ord;
        out.labels[kept] = m.label[i];
        out.scores[kept++] = m.score[i];
      }
      sortByOrd(out, start, kept);
      merging.best = null;
    };
    for (let i = 0; i < k; i++) {
      const specIndex = this.#rowOf[m.monitor[i]];
      const spec = this.#specs[specIndex];
      const ord = m.ord[i];
      if (this.#filtered[specIndex] && !inDomain(this.catalog, ord, spec.domain)) continue;
      if (spec.vectors.length === 1) {
        flush();
        out.spec[kept] = specIndex;
        out.ords[kept] = ord;
        out.labels[kept] = m.label[i];
        out.scores[kept++] = m.score[i];
        continue;
      }
      // Several vectors of one monitor (like) may each match a revision: its best counts.
      if (!merging.best || merging.spec !== specIndex) {
        flush();
        merging.spec = specIndex;
        merging.best = new Map();
      }
      const had = merging.best.get(ord);
      if (had === undefined || m.score[i] > m.score[had]) merging.best.set(ord, i);
    }
    flush();
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

/** Sorts entries [start, end) of one monitor by ord (a merged monitor's, which come out of a map). */
function sortByOrd(c: MatchColumns, start: number, end: number): void {
  const idx = Array.from({ length: end - start }, (_, i) => start + i).sort((a, b) => c.ords[a] - c.ords[b]);
  const ords = idx.map((i) => c.ords[i]);
  const labels = idx.map((i) => c.labels[i]);
  const scores = idx.map((i) => c.scores[i]);
  c.ords.set(ords, start);
  c.labels.set(labels, start);
  c.scores.set(scores, start);
}
