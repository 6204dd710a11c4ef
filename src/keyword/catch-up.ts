/**
 * Keeps one corpus of the keyword index in step with LMDB without holding the event loop. A
 * search first has a small backlog (an import just done, a poll) indexed and waits for it, so
 * what was just stored is found; a large one (a big import beside the server, a rebuild) is
 * indexed in the background while searches answer from what is indexed and say so
 * (`partial`). The indexing itself is `step`: on the writer thread in the server, slices on the
 * event loop without one.
 */
import type { Logger } from 'pino';

/** The largest backlog a search waits for; past it the catch-up goes on in the background. */
export const SYNC_BUDGET = 2_000;

export interface CatchUpOptions {
  /** What a record is, for the log ('revisions'). */
  noun: string;
  /** Records LMDB holds that the index has not read. */
  behind(): number;
  /** Indexes up to `n` records; resolves with how many (0: caught up). */
  step(n: number): Promise<number>;
  /** Records a step indexes. */
  stepSize: number;
  /** Yield to the event loop between steps (steps that run on it). */
  yields: boolean;
  log?: Logger;
}

export class CatchUp {
  #draining: Promise<void> | null = null;
  #background: { total: number; done: number; reported: number } | null = null;
  #closed = false;

  constructor(readonly o: CatchUpOptions) {}

  /** Whether a background catch-up is under way. */
  get background(): boolean {
    return this.#background !== null;
  }

  /**
   * Before a search: waits while a small backlog is indexed, starts the background catch-up for
   * a large one; resolves with the records still pending (0: the search sees everything).
   */
  async fresh(): Promise<number> {
    const behind = this.o.behind();
    if (behind === 0) return 0;
    if (!this.#background && behind <= SYNC_BUDGET) await this.#drain();
    const pending = this.o.behind();
    if (pending > 0) this.start();
    return pending;
  }

  /** Indexes the whole backlog in the background, logging progress. */
  start(): void {
    if (this.#closed || this.#background) return;
    const total = this.o.behind();
    if (total === 0) return;
    this.#background = { total, done: 0, reported: 0 };
    this.o.log?.info(`keyword index: indexing ${total} ${this.o.noun} from LMDB in the background`);
    // Failures are logged in #loop; a search awaiting the same drain sees them.
    this.#drain().catch(() => undefined);
  }

  /** Stops after the step in flight. */
  close(): void {
    this.#closed = true;
  }

  #drain(): Promise<void> {
    return (this.#draining ??= this.#loop().finally(() => {
      this.#draining = null;
    }));
  }

  /** Steps until caught up; a search's drain stops at SYNC_BUDGET unless it turned into the background one. */
  async #loop(): Promise<void> {
    let done = 0;
    try {
      while (!this.#closed && (this.#background || done < SYNC_BUDGET)) {
        const n = await this.o.step(this.o.stepSize);
        if (n === 0) break;
        done += n;
        const bg = this.#background;
        if (bg) {
          bg.done += n;
          if (bg.done - bg.reported >= 10_000) {
            bg.reported = bg.done;
            this.o.log?.info(`keyword index: ${bg.done} of ${bg.total} ${this.o.noun} indexed`);
          }
        }
        if (this.o.yields) await new Promise((r) => setImmediate(r));
      }
      const bg = this.#background;
      if (bg && this.#closed) this.o.log?.info(`keyword index: stopped by close at ${bg.done} of ${bg.total} ${this.o.noun} (the next start goes on)`);
      else if (bg) this.o.log?.info(`keyword index: caught up (${bg.done} ${this.o.noun})`);
    } catch (e) {
      this.o.log?.error({ err: e }, `keyword index: indexing ${this.o.noun} failed`);
      throw e;
    } finally {
      this.#background = null;
    }
  }
}
