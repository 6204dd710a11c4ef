import { describe, expect, it } from 'vitest';
import { ARENA_BYTES, ArenaPacker, RenderedMirror } from './rendered-mirror.js';

const value = (ord: number, n = 100) => Buffer.alloc(n, `v${ord};`);
/** Whether the mirror holds exactly `want` for `ord` (a boolean: vitest's diff of 300 KB buffers is slow). */
const holds = (m: RenderedMirror, ord: number, want: Buffer) => m.get(ord)?.equals(want) ?? false;

describe('RenderedMirror', () => {
  it('keeps each value as put or adopted, the first copy winning, across arenas', () => {
    const m = new RenderedMirror(64 * ARENA_BYTES);
    const packer = new ArenaPacker();
    const arenas = [];
    // ~3 arenas of 300 KB values, ords 0..29, then the last partial one.
    for (let ord = 0; ord < 30; ord++) {
      const full = packer.add(ord, value(ord, 300_000));
      if (full) arenas.push(full);
    }
    arenas.push(packer.take()!);
    expect(arenas.length).toBe(3);
    expect(packer.take()).toBeNull();
    m.put(5, value(500));
    for (const a of arenas) expect(m.adopt(a)).toBe(true);
    expect(m.count).toBe(30);
    expect(holds(m, 5, value(500))).toBe(true);
    for (let ord = 0; ord < 30; ord++) if (ord !== 5) expect(holds(m, ord, value(ord, 300_000))).toBe(true);
    // Put into the tail arena, past the adopted ones, and a sparse ord far beyond the rest.
    m.put(100_000, value(7, 2_000_000 - 1));
    expect(m.get(100_000)).toBeUndefined();
    m.put(100_000, value(7, 1_000));
    expect(holds(m, 100_000, value(7, 1_000))).toBe(true);
    expect(m.get(99_999)).toBeUndefined();
    m.drop(3);
    expect(m.get(3)).toBeUndefined();
    expect(m.count).toBe(30);
    m.put(3, value(33));
    expect(holds(m, 3, value(33))).toBe(true);
  });

  it('a view whose length is shorter than its buffer is copied as its length says (lmdb-js fast reads)', () => {
    const m = new RenderedMirror(ARENA_BYTES);
    const big = value(1, 1000);
    Object.defineProperty(big, 'length', { value: 10 });
    m.put(1, big);
    expect(holds(m, 1, value(1, 10))).toBe(true);
  });

  it('stops growing at its cap', () => {
    const m = new RenderedMirror(2 * ARENA_BYTES);
    for (let ord = 0; ord < 40; ord++) m.put(ord, value(ord, 300_000));
    expect(m.bytes).toBe(2 * ARENA_BYTES);
    expect(m.count).toBe(26);
    expect(holds(m, 25, value(25, 300_000))).toBe(true);
    expect(m.get(26)).toBeUndefined();
    const packer = new ArenaPacker();
    packer.add(50, value(50));
    expect(m.adopt(packer.take()!)).toBe(false);
    expect(m.get(50)).toBeUndefined();
  });
});
