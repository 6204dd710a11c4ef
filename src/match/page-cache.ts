/**
 * The result sets of recent `order=time` vector queries, by fingerprint, so the pages after
 * the first are slices of one computed set: cheap, and consistent with page one even while
 * articles arrive. A miss (evicted, or another process) recomputes, so cursors never depend
 * on it. Bounded LRU (a Map keeps insertion order; a hit re-inserts).
 */
export interface CachedRow {
  ord: number;
  /** event_time, Unix seconds */
  t: number;
  id: string;
  score: number;
  label: number;
}

export class PageCache {
  #entries = new Map<string, CachedRow[]>();

  constructor(readonly capacity: number) {}

  get(fingerprint: string): CachedRow[] | undefined {
    const rows = this.#entries.get(fingerprint);
    if (rows) {
      this.#entries.delete(fingerprint);
      this.#entries.set(fingerprint, rows);
    }
    return rows;
  }

  set(fingerprint: string, rows: CachedRow[]): void {
    if (this.capacity === 0) return;
    this.#entries.delete(fingerprint);
    this.#entries.set(fingerprint, rows);
    while (this.#entries.size > this.capacity) this.#entries.delete(this.#entries.keys().next().value!);
  }

  get size(): number {
    return this.#entries.size;
  }
}
