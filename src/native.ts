/**
 * The one file that loads the native addon (build/Release/newsmatch.node), and the typed
 * shape of what it exports. Wrapped by src/search/engine.ts; nothing else touches it.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DIMS } from './dims.js';

/** Which rows a query may see. Times are inclusive Unix seconds; `sources` is a bitmap (bit i = source id i). */
export interface NativeFilter {
  tmin?: number;
  tmax?: number;
  sources?: Uint8Array | null;
  firstOnly?: boolean;
  /** Chunk labels in [labelMin, labelMax): what became searchable between two points. */
  labelMin?: number;
  labelMax?: number;
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

/**
 * How a top-k was answered: 'scan' (no index yet, or the filters leave few chunks), 'scan-far'
 * (the query is far from every list), 'index' (the nearest lists, read exactly, with the chunks
 * not yet filed scanned beside them), 'index-then-scan' (the lists could not fill the page).
 */
export type TopkPlan = 'scan' | 'scan-far' | 'index' | 'index-then-scan';

/** The planner's settings for one top-k (defaults in native/core/engine.h). */
export interface TopkOptions {
  scanMaxRows?: number;
  probeDelta?: number;
  /** 0: 64 per wanted revision, and 4 lists' worth. */
  probeMinRows?: number;
  /** 0: 3% of the rows, at least 30,000. */
  probeMaxRows?: number;
  farScore?: number;
}

/** What an index top-k read. */
export interface ProbeStats {
  lists: number;
  rows: number;
  /** Of those rows, the ones the filter allowed. */
  allowed: number;
  /** Rows not yet filed, scanned beside the lists. */
  pending: number;
  /** Revisions scored exactly in f16. */
  rescored: number;
  /** Threads the lists were handed out to: all of them for a lone query on an idle pool, else 1. */
  threads: number;
}

export interface NativeStats {
  segments: number;
  segmentRows: number;
  deltaRows: number;
  /** 0 until the index is trained. */
  indexLists: number;
  indexRows: number;
  /** Rows waiting to be filed (0 while the engine holds too few rows to train on). */
  indexPending: number;
  /** Labels below this are in the index file. */
  indexSaved: number;
  trainedRows: number;
  nextLabel: number;
  threads: number;
  isa: string;
}

declare const monitorSetBrand: unique symbol;
/** Standing queries prepared by `prepareMonitors` (an opaque handle held by src/search/monitors.ts). */
export type NativeMonitorSet = { readonly [monitorSetBrand]: true };

/**
 * Every (monitor, revision) of a batch whose best chunk reaches the monitor's floor, by monitor
 * then ord: entry i is monitor[i]'s match with revision ord[i], best chunk label[i], score[i].
 * `rescored`: the pairs the int8 pass could not rule out (scored in f16).
 */
export interface NativeMonitorMatches {
  monitor: Uint32Array;
  ord: Float64Array;
  label: Float64Array;
  score: Float32Array;
  rescored: number;
}

export interface NativeEngine {
  append(rows: NativeRows): void;
  /** Files up to `max` rows in the index (training it first when due); resolves with the rows filed. */
  indexPending(max: number): Promise<number>;
  seal(): Promise<void>;
  compact(): Promise<void>;
  saveIndex(): Promise<void>;
  range(queries: Float32Array, specs: { threshold: number; cap: number; filter?: NativeFilter }[]): Promise<(NativeHits & { overflow: boolean })[]>;
  /**
   * 'scan' is exact; 'index' reads the nearest lists only (plan 'far' when the query is far
   * from all of them, `complete` false when they cannot fill k); 'auto' plans inside the worker.
   */
  topk(
    query: Float32Array,
    k: number,
    minScore: number,
    filter: NativeFilter | null,
    mode: 'scan' | 'index' | 'auto',
    options?: TopkOptions,
  ): Promise<NativeHits & { complete: boolean; plan: TopkPlan | 'far'; probe: ProbeStats }>;
  /** Several top-k queries (queries: n × 1024 floats) answered together over the engine's threads. */
  topkMany(
    queries: Float32Array,
    specs: { k: number; minScore: number; filter?: NativeFilter | null; mode: 'scan' | 'index' | 'auto'; options?: TopkOptions }[],
  ): Promise<(NativeHits & { complete: boolean; plan: TopkPlan | 'far'; probe: ProbeStats })[]>;
  /** Rows the filter allows, counted. */
  count(filter: NativeFilter | null): number;
  /** Rows the filter allows, estimated from the time index and per-source counts (no pass). */
  estimate(filter: NativeFilter | null): number;
  stats(): NativeStats;
  /** m standing queries (vectors: m × 1024, L2-normalised; floors: m cosines), quantised once (monitors' work runs on the addon's background pool, at low priority). */
  prepareMonitors(monitors: { vectors: Float32Array; floors: Float32Array }): Promise<NativeMonitorSet>;
  /** A batch of new chunks (vectors: n × 1024, with each chunk's revision ord and label) scored against every monitor, exactly. */
  scoreMonitors(set: NativeMonitorSet, chunks: { vectors: Float32Array; ords: Float64Array; labels: Float64Array }): Promise<NativeMonitorMatches>;
  /** The same for the chunks this engine holds with labels in [from, to), read from its own rows. */
  scoreMonitorLabels(set: NativeMonitorSet, from: number, to: number): Promise<NativeMonitorMatches>;
  /** The same int8 tiles' dots alone, no bound test or rescoring (bench/monitors.ts's floor); resolves with a checksum. */
  monitorDots(set: NativeMonitorSet, chunks: { vectors: Float32Array }): Promise<number>;
  /** Releases the directory lock (another process may then open it). Top-k calls already made are settled first: answered, or rejected as closed. */
  close(): void;
}

export interface NativeAddon {
  Engine: new (options: { dir: string; lists?: number; indexMinRows?: number; threads?: number }) => NativeEngine;
  /** GB/s read by `threads` threads (default 1) summing a buffer of `bytes`. */
  measureBandwidth(bytes: number, threads?: number): Promise<number>;
  setIsa(isa: 'auto' | 'generic' | 'avx2' | 'avx512' | 'avx512vnni' | 'amx'): string;
  /**
   * A JSON body's top-level `vector` of numbers, read from its bytes (`values`, as JSON.parse
   * reads them) with where it lies (`start` at its '[', `end` past its ']'); null unless the body
   * is an object with exactly one such member, no top-level key written with an escape, and
   * every number finite (native/core/json.h). The rest of the body is not checked.
   */
  vectorMember(body: Uint8Array): { start: number; end: number; values: Float64Array } | null;
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
    let addon: NativeAddon;
    try {
      addon = require(file) as NativeAddon;
    } catch (e) {
      errors.push(`${file}: ${(e as Error).message.split('\n')[0]}`);
      continue;
    }
    if (addon.dims !== DIMS)
      throw new Error(`newsmatch: ${file} was built for ${addon.dims}-d vectors, the service uses ${DIMS}: run \`npm run build:native\``);
    return addon;
  }
  throw new Error(
    `newsmatch: the native addon could not be loaded.\n${errors.join('\n')}\n` +
      'Possible solutions:\n- run `npm run build:native` (needs g++, make and python3)\n- reinstall with `npm ci`',
  );
}

export const native: NativeAddon = load();
