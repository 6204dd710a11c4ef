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
    if (!this.#set || to <= from) return [];
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
    // The kernel gives each (row, revision) once, rows in monitor order: a monitor of one
    // vector needs no merging, and one without filters no domain check.
    const out: MonitorMatch[] = [];
    const merged = new Map<string, MonitorMatch>();
    for (let i = 0; i < m.monitor.length; i++) {
      const spec = this.#specs[this.#rowOf[m.monitor[i]]];
      const ord = m.ord[i];
      if (this.#filtered[this.#rowOf[m.monitor[i]]] && !inDomain(this.catalog, ord, spec.domain)) continue;
      const match = { monitor: spec.id, ord, label: m.label[i], score: m.score[i] };
      if (spec.vectors.length === 1) {
        out.push(match);
        continue;
      }
      // Several vectors of one monitor (like) may each match a revision: its best counts.
      const key = `${spec.id}\0${ord}`;
      const had = merged.get(key);
      if (!had || match.score > had.score) merged.set(key, match);
    }
    if (merged.size === 0) return out;
    return [...out, ...merged.values()].sort((a, b) => (a.monitor < b.monitor ? -1 : a.monitor > b.monitor ? 1 : a.ord - b.ord));
  }
}
