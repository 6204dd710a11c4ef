import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AppError } from '../errors.js';
import { CursorCodec, fingerprint } from './cursor.js';

const codec = new CursorCodec(randomBytes(32));
const fp = fingerprint({ order: 'time', min_score: 0.5, sources: ['A'] });
const pos = { t: 1_767_225_600, id: '0b7f1c9e-8a9b-4c1e-9f0e-2a6f3f7d1c11' };

const code = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    return e instanceof AppError ? `${e.status} ${e.code}` : String(e);
  }
  return undefined;
};

describe('cursor', () => {
  it('round-trips a position', () => {
    expect(codec.decode(codec.encode(pos, fp), fp)).toEqual(pos);
  });

  it('fingerprints ignore key order but not values', () => {
    expect(fingerprint({ a: 1, b: [2] })).toBe(fingerprint({ b: [2], a: 1 }));
    expect(fingerprint({ a: 1 })).not.toBe(fingerprint({ a: 2 }));
    expect(fingerprint({ a: undefined })).toBe(fingerprint({ a: null }));
  });

  it('rejects a cursor bound to other inputs', () => {
    const other = fingerprint({ order: 'time', min_score: 0.6, sources: ['A'] });
    expect(code(() => codec.decode(codec.encode(pos, fp), other))).toBe('400 bad_cursor');
  });

  it('rejects one signed with another secret', () => {
    const foreign = new CursorCodec(randomBytes(32)).encode(pos, fp);
    expect(code(() => codec.decode(foreign, fp))).toBe('400 bad_cursor');
  });

  it("rejects every single-character edit, the signature's last character included", () => {
    // Many secrets: base64url ignores the last character's low bits, so "A" → "B" there decodes
    // to the same bytes for about one signature in 16.
    for (let k = 0; k < 64; k++) {
      const other = new CursorCodec(randomBytes(32));
      const c = other.encode(pos, fp);
      for (let i = 0; i < c.length; i++) {
        const edited = c.slice(0, i) + (c[i] === 'A' ? 'B' : 'A') + c.slice(i + 1);
        expect(
          code(() => other.decode(edited, fp)),
          `edit at ${i} of ${c}`,
        ).toBe('400 bad_cursor');
      }
    }
  });

  it.each(['', '.', 'abc', 'a.b.c', '..', `${Buffer.from('{"v":1}').toString('base64url')}.x`])('rejects malformed %j', (c) => {
    expect(code(() => codec.decode(c, fp))).toBe('400 bad_cursor');
  });
});
