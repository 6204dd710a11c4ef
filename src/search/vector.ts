import { DIMS } from '../dims.js';

/** Dot product of two 1024-d vectors (cosine, when both are L2-normalised). */
export function dot(a: Float32Array, b: Float32Array): number {
  let s0 = 0,
    s1 = 0,
    s2 = 0,
    s3 = 0;
  // Four accumulators let V8 keep independent FMA chains in flight.
  for (let i = 0; i < DIMS; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  return s0 + s1 + s2 + s3;
}

/**
 * L2-normalises `values` into a new Float32Array. Returns null for a zero-length vector or one
 * with a non-finite component: neither has a direction to compare.
 */
export function normalise(values: ArrayLike<number>): Float32Array | null {
  // Scale by the largest magnitude first so squaring neither overflows nor underflows.
  let max = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!Number.isFinite(v)) return null;
    max = Math.max(max, Math.abs(v));
  }
  if (max === 0) return null;
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] / max;
    sum += v * v;
  }
  const inv = 1 / Math.sqrt(sum);
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = (values[i] / max) * inv;
  return out;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Decodes base64 of little-endian float32s; null unless it holds exactly `DIMS` of them. */
export function decodeVectorB64(b64: string): Float32Array | null {
  if (b64.length !== Math.ceil((DIMS * 4) / 3) * 4) return null;
  const bytes = Buffer.from(b64, 'base64');
  // Node skips characters outside the alphabet; a native round trip rejects them (a regex costs 10x).
  if (bytes.length !== DIMS * 4 || bytes.toString('base64') !== b64) return null;
  if (LITTLE_ENDIAN) return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  const out = new Float32Array(DIMS);
  for (let i = 0; i < DIMS; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}
