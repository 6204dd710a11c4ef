/**
 * The native search engine, wrapped: time-ordered segments scanned in int8 + f16, and the
 * inverted-file relevance index, both inside the addon (src/native.ts). Concurrent range
 * queries are merged into one pass over the data, since the scan is memory-bound: while a pass
 * is running (on every core), new queries queue, and the next pass takes all of them.
 */
import { DIMS } from '../dims.js';
import {
  native,
  type NativeEngine,
  type NativeFilter,
  type NativeHits,
  type NativeRows,
  type NativeStats,
  type ProbeStats,
  type TopkOptions,
  type TopkPlan,
} from '../native.js';
import { type MonitorChunks, type MonitorMatches, MonitorSet } from './monitors.js';

export type { NativeFilter as EngineFilter, NativeHits as EngineHits, NativeRows as EngineRows, NativeStats as EngineStats, ProbeStats, TopkOptions, TopkPlan };

export interface EngineOptions {
  /** Index lists when it is trained (0: about sqrt(chunks)). */
  lists: number;
  /** Chunks held before the index is trained. */
  indexMinRows: number;
  /** Threads of a scan pass or an index build (0: one per core). */
  threads: number;
  /** Range passes running at once (each already uses every thread). */
  passes: number;
  /** Top-k batches running at once (each spreads its queries over every thread). */
  topkBatches: number;
}

type TopkSpec = { k: number; minScore: number; filter: NativeFilter; mode: 'scan' | 'index' | 'auto'; options?: TopkOptions };
type RangeSpec = { threshold: number; cap: number; filter: NativeFilter };

/** A top-k answer: the hits, whether the index could fill them, how it was planned and what it read. */
export type TopkResult = NativeHits & { complete: boolean; plan: TopkPlan | 'far'; probe: ProbeStats };

/**
 * Queries waiting at one turn of the event loop, handed to the addon in one call (at most
 * `maxBatch` of them, `maxInFlight` calls at once); the next call takes whatever queued
 * meanwhile. A call that throws before it starts (a malformed spec) fails its batch, never the
 * process.
 */
class Batcher<S, R> {
  #queue: { query: Float32Array; spec: S; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  #inFlight = 0;
  #scheduled = false;
  /** Set by drain: no query is taken once it is. */
  #drain: Promise<void> | null = null;
  #drained: (() => void) | null = null;

  constructor(
    readonly maxBatch: number,
    readonly maxInFlight: number,
    readonly call: (queries: Float32Array, specs: S[]) => Promise<R[]>,
    readonly onBatch: (size: number) => void = () => {},
  ) {}

