/**
 * A JSON request body, parsed. A `/v1/match` body is mostly its `vector`: 1,024 numbers that
 * JSON.parse read at ~100 ns each, the largest part of a relevance request's event-loop time
 * after the LMDB reads (README, "Search: how a query is answered", *The body.*). Its top-level `vector` of
 * numbers is read from the bytes by the addon (`native.vectorMember`, correctly rounded, as
 * JSON.parse reads them), the rest by JSON.parse with `[]` in the array's place. Anything else
 * (no such member, two, a key written with an escape, a number JSON.parse would make infinite)
 * is JSON.parse's alone, and so is every error: a malformed body fails as JSON.parse fails it.
 */
import { native } from '../native.js';

/** Smaller bodies go straight to JSON.parse: the detour only pays on a long array. */
const MIN_BYTES = 2048;
const EMPTY = Buffer.from('[]');

/** The body as JSON.parse reads it; undefined for an empty or all-whitespace body. Throws JSON.parse's SyntaxError. */
export function parseJsonBody(body: Buffer): unknown {
  const member = body.length >= MIN_BYTES ? native.vectorMember(body) : null;
  if (member) {
    const rest = Buffer.concat([body.subarray(0, member.start), EMPTY, body.subarray(member.end)]);
    let parsed: { vector: unknown };
    try {
      parsed = JSON.parse(rest.toString('utf8'));
    } catch {
      // The error as the whole body gives it (its positions are the body's).
      return JSON.parse(body.toString('utf8'));
    }
    // An own property already (the `[]` put in its place): replaced, as JSON.parse would have
    // set it. Copied by index: Array.from walks a typed array's iterator, ten times slower.
    const { values } = member;
    const vector = new Array<number>(values.length);
    for (let i = 0; i < values.length; i++) vector[i] = values[i];
    parsed.vector = vector;
    return parsed;
  }
  const text = body.toString('utf8');
  return text.trim() === '' ? undefined : JSON.parse(text);
}
