/**
 * The usearch HNSW index over chunk vectors, kept in `DATA_DIR/chunks.usearch`. Keys are
 * chunk labels, which LMDB assigns densely from 0, so an index of size n holds exactly the
 * labels 0 … n-1 and "behind" means size < LMDB's nextLabel: catching up adds the rest.
 */
import fs from 'node:fs';
import { Index, MetricKind, ScalarKind } from 'usearch';
import { DIMENSIONS, type Store } from '../store/lmdb-store.js';

export interface HnswOptions {
  connectivity: number;
  expansionAdd: number;
  expansionSearch: number;
}

export interface Hits {
  labels: Float64Array;
  /** Cosine similarity per label (1 − usearch's cos distance), best first. */
  sims: Float32Array;
}

type Log = (msg: string) => void;

const ADD_BATCH = 2048;

export class HnswIndex {
  #index: Index;
  #dirty = false;

  private constructor(readonly file: string, readonly options: HnswOptions) {
    this.#index = HnswIndex.#create(options);
  }

  static #create(o: HnswOptions): Index {
    return new Index({
      dimensions: DIMENSIONS,
      metric: MetricKind.Cos,
      // f16 halves memory; final scores are recomputed from LMDB's float32 vectors.
      quantization: ScalarKind.F16,
      connectivity: o.connectivity,
      expansion_add: o.expansionAdd,
      expansion_search: o.expansionSearch,
      multi: false,
    });
  }

  /** Loads the index file, or rebuilds it from LMDB when missing, unreadable or ahead of it. */
  static open(file: string, store: Store, options: HnswOptions, log: Log): HnswIndex {
    const h = new HnswIndex(file, options);
    const total = store.nextLabel();
    if (fs.existsSync(file)) {
      try {
        h.#index.load(file);
      } catch (e) {
        log(`vector index ${file} is unreadable (${(e as Error).message}): rebuilding from LMDB`);
        h.#index = HnswIndex.#create(options);
      }
      if (h.size() > total) {
        log(`vector index holds ${h.size()} chunks but LMDB has ${total}: rebuilding from LMDB`);
        h.#index = HnswIndex.#create(options);
      }
    } else if (total > 0) {
      log(`vector index ${file} is missing: rebuilding from LMDB (${total} chunks)`);
    }
    const behind = total - h.size();
    if (behind > 0 && h.size() > 0) log(`vector index is behind LMDB by ${behind} chunks: catching up`);
    h.catchUp(store);
    if (behind > 0) h.save();
    return h;
  }

  size(): number {
    return this.#index.size();
  }

  /** Adds every chunk LMDB has that the index lacks. Returns how many were added. */
  catchUp(store: Store, onProgress?: (done: number, total: number) => void): number {
    const start = this.size();
    const end = store.nextLabel();
    for (let from = start; from < end; from += ADD_BATCH) {
      const n = Math.min(ADD_BATCH, end - from);
      const keys = new BigUint64Array(n);
      const matrix = new Float32Array(n * DIMENSIONS);
      for (let i = 0; i < n; i++) {
        keys[i] = BigInt(from + i);
        matrix.set(store.vector(from + i), i * DIMENSIONS);
      }
      this.#index.add(keys, matrix, 0);
      this.#dirty = true;
      onProgress?.(from + n - start, end - start);
    }
    return end - start;
  }

  /** The k nearest chunks to a normalised query. */
  search(query: Float32Array, k: number): Hits {
    const size = this.size();
    if (size === 0 || k <= 0) return { labels: new Float64Array(0), sims: new Float32Array(0) };
    const m = this.#index.search(query, Math.min(k, size), 0);
    let n = m.keys.length;
    // usearch pads a short result with max-uint64 keys.
    while (n > 0 && m.keys[n - 1] >= BigInt(size)) n--;
    const labels = new Float64Array(n);
    const sims = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      labels[i] = Number(m.keys[i]);
      sims[i] = 1 - m.distances[i];
    }
    return { labels, sims };
  }

  /** Writes the index atomically (temp file + rename), so a crash leaves the old file whole. */
  save(): void {
    if (!this.#dirty && fs.existsSync(this.file)) return;
    const tmp = `${this.file}.tmp-${process.pid}`;
    this.#index.save(tmp);
    fs.renameSync(tmp, this.file);
    this.#dirty = false;
  }
}
