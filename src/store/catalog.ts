import type { Store } from './lmdb-store.js';

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
  /** label → ord */
  labelOrd = new Int32Array(4096);

  /** Appends every revision LMDB has that this catalog has not seen yet. Returns how many. */
  catchUp(store: Store): number {
    const target = store.nextOrd();
    if (target <= this.size) return 0;
    const added = target - this.size;
    this.#reserve(target);
    for (const { key: ord, value: r } of store.revisions.getRange({ start: this.size, end: target })) {
      this.eventTime[ord] = r.eventTime;
      this.sourceId[ord] = r.sourceId;
      this.first[ord] = r.first ? 1 : 0;
      this.labelStart[ord] = r.labelStart;
      this.labelCount[ord] = r.labelCount;
      this.ids[ord] = r.id;
      const end = r.labelStart + r.labelCount;
      if (end > this.labelOrd.length) this.labelOrd = grow(this.labelOrd, end);
      this.labelOrd.fill(ord, r.labelStart, end);
    }
    this.size = target;
    return added;
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

function grow<T extends Typed>(a: T, n: number): T {
  const next = new (a.constructor as new (len: number) => T)(Math.max(n, a.length * 2));
  next.set(a);
  return next;
}
