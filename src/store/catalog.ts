import type { RevisionRecord, Store } from './lmdb-store.js';

/**
 * The columns a vector query filters on, one entry per revision ord, held in typed arrays so
 * a filter pass over a million revisions costs milliseconds. Rebuilt from LMDB at start and
 * caught up from it before each query (an `import` in another process appends to LMDB).
 */
export class Catalog {
  size = 0;
  eventTime = new Float64Array(1024);
  sourceId = new Int32Array(1024);
  first = new Uint8Array(1024);
  labelStart = new Float64Array(1024);
  labelCount = new Uint32Array(1024);
  ids: string[] = [];
  /** label → ord; -1 for a label not seen yet */
  labelOrd = new Int32Array(4096).fill(-1);
  /** Labels 0 … labels-1 are all mapped. */
  labels = 0;

  /**
   * Catches up with LMDB: new revisions, and labels given to revisions stored earlier without
   * vectors (`Store.attachChunks`). Returns how many revisions were added.
   */
  catchUp(store: Store): number {
    const target = store.nextOrd();
    const labelTarget = store.nextLabel();
    if (target <= this.size && labelTarget <= this.labels) return 0;
    const added = Math.max(0, target - this.size);
    this.#reserve(target);
    if (labelTarget > this.labelOrd.length) this.labelOrd = grow(this.labelOrd, labelTarget, -1);
    for (const { key: ord, value: r } of store.revisions.getRange({ start: this.size, end: target })) this.#set(ord, r);
    this.size = Math.max(this.size, target);
    // Labels past the new revisions' ones belong to revisions embedded after they were stored.
    for (let label = this.labels; label < labelTarget; label++) {
      if (this.labelOrd[label] !== -1) continue;
      const ord = store.chunks.get(label)!.ord;
      this.#set(ord, store.revisions.get(ord)!);
    }
    this.labels = labelTarget;
    return added;
  }

  #set(ord: number, r: RevisionRecord): void {
    this.eventTime[ord] = r.eventTime;
    this.sourceId[ord] = r.sourceId;
    this.first[ord] = r.first ? 1 : 0;
    this.labelStart[ord] = r.labelStart;
    this.labelCount[ord] = r.labelCount;
    this.ids[ord] = r.id;
    this.labelOrd.fill(ord, r.labelStart, r.labelStart + r.labelCount);
  }

  #reserve(n: number): void {
    if (n <= this.eventTime.length) return;
    this.eventTime = grow(this.eventTime, n);
    this.sourceId = grow(this.sourceId, n);
    this.first = grow(this.first, n);
    this.labelStart = grow(this.labelStart, n);
    this.labelCount = grow(this.labelCount, n);
  }
}

type Typed = Float64Array | Int32Array | Uint8Array | Uint32Array;

function grow<T extends Typed>(a: T, n: number, fill = 0): T {
  const next = new (a.constructor as new (len: number) => T)(Math.max(n, a.length * 2));
  next.set(a);
  if (fill !== 0) next.fill(fill, a.length);
  return next;
}
