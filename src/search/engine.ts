/**
 * The native search engine, wrapped: time-ordered segments scanned in int8 + f16, and usearch
 * HNSW, both inside the addon (src/native.ts). Concurrent range queries are merged into one
 * pass over the data, since the scan is memory-bound: while a pass is running, new queries
 * queue, and the next pass takes all of them.
 */
import { Limit } from '../limit.js';
import { native, type NativeEngine, type NativeFilter, type NativeHits, type NativeRows, type NativeStats, type TopkPlan } from '../native.js';

export type { NativeFilter as EngineFilter, NativeHits as EngineHits, NativeRows as EngineRows, NativeStats as EngineStats, TopkPlan };

export interface EngineOptions {
  connectivity: number;
  expansionAdd: number;
  expansionSearch: number;
  /** Concurrent scan passes (one per core is enough: each is memory-bound). */
  passes: number;
}

interface PendingRange {
  query: Float32Array;
  threshold: number;
  cap: number;
  filter: NativeFilter;
  resolve: (r: NativeHits & { overflow: boolean }) => void;
  reject: (e: unknown) => void;
}

const DIMS = 1024;

/** Checked before queueing, so one malformed query fails alone instead of failing the pass it would join. */
function checkFilter(f: NativeFilter): void {
  const num = (v: unknown) => v === undefined || typeof v === 'number';
  if (typeof f !== 'object' || f === null || !num(f.tmin) || !num(f.tmax)) throw new TypeError('filter: tmin/tmax must be numbers');
  if (f.sources !== undefined && f.sources !== null && !(f.sources instanceof Uint8Array)) throw new TypeError('filter.sources must be a Uint8Array bitmap');
  if (f.firstOnly !== undefined && typeof f.firstOnly !== 'boolean') throw new TypeError('filter.firstOnly must be a boolean');
}
/** Most queries merged into one pass: beyond this the per-pass result latency grows with no gain. */
const MAX_BATCH = 32;

export class SearchEngine {
  #engine: NativeEngine;
  #queue: PendingRange[] = [];
  #inFlight = 0;
  #scheduled = false;
  readonly #topkLimit: Limit;
  /** Queries per pass, for the batching benchmark and logs. */
  readonly batches = { passes: 0, queries: 0 };

  constructor(dir: string, readonly options: EngineOptions) {
    this.#topkLimit = new Limit(options.passes);
    try {
      this.#engine = new native.Engine({
        dir,
        connectivity: options.connectivity,
        expansionAdd: options.expansionAdd,
        expansionSearch: options.expansionSearch,
      });
    } catch (e) {
      if ((e as Error).message.startsWith('ELOCKED')) throw new EngineLockedError(dir);
      throw e;
    }
  }

  static get isa(): string {
    return native.isa;
  }

  append(rows: NativeRows): void {
    if (rows.labels.length > 0) this.#engine.append(rows);
  }

  /** Every revision at or above `threshold` under `filter`; `overflow` once more than `cap` match. */
  range(query: Float32Array, threshold: number, filter: NativeFilter, cap: number): Promise<NativeHits & { overflow: boolean }> {
    return new Promise((resolve, reject) => {
      if (!(query instanceof Float32Array) || query.length !== DIMS) return reject(new RangeError('query must be a Float32Array of 1024 floats'));
      try {
        checkFilter(filter);
      } catch (e) {
        return reject(e);
      }
      this.#queue.push({ query, threshold, cap, filter, resolve, reject });
      this.#schedule();
    });
  }

  /**
   * Top-k by revision: 'scan' (exact), 'hnsw' (may be incomplete), or 'auto' (planned, never
   * under-filled). At most `passes` run at once: each keeps a core busy, and more would only
   * take turns on the cores with each other and with the event loop.
   */
  async topk(query: Float32Array, k: number, minScore: number, filter: NativeFilter, mode: 'scan' | 'hnsw' | 'auto', scanMaxRows?: number) {
    if (query.length !== DIMS) throw new RangeError('query must hold 1024 floats');
    return this.#topkLimit.run(() => this.#engine.topk(query, k, minScore, filter, mode, scanMaxRows));
  }

  /** Rows the filter allows: the planner's cost input. */
  count(filter: NativeFilter): number {
    return this.#engine.count(filter);
  }

  stats(): NativeStats {
    return this.#engine.stats();
  }

  indexPending(max: number, threads: number): Promise<number> {
    return this.#engine.indexPending(max, threads);
  }

  seal(): Promise<void> {
    return this.#engine.seal();
  }

  compact(): Promise<void> {
    return this.#engine.compact();
  }

  saveHnsw(threads: number): Promise<void> {
    return this.#engine.saveHnsw(threads);
  }

  close(): void {
    this.#engine.close();
  }

  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= this.options.passes) return;
    this.#scheduled = true;
    // Let queries arriving in this turn of the event loop join the pass.
    setImmediate(() => {
      this.#scheduled = false;
      this.#pass();
    });
  }

  #pass(): void {
    if (this.#queue.length === 0 || this.#inFlight >= this.options.passes) return;
    const batch = this.#queue.splice(0, MAX_BATCH);
    const queries = new Float32Array(batch.length * DIMS);
    batch.forEach((b, i) => queries.set(b.query, i * DIMS));
    this.#inFlight++;
    this.batches.passes++;
    this.batches.queries += batch.length;
    let pass: Promise<(NativeHits & { overflow: boolean })[]>;
    try {
      pass = this.#engine.range(queries, batch.map((b) => ({ threshold: b.threshold, cap: b.cap, filter: b.filter })));
    } catch (e) {
      // A malformed spec throws before the pass starts: fail the batch, never the process.
      pass = Promise.reject(e);
    }
    pass
      .then(
        (results) => batch.forEach((b, i) => b.resolve(results[i])),
        (e) => batch.forEach((b) => b.reject(e)),
      )
      .finally(() => {
        this.#inFlight--;
        if (this.#queue.length > 0) this.#schedule();
      });
    if (this.#queue.length > 0) this.#schedule();
  }
}

/** Another process (a running server) owns the engine directory. */
export class EngineLockedError extends Error {
  readonly name = 'EngineLockedError';
  constructor(readonly dir: string) {
    super(`${dir} is in use by another newsmatch process`);
  }
}
