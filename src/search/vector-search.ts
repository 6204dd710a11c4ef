/**
 * Vector queries over the chunk corpus, planned: every revision at or above a cosine floor
 * (range, always an exact native scan), or the best k revisions (top-k: the nearest lists of
 * the index read exactly, with the chunks not yet filed scanned beside them; an exact scan when
 * there is no index yet, when the filters leave few chunks, when the query is far from every
 * list, or when the lists cannot fill k rows, so no page is ever under-filled). A revision's
 * score is the highest cosine over its own chunks, always computed exactly.
 */
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import type { Catalog } from '../store/index.js';
import type { EngineFilter, EngineHits, SearchEngine, TopkOptions, TopkPlan } from './engine.js';

/** Which revisions a query may return. */
export interface Domain {
  /** Inclusive bounds on event_time, Unix seconds. */
  since?: number;
  until?: number;
  /** false: first revisions only. */
  includeEdits: boolean;
  /** Allowed source ids (null: all). */
  sources: Set<number> | null;
  /**
   * Revisions whose first chunk label is in [from, to): those that became searchable between
   * two points of the ingest sequence (labels are given in that order; POST /v1/match after_seq).
   */
  labels?: { from: number; to: number };
}

export interface Scored {
  ord: number;
  score: number;
  /** The chunk that gave the score. */
  label: number;
}

export interface VectorSearchOptions {
  /** too_many_matches past this many rows. */
  maxMatches: number;
  /** The top-k planner's settings (EXACT_SCAN_MAX_CHUNKS, INDEX_PROBE_DELTA, ...). */
  topk: TopkOptions;
}

export class VectorSearch {
  /** How top-k queries were answered, for logs and tests. */
  readonly plans: Record<TopkPlan, number> = { scan: 0, 'scan-far': 0, index: 0, 'index-then-scan': 0 };

  constructor(
    readonly catalog: Catalog,
    readonly engine: SearchEngine,
    readonly options: VectorSearchOptions,
    readonly log?: Logger,
  ) {}

  /** The engine's filter for a domain: a time window, a source bitmap, the first-revision flag. */
  filter(d: Domain): EngineFilter {
    let sources: Uint8Array | null = null;
    if (d.sources) {
      sources = new Uint8Array(Math.max(1, Math.ceil((Math.max(-1, ...d.sources) + 1) / 8)));
      for (const id of d.sources) sources[id >> 3] |= 1 << (id & 7);
    }
    return { tmin: d.since, tmax: d.until, sources, firstOnly: !d.includeEdits, labelMin: d.labels?.from, labelMax: d.labels?.to };
  }

  /** Every revision in the domain scoring at least `minScore`, unordered. Throws too_many_matches past the cap. */
  async range(query: Float32Array, minScore: number, d: Domain): Promise<Scored[]> {
    const r = await this.engine.range(query, minScore, this.filter(d), this.options.maxMatches);
    if (r.overflow) throw new AppError('too_many_matches', undefined, { extra: { matched_at_least: r.ords.length } });
    return this.#inLabels(scored(r), d);
  }

  /**
   * The best `k` revisions in the domain scoring at least `minScore`, best first. Planned in
   * the addon's worker thread (counting allowed rows must not cost the event loop).
   */
  async topK(query: Float32Array, k: number, minScore: number, d: Domain): Promise<Scored[]> {
    const h = await this.engine.topk(query, k, minScore, this.filter(d), 'auto', this.options.topk);
    const plan = h.plan as TopkPlan;
    this.plans[plan]++;
    this.log?.debug({ plan, k, probe: h.probe }, 'top-k plan');
    return this.#inLabels(scored(h), d);
  }

  /**
   * The engine tests labels chunk by chunk; a revision belongs to a label window by its first
   * label (a window a client starts inside a revision's labels leaves that revision out).
   */
  #inLabels(rows: Scored[], d: Domain): Scored[] {
    if (!d.labels) return rows;
    const { from, to } = d.labels;
    return rows.filter((s) => this.catalog.labelStart[s.ord] >= from && this.catalog.labelStart[s.ord] < to);
  }
}

function scored(h: EngineHits): Scored[] {
  const out: Scored[] = new Array(h.ords.length);
  for (let i = 0; i < h.ords.length; i++) out[i] = { ord: h.ords[i], score: h.scores[i], label: h.labels[i] };
  return out;
}
