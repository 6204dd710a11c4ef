/**
 * The one file that loads the native addon (build/Release/newsmatch.node), and the typed
 * shape of what it exports. Wrapped by src/search/engine.ts; nothing else touches it.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Which rows a query may see. Times are inclusive Unix seconds; `sources` is a bitmap (bit i = source id i). */
export interface NativeFilter {
  tmin?: number;
  tmax?: number;
  sources?: Uint8Array | null;
  firstOnly?: boolean;
}

export interface NativeHits {
  ords: Float64Array;
  labels: Float64Array;
  scores: Float32Array;
}

export interface NativeRows {
  labels: Float64Array;
  ords: Float64Array;
  times: Float64Array;
  sources: Uint32Array;
  first: Uint8Array;
  /** rows × 1024, L2-normalised */
  vectors: Float32Array;
}

/** How a top-k was answered: 'scan-pending' = scanned because HNSW lags behind new chunks. */
export type TopkPlan = 'scan' | 'scan-pending' | 'hnsw' | 'hnsw-then-scan';

export interface NativeStats {
  segments: number;
  segmentRows: number;
  deltaRows: number;
  hnswBase: number;
  hnswDelta: number;
  hnswPending: number;
  nextLabel: number;
  isa: string;
}

export interface NativeEngine {
  append(rows: NativeRows): void;
  indexPending(max: number, threads: number): Promise<number>;
  seal(): Promise<void>;
  compact(): Promise<void>;
  saveHnsw(threads: number): Promise<void>;
  range(queries: Float32Array, specs: { threshold: number; cap: number; filter?: NativeFilter }[]): Promise<(NativeHits & { overflow: boolean })[]>;
  /** 'auto' plans inside the worker: scan when the filter allows at most `scanMaxRows` rows, else HNSW, else scan. */
  topk(
    query: Float32Array,
    k: number,
    minScore: number,
    filter: NativeFilter | null,
    mode: 'scan' | 'hnsw' | 'auto',
    scanMaxRows?: number,
  ): Promise<NativeHits & { complete: boolean; plan: TopkPlan }>;
  count(filter: NativeFilter | null): number;
  stats(): NativeStats;
  /** Releases the directory lock (another process may then open it). */
  close(): void;
}

export interface NativeAddon {
  Engine: new (options: { dir: string; connectivity?: number; expansionAdd?: number; expansionSearch?: number }) => NativeEngine;
  measureBandwidth(bytes: number): Promise<number>;
  setIsa(isa: 'auto' | 'generic' | 'avx2' | 'avx512'): string;
  isa: string;
  dims: number;
}

function load(): NativeAddon {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  // Compiled code sits in dist/src, sources in src: look from both.
  const candidates = [path.join(root, 'build/Release/newsmatch.node'), path.join(root, '../build/Release/newsmatch.node')];
  const require = createRequire(import.meta.url);
  const errors: string[] = [];
  for (const file of candidates) {
    try {
      return require(file) as NativeAddon;
    } catch (e) {
      errors.push(`${file}: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  throw new Error(
    `newsmatch: the native addon could not be loaded.\n${errors.join('\n')}\n` +
      'Possible solutions:\n- run `npm run build:native` (needs g++, make and python3)\n- reinstall with `npm ci`',
  );
}

export const native: NativeAddon = load();
