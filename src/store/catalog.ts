import fs from 'node:fs';
import type { RevisionRecord, Store } from './lmdb-store.js';

const MAGIC = 'newsmatch-catalog-1';
const UUID_LEN = 36;

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
  /** What `file` holds after a load or a save: a close with nothing new writes nothing (~0.3 s at 1M revisions). */
  #saved: { file: string; size: number; labels: number } | null = null;

  /**
   * `label`, or the first label of the revision it falls inside: the engine takes chunks in
   * slices, so a point of the ingest sequence in reach may cut a revision; a window of it (an
   * after_seq answer, a monitors' window) must hold each revision whole.
   */
  boundary(label: number, store: Store): number {
    const ord = label < this.labels ? this.labelOrd[label] : store.chunks.get(label)?.ord;
    if (ord === undefined) return label;
    return Math.min(ord < this.size ? this.labelStart[ord] : store.revisions.get(ord)!.labelStart, label);
  }

  /**
   * Catches up with LMDB: new revisions (at most `max` of them a call, so a caller on the event
   * loop can catch up a large import a slice at a time), then labels given to revisions stored
   * earlier without vectors (`Store.attachChunks`). Returns how many revisions were added.
   */
  catchUp(store: Store, max = Infinity): number {
    const target = store.nextOrd();
    const labelTarget = store.nextLabel();
    if (target <= this.size && labelTarget <= this.labels) return 0;
    const end = Math.min(target, this.size + max);
    const added = Math.max(0, end - this.size);
    this.#reserve(end);
    if (labelTarget > this.labelOrd.length) this.labelOrd = grow(this.labelOrd, labelTarget, -1);
    for (const { key: ord, value: r } of store.revisions.getRange({ start: this.size, end })) this.#set(ord, r);
    this.size = Math.max(this.size, end);
    // Labels wait until every revision is in: a later revision's labels are not mapped yet.
    if (this.size < target) return added;
    // Labels past the new revisions' ones belong to revisions embedded after they were stored.
    for (let label = this.labels; label < labelTarget; label++) {
      if (this.labelOrd[label] !== -1) continue;
      const ord = store.chunks.get(label)!.ord;
      this.#set(ord, store.revisions.get(ord)!);
    }
    this.labels = labelTarget;
    return added;
  }

  /**
   * Writes the columns to `file` (temp file + rename), so the next start reads them in tens of
   * milliseconds instead of decoding every revision record. A cache: LMDB stays the truth.
   * Nothing is written when `file` already holds these columns (loaded or saved, none added since).
   */
  save(file: string, store: Store): void {
    const s = this.#saved;
    if (s?.file === file && s.size === this.size && s.labels === this.labels && fs.existsSync(file)) return;
    const n = this.size;
    const header = Buffer.from(JSON.stringify({ magic: MAGIC, storeId: store.storeId(), size: n, labels: this.labels }));
    const parts: Buffer[] = [Buffer.from(new Uint32Array([header.length]).buffer), header];
    const col = (a: Float64Array | Int32Array | Uint8Array | Uint32Array, len: number) =>
      parts.push(Buffer.from(a.buffer, a.byteOffset, len * a.BYTES_PER_ELEMENT));
    col(this.eventTime, n);
    col(this.sourceId, n);
    col(this.labelStart, n);
    col(this.labelCount, n);
    col(this.labelOrd, this.labels);
    col(this.first, n);
    parts.push(Buffer.from(this.ids.slice(0, n).join(''), 'latin1'));
    const tmp = `${file}.tmp`;
    fs.writeFileSync(tmp, Buffer.concat(parts));
    fs.renameSync(tmp, file);
    this.#saved = { file, size: n, labels: this.labels };
  }

  /**
   * Loads columns saved by `save` for this store, then `catchUp` adds what came after. Revision
   * records only change by gaining chunks (`attachChunks`), whose labels are past any saved,
   * so a snapshot that is not ahead of the store and names the same newest revision is
   * current up to its size. Returns false (and loads nothing) for any other file.
   */
  load(file: string, store: Store): boolean {
    let buf: Buffer;
    try {
      buf = fs.readFileSync(file);
    } catch {
      return false;
    }
    try {
      const hlen = buf.readUInt32LE(0);
      const h = JSON.parse(buf.subarray(4, 4 + hlen).toString()) as { magic: string; storeId: string; size: number; labels: number };
      const n = h.size;
      const expected = 4 + hlen + n * (8 + 4 + 8 + 4 + 1 + UUID_LEN) + h.labels * 4;
      if (h.magic !== MAGIC || h.storeId !== store.storeId() || buf.length !== expected || n > store.nextOrd() || h.labels > store.nextLabel()) return false;
      // The column arrays need aligned copies (one each): the file's offsets are not multiples of 8.
      let at = 4 + hlen;
      const take = <T extends Typed>(C: new (len: number) => T, len: number, bytes: number): T => {
        const out = new C(len);
        new Uint8Array(out.buffer).set(buf.subarray(at, at + len * bytes));
        at += len * bytes;
        return out;
      };
      const eventTime = take(Float64Array, n, 8);
      const sourceId = take(Int32Array, n, 4);
      const labelStart = take(Float64Array, n, 8);
      const labelCount = take(Uint32Array, n, 4);
      const labelOrd = take(Int32Array, h.labels, 4);
      const first = take(Uint8Array, n, 1);
      const idText = buf.toString('latin1', at, at + n * UUID_LEN);
      const ids = new Array<string>(n);
      for (let i = 0; i < n; i++) ids[i] = idText.slice(i * UUID_LEN, (i + 1) * UUID_LEN);
      if (n > 0 && store.revisions.get(n - 1)?.id !== ids[n - 1]) return false;
      Object.assign(this, { eventTime, sourceId, labelStart, labelCount, labelOrd, first, ids, size: n, labels: h.labels });
      this.#saved = { file, size: n, labels: h.labels };
      this.#reserve(Math.max(n, 1024));
      if (this.labelOrd.length === 0) this.labelOrd = new Int32Array(4096).fill(-1);
      return true;
    } catch {
      return false;
    }
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
