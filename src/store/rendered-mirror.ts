/**
 * The rendered revisions (`Store.rendered`) kept in memory beside LMDB, which stays the source
 * of truth: a match response reads 50 of them, and under relevance load each LMDB read cost
 * 2.6–5 µs on the event loop (a B-tree walk whose pages the engine's sweeps keep evicting from
 * the caches, in an 8 GB map at 1M chunks), where a copy here is one or two cache misses. The
 * README's "The response" has the figures.
 *
 * Values live in 4 MiB arenas outside the JS heap, so the garbage collector never walks them;
 * an ord maps to its arena offset and length. Nothing is evicted: once `capBytes` is reached
 * the mirror stops growing and the rest is read from LMDB. A value can go stale only where it
 * was copied before its revision's chunks were attached (`Store.attachChunks` drops it; a
 * write by another process does not): its article object never changes, and a label outside
 * its chunks sends the reader back to LMDB (`Store.rendered`).
 */
import type { MessagePort } from 'node:worker_threads';

export const ARENA_BYTES = 4 << 20;
/** A larger value (a very long article) is left to LMDB rather than waste most of an arena. */
const MAX_VALUE_BYTES = ARENA_BYTES >> 2;

/** A filler thread's arena: values packed from offset 0, each ord's offset and length beside it. */
export interface MirrorArena {
  buffer: ArrayBuffer;
  ords: Uint32Array;
  offsets: Uint32Array;
  lengths: Uint32Array;
}

/** What the filler thread (rendered-fill-worker.ts) is given: the store, the cap, a stop flag, and where to send arenas. */
export interface FillTask {
  path: string;
  capBytes: number;
  stop: Int32Array;
  port: MessagePort;
}

export class RenderedMirror {
  readonly capBytes: number;
  /** Bytes of arenas allocated (what the mirror costs in memory). */
  bytes = 0;
  /** Ords mirrored. */
  count = 0;
  readonly #arenas: Buffer[] = [];
  /** arena index * ARENA_BYTES + offset, by ord. */
  #pos = new Float64Array(0);
  /** Value length by ord; 0: not mirrored. */
  #len = new Uint32Array(0);
  /** The arena `put` copies into (adopted ones come full): its index (-1: none yet) and bytes used. */
  #tail = -1;
  #tailUsed = 0;

  constructor(capBytes: number) {
    this.capBytes = capBytes;
  }

  get(ord: number): Buffer | undefined {
    const n = ord < this.#len.length ? this.#len[ord] : 0;
    if (n === 0) return undefined;
    const p = this.#pos[ord];
    const a = Math.floor(p / ARENA_BYTES);
    const off = p - a * ARENA_BYTES;
    return this.#arenas[a].subarray(off, off + n);
  }

  has(ord: number): boolean {
    return ord < this.#len.length && this.#len[ord] !== 0;
  }

  /** Copies `value` in as `ord`'s, unless it is there already, too large, or the cap is reached. */
  put(ord: number, value: Uint8Array): void {
    const n = value.length;
    if (n === 0 || n > MAX_VALUE_BYTES || this.has(ord)) return;
    if (this.#tail < 0 || this.#tailUsed + n > ARENA_BYTES) {
      if (!this.#addArena(Buffer.allocUnsafeSlow(ARENA_BYTES))) return;
      this.#tail = this.#arenas.length - 1;
      this.#tailUsed = 0;
    }
    // A view of `n` bytes: lmdb-js's fast reads return its whole read buffer with `length` set to the value's.
    this.#arenas[this.#tail].set(value.subarray(0, n), this.#tailUsed);
    this.#set(ord, this.#tail * ARENA_BYTES + this.#tailUsed, n);
    this.#tailUsed += n;
  }

  /** Takes a filler thread's arena whole (no copy); its ords mirrored already keep their copy. */
  adopt(arena: MirrorArena): boolean {
    if (!this.#addArena(Buffer.from(arena.buffer))) return false;
    const base = (this.#arenas.length - 1) * ARENA_BYTES;
    for (let i = 0; i < arena.ords.length; i++) {
      if (!this.has(arena.ords[i])) this.#set(arena.ords[i], base + arena.offsets[i], arena.lengths[i]);
    }
    return true;
  }

  /** Forgets `ord`'s copy (its value changed); its bytes stay in their arena, unused. */
  drop(ord: number): void {
    if (!this.has(ord)) return;
    this.#len[ord] = 0;
    this.count--;
  }

  /** Adds an arena, if another fits under the cap. */
  #addArena(b: Buffer): boolean {
    if (this.bytes + ARENA_BYTES > this.capBytes) return false;
    this.#arenas.push(b);
    this.bytes += ARENA_BYTES;
    return true;
  }

  #set(ord: number, pos: number, n: number): void {
    if (ord >= this.#len.length) {
      const size = Math.max(1024, ord + 1, this.#len.length * 2);
      const pos2 = new Float64Array(size);
      pos2.set(this.#pos);
      const len2 = new Uint32Array(size);
      len2.set(this.#len);
      this.#pos = pos2;
      this.#len = len2;
    }
    this.#pos[ord] = pos;
    this.#len[ord] = n;
    this.count++;
  }
}

/** Packs values into arenas for `RenderedMirror.adopt`, as a filler thread reads them. */
export class ArenaPacker {
  #buffer = new ArrayBuffer(ARENA_BYTES);
  #bytes = new Uint8Array(this.#buffer);
  #used = 0;
  #ords: number[] = [];
  #offsets: number[] = [];
  #lengths: number[] = [];

  /** Adds a value; returns the full arena it closed to make room, if any. Values too large for the mirror are skipped. */
  add(ord: number, value: Uint8Array): MirrorArena | null {
    const n = value.length;
    if (n === 0 || n > MAX_VALUE_BYTES) return null;
    const full = this.#used + n > ARENA_BYTES ? this.take() : null;
    this.#bytes.set(value, this.#used);
    this.#ords.push(ord);
    this.#offsets.push(this.#used);
    this.#lengths.push(n);
    this.#used += n;
    return full;
  }

  /** The arena so far (null when empty), and a fresh one started. */
  take(): MirrorArena | null {
    if (this.#ords.length === 0) return null;
    const out = {
      buffer: this.#buffer,
      ords: Uint32Array.from(this.#ords),
      offsets: Uint32Array.from(this.#offsets),
      lengths: Uint32Array.from(this.#lengths),
    };
    this.#buffer = new ArrayBuffer(ARENA_BYTES);
    this.#bytes = new Uint8Array(this.#buffer);
    this.#used = 0;
    this.#ords = [];
    this.#offsets = [];
    this.#lengths = [];
    return out;
  }
}
