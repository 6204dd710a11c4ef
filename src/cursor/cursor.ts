/**
 * Keyset cursors: an opaque, HMAC-signed token binding a position (event_time, id) to a
 * fingerprint of every request input but `limit`. Editing one, inventing one, or reusing it
 * with other inputs fails verification (400 bad_cursor).
 *
 * Wire form: base64url(JSON {"v":1,"t":1717243200,"id":"…","f":"<fingerprint>"}) "." base64url(HMAC-SHA256);
 * a page of an `after_seq` walk adds "s", the sequence its result set ends at.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors.js';

export interface Position {
  /** event_time, Unix seconds */
  t: number;
  id: string;
  /** The ingest sequence the paged set ends at (after_seq walks): later pages see the same set. */
  seq?: number;
}

/** A stable hash of the inputs a cursor is bound to (key order does not matter). */
export function fingerprint(inputs: Record<string, unknown>): string {
  const canonical = JSON.stringify(
    Object.keys(inputs)
      .sort()
      .map((k) => [k, inputs[k] ?? null]),
  );
  return createHash('sha256').update(canonical).digest('base64url');
}

export class CursorCodec {
  constructor(readonly secret: Buffer) {}

  encode(pos: Position, fp: string): string {
    const payload = Buffer.from(JSON.stringify({ v: 1, t: pos.t, id: pos.id, f: fp, ...(pos.seq !== undefined && { s: pos.seq }) })).toString('base64url');
    return `${payload}.${this.#sign(payload)}`;
  }

  /** The position a cursor carries, or bad_cursor if it is malformed, forged or bound to other inputs. */
  decode(cursor: string, fp: string): Position {
    const bad = (why: string) => new AppError('bad_cursor', `cursor ${why}`);
    if (cursor.length > 1024) throw bad('is malformed');
    const dot = cursor.indexOf('.');
    if (dot <= 0 || cursor.indexOf('.', dot + 1) !== -1) throw bad('is malformed');
    const payload = cursor.slice(0, dot);
    // The signature's text, not its decoded bytes: base64url ignores the last character's low
    // bits, so a decoded comparison would accept a cursor with that character edited.
    const given = Buffer.from(cursor.slice(dot + 1));
    const expected = Buffer.from(this.#sign(payload));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw bad('was not issued by this service');
    let body: unknown;
    try {
      body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw bad('is malformed');
    }
    const b = body as { v?: unknown; t?: unknown; id?: unknown; f?: unknown; s?: unknown };
    if (b.v !== 1 || typeof b.t !== 'number' || !Number.isFinite(b.t) || typeof b.id !== 'string' || typeof b.f !== 'string') {
      throw bad('is malformed');
    }
    if (b.s !== undefined && !(Number.isSafeInteger(b.s) && (b.s as number) >= 0)) throw bad('is malformed');
    if (b.f !== fp) throw bad('was issued for other request inputs; only limit may change between pages');
    return b.s === undefined ? { t: b.t, id: b.id } : { t: b.t, id: b.id, seq: b.s as number };
  }

  #sign(payload: string): string {
    return createHmac('sha256', this.secret).update(payload).digest('base64url');
  }
}
