/**
 * Standing match queries (monitors) scored against each batch of new chunks inside the addon
 * (native/core/monitors.h): an int8 pass over monitors × chunks under the scan's rigorous error
 * bound, then f16 rescoring of the pairs it cannot rule out, so no revision at or above a
 * monitor's floor is missed and every score is the one a search returns (README "Search: how a
 * query is answered").
 */
import type { NativeEngine, NativeMonitorMatches, NativeMonitorSet } from '../native.js';

/**
 * Matches of one batch, by monitor then ord. Entry i: monitor `monitor[i]` (its index in the
 * set) matched revision `ord[i]`, whose best chunk in the batch is `label[i]` scoring `score[i]`
 * (>= the monitor's floor). E.g. monitors [A, B], floors [0.8, 0.9], a batch where revision 7's
 * chunks 70, 71 score 0.83, 0.86 against A and nothing reaches B → monitor [0], ord [7],
 * label [71], score [0.86].
 */
export type MonitorMatches = NativeMonitorMatches;

/** A batch of new chunks as appended: n × 1024 floats, each chunk's revision ord and label. */
export interface MonitorChunks {
  vectors: Float32Array;
  ords: Float64Array;
  labels: Float64Array;
}

/** A prepared set of monitors: quantised once, scored against every batch that arrives. */
export class MonitorSet {
  readonly #engine: NativeEngine;
  readonly #set: NativeMonitorSet;

  private constructor(
    engine: NativeEngine,
    set: NativeMonitorSet,
    /** Monitors in the set. */
    readonly size: number,
  ) {
    this.#engine = engine;
    this.#set = set;
  }

  /** Prepares `floors.length` monitors (vectors: that many × 1024, L2-normalised) on the engine's threads. */
  static async prepare(engine: NativeEngine, vectors: Float32Array, floors: Float32Array): Promise<MonitorSet> {
    return new MonitorSet(engine, await engine.prepareMonitors({ vectors, floors }), floors.length);
  }

  /** Every (monitor, revision) of the batch whose best chunk reaches the monitor's floor. Rejects a malformed batch with a TypeError or RangeError. */
  async score(chunks: MonitorChunks): Promise<MonitorMatches> {
    return this.#engine.scoreMonitors(this.#set, chunks);
  }

  /**
   * The same for the chunks the engine holds with labels in [from, to) (a window of the ingest
   * sequence), read from its own rows: no vectors cross from JavaScript, none is quantised again.
   */
  async scoreLabels(from: number, to: number): Promise<MonitorMatches> {
    return this.#engine.scoreMonitorLabels(this.#set, from, to);
  }

  /** The raw int8 dots of the same tiles (no bounds, no rescoring): the benchmark's floor. */
  async rawDots(vectors: Float32Array): Promise<number> {
    return this.#engine.monitorDots(this.#set, { vectors });
  }
}
