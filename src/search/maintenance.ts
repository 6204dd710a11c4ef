/**
 * Keeps the native engine in step with LMDB: appends chunks LMDB has and the engine lacks,
 * then, in the background and one task at a time, files them in the relevance index (training
 * it when due), seals the delta into a segment, compacts segments and saves the index file.
 */
import type { Logger } from 'pino';
import type { Catalog, Store } from '../store/index.js';
import type { SearchEngine, TopkOptions } from './engine.js';
import { normalise } from './vector.js';

const APPEND_BATCH = 4096;
/**
 * Chunks per indexPending call (the engine files them 8,192 at a time, copying their codes
 * under a read lock, so appends and queries go on). Chunks not yet filed are scanned beside
 * the index, so a large batch costs a query nothing.
 */
const INDEX_BATCH = 65_536;
/** Delta rows that make a segment. */
const SEAL_ROWS = 65_536;
/** Segments beyond this are merged into one. */
const MAX_SEGMENTS = 8;
/** Filed chunks not yet in the index file that trigger a save (or this fraction of those filed). */
const SAVE_ROWS = 50_000;
const SAVE_FRACTION = 0.25;

export class Maintenance {
  #chain: Promise<void> = Promise.resolve();
  #busy = false;
  #closed = false;
  #held = 0;
  #scratch: { labels: Float64Array; ords: Float64Array; times: Float64Array; sources: Uint32Array; first: Uint8Array; vectors: Float32Array } | null = null;
  constructor(
    readonly store: Store,
    readonly catalog: Catalog,
    readonly engine: SearchEngine,
    readonly log: Logger,
    readonly topk: TopkOptions = {},
  ) {
    // Work the engine opened with (an index file it dropped, damaged or of an older version,
    // leaves every chunk pending) starts now, not at the first append.
    if (engine.stats().indexPending > 0) this.schedule();
  }

  /**
   * Appends LMDB's new chunks to the engine, then schedules the rest. Synchronous (~6 µs a
   * chunk): a caller on the event loop passes `max` and appends a large backlog a slice at a
   * time (a slice ends on a revision boundary, so it may pass `max` by one revision's chunks).
   * The catalog must be caught up first.
   */
  sync(max = Infinity): number {
    const from = this.engine.nextLabel;
    const to = this.store.nextLabel();
    const until = Math.min(to, from + max);
    const c = this.catalog;
    let done = 0;
    for (let start = from, n = 0; start < until; start += n) {
      // End each batch on a revision boundary: a seal between two appends must never split a
      // revision's chunks across a segment and the delta (scans group a revision's rows).
      const last = c.labelOrd[Math.min(until, start + APPEND_BATCH) - 1];
      n = Math.min(to, c.labelStart[last] + c.labelCount[last]) - start;
      const rows = this.#rows(n);
      for (let i = 0; i < n; i++) {
        const label = start + i;
        const ord = c.labelOrd[label];
        rows.labels[i] = label;
        rows.ords[i] = ord;
        rows.times[i] = c.eventTime[ord];
        rows.sources[i] = c.sourceId[ord];
        rows.first[i] = c.first[ord];
        rows.vectors.set(this.store.vector(label), i * 1024);
      }
      this.engine.append(rows);
      done += n;
    }
    if (done > 0) this.schedule();
    return done;
  }