  push(query: Float32Array, spec: S & { filter: NativeFilter }): Promise<R> {
    return new Promise((resolve, reject) => {
      if (this.#drain) return reject(new Error('the search engine is closed'));
      if (!(query instanceof Float32Array) || query.length !== DIMS) return reject(new RangeError(`query must be a Float32Array of ${DIMS} floats`));
      try {
        checkFilter(spec.filter);
      } catch (e) {
        return reject(e);
      }
      this.#queue.push({ query, spec, resolve, reject });
      this.#schedule();
    });
  }

  /** Takes no more queries, and resolves once every one taken is answered. */
  drain(): Promise<void> {
    this.#drain ??=
      this.#queue.length === 0 && this.#inFlight === 0
        ? Promise.resolve()
        : new Promise((resolve) => {
            this.#drained = resolve;
          });
    return this.#drain;
  }

  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= this.maxInFlight) return;
    this.#scheduled = true;
    // Let queries arriving in this turn of the event loop join the call.
    setImmediate(() => {
      this.#scheduled = false;
      this.#run();
    });
  }

  #run(): void {
    if (this.#queue.length === 0 || this.#inFlight >= this.maxInFlight) return;
    const batch = this.#queue.splice(0, this.maxBatch);
    const queries = new Float32Array(batch.length * DIMS);
    batch.forEach((b, i) => queries.set(b.query, i * DIMS));
    this.#inFlight++;
    this.onBatch(batch.length);
    let call: Promise<R[]>;
    try {
      call = this.call(
        queries,
        batch.map((b) => b.spec),
      );
    } catch (e) {
      call = Promise.reject(e);
    }
    call
      .then(
        (results) => batch.forEach((b, i) => b.resolve(results[i])),
        (e) => batch.forEach((b) => b.reject(e)),
      )
      .finally(() => {
        this.#inFlight--;
        if (this.#queue.length > 0) this.#schedule();
        else if (this.#inFlight === 0) this.#drained?.();
      });
    if (this.#queue.length > 0) this.#schedule();
  }
}

/** Checked before queueing, so one malformed query fails alone instead of failing the pass it would join. */
function checkFilter(f: NativeFilter): void {
  const num = (v: unknown) => v === undefined || typeof v === 'number';
  if (typeof f !== 'object' || f === null || !num(f.tmin) || !num(f.tmax)) throw new TypeError('filter: tmin/tmax must be numbers');
  if (f.sources !== undefined && f.sources !== null && !(f.sources instanceof Uint8Array)) throw new TypeError('filter.sources must be a Uint8Array bitmap');
  if (f.firstOnly !== undefined && typeof f.firstOnly !== 'boolean') throw new TypeError('filter.firstOnly must be a boolean');
}
/**
 * Most queries merged into one pass. A pass reads the int8 column once whatever it serves, and
 * scoring 4 rows × 4 queries a kernel call keeps 16 queries near the cost of one (bench:search,
 * pass16_vs_pass1); past ~64 the pass turns compute-bound and its latency grows with no gain.
 */
const MAX_BATCH = 64;
/**
 * Most top-k queries handed to the addon in one call. Each call wakes threads; one call a
 * query cost the event loop ~50 µs each on 2 cores (a woken worker took its core), one call for
 * every query waiting at that turn of the loop costs it once.
 */
const MAX_TOPK_BATCH = 32;

export class SearchEngine {
  #nextLabel: number;
  #engine: NativeEngine;
  readonly #ranges: Batcher<RangeSpec, NativeHits & { overflow: boolean }>;
  readonly #topks: Batcher<TopkSpec, TopkResult>;
  /** Queries per pass, for the batching benchmark and logs. */
  readonly batches = { passes: 0, queries: 0 };

  constructor(
    dir: string,
    readonly options: EngineOptions,
  ) {
    let engine: NativeEngine;
    try {
      engine = new native.Engine({ dir, lists: options.lists, indexMinRows: options.indexMinRows, threads: options.threads });
    } catch (e) {
      if ((e as Error).message.startsWith('ELOCKED')) throw new EngineLockedError(dir);
      throw e;
    }
    this.#engine = engine;
    this.#nextLabel = engine.stats().nextLabel;
    this.#ranges = new Batcher(
      MAX_BATCH,
      options.passes,
      (q, specs) => engine.range(q, specs),
      (n) => {
        this.batches.passes++;
        this.batches.queries += n;
      },
    );
    this.#topks = new Batcher(MAX_TOPK_BATCH, options.topkBatches, (q, specs) => engine.topkMany(q, specs));
  }

  static get isa(): string {
    return native.isa;
  }

  append(rows: NativeRows): void {
    if (rows.labels.length === 0) return;
    this.#engine.append(rows);
    for (const label of rows.labels) if (label >= this.#nextLabel) this.#nextLabel = label + 1;
  }

  /**
   * One past the largest label held, as `stats().nextLabel`, kept here (every append comes
   * through `append`): each request checks it to see whether LMDB is ahead, and `stats()` is a
   * native call that builds a dozen fields.
   */
  get nextLabel(): number {
    return this.#nextLabel;
  }

  /** Every revision at or above `threshold` under `filter`; `overflow` once more than `cap` match. */
  range(query: Float32Array, threshold: number, filter: NativeFilter, cap: number): Promise<NativeHits & { overflow: boolean }> {
    return this.#ranges.push(query, { threshold, cap, filter });
  }

  /**
   * Top-k by revision: 'scan' (exact), 'index' (the nearest lists; may be incomplete or far),
   * or 'auto' (planned, never under-filled). The queries waiting at a turn of the event loop go
   * to the addon together, at most `topkBatches` batches at once (each uses every thread).
   */
  topk(query: Float32Array, k: number, minScore: number, filter: NativeFilter, mode: 'scan' | 'index' | 'auto', options?: TopkOptions): Promise<TopkResult> {
    return this.#topks.push(query, { k, minScore, filter, mode, options });
  }

  /** Prepares standing queries (vectors: floors.length × 1024, L2-normalised) for scoring batch after batch. */
  prepareMonitors(vectors: Float32Array, floors: Float32Array): Promise<MonitorSet> {
    return MonitorSet.prepare(this.#engine, vectors, floors);
  }

  /** One batch of new chunks against monitors prepared for it alone (a standing set: prepareMonitors, then score each batch). */
  async scoreMonitors(monitors: Float32Array, floors: Float32Array, chunks: MonitorChunks): Promise<MonitorMatches> {
    return (await this.prepareMonitors(monitors, floors)).score(chunks);
  }

  /** Rows the filter allows, counted. */
  count(filter: NativeFilter): number {
    return this.#engine.count(filter);
  }

  /** Rows the filter allows, estimated (the planner's cost input). */
  estimate(filter: NativeFilter): number {
    return this.#engine.estimate(filter);
  }

  stats(): NativeStats {
    return this.#engine.stats();
  }

  indexPending(max: number): Promise<number> {
    return this.#engine.indexPending(max);
  }

  seal(): Promise<void> {
    return this.#engine.seal();
  }

  compact(): Promise<void> {
    return this.#engine.compact();
  }

  saveIndex(): Promise<void> {
    return this.#engine.saveIndex();
  }

  /**
   * Takes no more queries and resolves once those already taken are answered: a request still
   * at work when the server closes (its client gone, so the HTTP server no longer waits for
   * it) gets its answer instead of "the search engine is closed". Then `close`.
   */
  async drain(): Promise<void> {
    await Promise.all([this.#ranges.drain(), this.#topks.drain()]);
  }

  close(): void {
    this.#engine.close();
  }
}

/** Another process (a running server) owns the engine directory. */
export class EngineLockedError extends Error {
  readonly name = 'EngineLockedError';
  constructor(readonly dir: string) {
    super(`${dir} is in use by another newsmatch process`);
  }
}
