/**
 * parseJsonBody reads a body as JSON.parse does, a long top-level `vector` of numbers through
 * the addon: the same value (numbers bit for bit, -0 included) or the same error, for bodies
 * written by hand around the fast path's edges and for thousands of random mutations of one.
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../test/helpers/rng.js';
import { native } from '../native.js';
import { parseJsonBody } from './json-body.js';

/**
 * A value as text, every key in its order (own `__proto__` and `constructor` members included),
 * -0 told from 0 and numbers written in full; or the error's message.
 */
function outcome(parse: () => unknown): string {
  try {
    const value = parse();
    const proto = value !== null && typeof value === 'object' && Object.getPrototypeOf(value) !== Object.prototype ? ' (odd prototype)' : '';
    return `${JSON.stringify(value, (_k, v) => (typeof v === 'number' ? (Object.is(v, -0) ? '-0' : v.toPrecision(17)) : v))}${proto}`;
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
}

/** The same value, bit for bit, or the same error as JSON.parse. */
function expectSame(text: string, what = text.slice(0, 80)): void {
  expect(
    outcome(() => parseJsonBody(Buffer.from(text))),
    what,
  ).toBe(outcome(() => (text.trim() === '' ? undefined : JSON.parse(text))));
}

const rng = new Rng(20);
/** Numbers as clients write them: float32 values printed as doubles, short decimals, exponents, integers. */
function numbers(n: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    const x = (rng.next() - 0.5) * 0.2;
    switch (i % 6) {
      case 0:
        return String(Math.fround(x));
      case 1:
        return x.toFixed(6);
      case 2:
        return x.toExponential(9);
      case 3:
        return x.toExponential(3).replace('e', 'E');
      case 4:
        return String(Math.round(x * 1000));
      default:
        return String(x);
    }
  });
}
const vec = (n = 1024) => `[${numbers(n).join(',')}]`;

describe('parseJsonBody', () => {
  it('takes the fast path for a usual match body, and reads it as JSON.parse does', () => {
    const text = `{"vector":${vec()},"order":"relevance","limit":50}`;
    expect(native.vectorMember(Buffer.from(text))).not.toBeNull();
    expectSame(text);
    // Values bit for bit, the array a plain array.
    const got = parseJsonBody(Buffer.from(text)) as { vector: number[] };
    expect(Array.isArray(got.vector)).toBe(true);
    expect(Object.keys(got)).toEqual(['vector', 'order', 'limit']);
  });

  it('reads the edges as JSON.parse does', () => {
    const v = vec(300);
    const cases = [
      `{"order":"time","vector":${v}}`,
      ` \n\t{ "limit" : 5 , "vector" :\r\n [ ${numbers(300).join(' ,\n ')} ] , "x":{"vector":[1,2]} } \n`,
      // Multi-byte text before the array (byte offsets are not string offsets).
      `{"text":"é — 東京 🙂 \\" \\\\ ]","vector":${v},"sources":["a]","b"]}`,
      // Number forms at the grammar's edges.
      `{"vector":[-0,0,-0.0,1e-5,1E+5,12345678901234567890,0.1e1,-1.5e-7,4.9e-324,1.7976931348623157e308,${v.slice(1)}}`,
      `{"vector":[1e400,${v.slice(1)}}`,
      `{"vector":[1e-400,${v.slice(1)}}`,
      // Two "vector" members (the last wins), one written with an escape, one nested or in a string.
      `{"vector":${v},"vector":[1,2,3]}`,
      `{"vector":${v},"vec\\u0074or":[4]}`,
      `{"a":"\\"vector\\":[9,9]","vector":${v}}`,
      `{"__proto__":{"x":1},"constructor":{"prototype":{"y":2}},"vector":${v}}`,
      `{"vector":${v},"__proto__":[1]}`,
      // Not numbers only: left to JSON.parse whole.
      `{"vector":[${numbers(300).join(',')},"1"]}`,
      `{"vector":[${numbers(300).join(',')},[1]]}`,
      `{"vector":[${numbers(300).join(',')},null]}`,
      `{"vector":[],"pad":"${'x'.repeat(3000)}"}`,
      // Malformed: JSON.parse's own error, positions and all.
      `{"vector":[01,${v.slice(1)}}`,
      `{"vector":[.5,${v.slice(1)}}`,
      `{"vector":[5.,${v.slice(1)}}`,
      `{"vector":[+5,${v.slice(1)}}`,
      `{"vector":[NaN,${v.slice(1)}}`,
      `{"vector":[Infinity,${v.slice(1)}}`,
      `{"vector":[0x10,${v.slice(1)}}`,
      `{"vector":[1,,2,${v.slice(1)}}`,
      `{"vector":${v.slice(0, -1)},]}`,
      `{"vector":${v},}`,
      `{"vector":${v}} trailing`,
      `{"vector":${v}`,
      `{"vector":${v},"order":"relevance",}`,
      `{"vector":${v},"limit":05}`,
      `{"vector":${v},"order":'time'}`,
      `{vector:${v}}`,
      `[${v}]`,
      `\ufeff{"vector":${v}}`,
      `{"vector":${v},"x":"\u0001"}`,
      '',
      '   \n',
    ];
    for (const text of cases) expectSame(text);
  });

  it('reads random mutations of a match body as JSON.parse does', () => {
    const base = `{"text":"ü","vector":${vec(200)},"order":"relevance","limit":50,"sources":["a","b"]}`;
    const pieces = ['"', ',', ':', '[', ']', '{', '}', '-', '.', 'e', '0', '1', ' ', '\\', 'vector', '"vector":', '+', 'E', 'n', '\n'];
    let fast = 0;
    for (let round = 0; round < 3000; round++) {
      let text = base;
      for (let m = 1 + Math.floor(rng.next() * 3); m > 0; m--) {
        const at = Math.floor(rng.next() * text.length);
        const piece = pieces[Math.floor(rng.next() * pieces.length)];
        const op = rng.next();
        if (op < 0.4) text = text.slice(0, at) + text.slice(at + 1);
        else if (op < 0.7) text = text.slice(0, at) + piece + text.slice(at);
        else text = text.slice(0, at) + piece + text.slice(at + 1);
      }
      if (native.vectorMember(Buffer.from(text))) fast++;
      expectSame(text, `round ${round}: ${text.slice(0, 60)}`);
    }
    // Both paths were exercised.
    expect(fast).toBeGreaterThan(300);
    expect(fast).toBeLessThan(3000);
  });
});