  /**
   * Columns for `n` rows to append: views of buffers kept between calls (append copies them),
   * so a catch-up of many slices does not allocate 16 MB a slice for the GC to collect.
   */
  #rows(n: number) {
    if (!this.#scratch || this.#scratch.labels.length < n) {
      const cap = Math.max(n, APPEND_BATCH);
      this.#scratch = {
        labels: new Float64Array(cap),
        ords: new Float64Array(cap),
        times: new Float64Array(cap),
        sources: new Uint32Array(cap),
        first: new Uint8Array(cap),
        vectors: new Float32Array(cap * 1024),
      };
    }
    const b = this.#scratch;
    return {
      labels: b.labels.subarray(0, n),
      ords: b.ords.subarray(0, n),
      times: b.times.subarray(0, n),
      sources: b.sources.subarray(0, n),
      first: b.first.subarray(0, n),
      vectors: b.vectors.subarray(0, n * 1024),
    };
  }

  /**
   * Holds background rounds back until the returned function is called (then one is queued):
   * a burst of appends is indexed once, after it. Appended rows are searchable meanwhile (the
   * planner scans what HNSW lacks).
   */
  hold(): () => void {
    this.#held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#held--;
      this.schedule();
    };
  }

  /** Queues one round of background work (a no-op round when there is nothing to do). */
  schedule(): void {
    if (this.#busy || this.#closed || this.#held > 0) return;
    this.#busy = true;
    this.#chain = this.#chain
      .then(() => this.#round(false))
      .catch((e) => this.log.error({ err: e }, 'search engine maintenance failed'))
      .finally(() => {
        this.#busy = false;
      });
  }

  /** Does everything now: file every pending chunk, seal, compact, save the index; then checks recall. */
  async flush(onProgress?: (done: number, total: number) => void): Promise<void> {
    await this.#chain;
    this.#chain = this.#round(true, onProgress);
    await this.#chain;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#chain;
    await this.engine.seal();
  }

  async #round(all: boolean, onProgress?: (done: number, total: number) => void): Promise<void> {
    const total = this.engine.stats().indexPending;
    let done = 0;
    while (!this.#closed || all) {
      const trained = this.engine.stats().trainedRows;
      const t0 = performance.now();
      const added = await this.engine.indexPending(INDEX_BATCH);
      if (added === 0) break;
      const now = this.engine.stats();
      if (now.trainedRows !== trained) {
        this.log.info(
          `relevance index trained: ${now.indexLists} lists over ${now.trainedRows} chunks, every chunk filed (${Math.round(performance.now() - t0)} ms)`,
        );
      }
      done += added;
      onProgress?.(Math.min(done, total), total);
    }
    let s = this.engine.stats();
    if (s.deltaRows >= SEAL_ROWS || (all && s.deltaRows > 0)) await this.engine.seal();
    if (this.engine.stats().segments > MAX_SEGMENTS) await this.engine.compact();
    s = this.engine.stats();
    const unsaved = s.indexLists > 0 ? s.nextLabel - s.indexSaved : 0;
    if (s.indexPending === 0 && unsaved > 0 && (unsaved >= Math.max(SAVE_ROWS, s.indexRows * SAVE_FRACTION) || all)) {
      const t1 = performance.now();
      await this.engine.saveIndex();
      this.log.info(`relevance index saved: ${s.indexLists} lists, ${s.indexRows} chunks (${Math.round(performance.now() - t1)} ms)`);
      await this.checkRecall();
    }
  }

  /**
   * Recall of the index's top-10 against the exact scan on held-out queries (stored chunk
   * vectors with noise), logged after every save so a bad index shows up in the logs.
   */
  async checkRecall(queries = 20): Promise<number> {
    const labels = this.store.nextLabel();
    if (labels < 100) return 1;
    let found = 0;
    let expected = 0;
    for (let i = 0; i < queries; i++) {
      const label = Math.floor(((i + 0.5) / queries) * labels);
      const v = this.store.vector(label);
      const q = normalise(Array.from(v, (x, j) => x + Math.sin(j * 12.9898 + i) * 0.01))!;
      const exact = await this.engine.topk(q, 10, -1, {}, 'scan');
      const approx = await this.engine.topk(q, 10, -1, {}, 'index', this.topk);
      const got = new Set(approx.ords);
      expected += exact.ords.length;
      for (const o of exact.ords) if (got.has(o)) found++;
    }
    const recall = expected ? found / expected : 1;
    this.log.info(`relevance index top-10 recall on ${queries} held-out queries: ${recall.toFixed(4)} (${labels} chunks)`);
    return recall;
  }
}
