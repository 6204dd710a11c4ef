/**
 * A revision as the revision log carries it: everything a node needs to store it as the writer
 * decided it (id, event time, first flag) and what the next writer of its article decides
 * against (`history`). Layout: a little-endian u32 length, that many bytes of JSON (all but the
 * vectors), then each chunk's 1,024 float32 vector, little-endian, in chunk order.
 */
import { DIMS } from '../dims.js';
import type { DecidedRevision, RevisionChunk } from '../store/index.js';

export interface LoggedRevision {
  id: string;
  url: string;
  source: string;
  homepage?: string;
  title: string;
  body: string;
  text: string;
  /** Unix seconds. */
  eventTime: number;
  first: boolean;
  hash: string;
  /** Every revision of the article so far, this one last, first first. */
  history: { hash: string; eventTime: number }[];
  chunks: RevisionChunk[];
}

interface Head extends Omit<LoggedRevision, 'chunks'> {
  v: 1;
  chunkTexts: string[];
}

const VECTOR_BYTES = DIMS * 4;

export function encodeRevision(r: LoggedRevision): Uint8Array {
  const { chunks, ...rest } = r;
  const head: Head = { v: 1, ...rest, chunkTexts: chunks.map((c) => c.text) };
  const json = Buffer.from(JSON.stringify(head));
  const out = Buffer.allocUnsafe(4 + json.length + chunks.length * VECTOR_BYTES);
  out.writeUInt32LE(json.length, 0);
  json.copy(out, 4);
  let pos = 4 + json.length;
  for (const c of chunks) {
    if (c.vector.length !== DIMS) throw new Error(`a chunk vector has ${c.vector.length} dimensions, not ${DIMS}`);
    Buffer.from(c.vector.buffer, c.vector.byteOffset, VECTOR_BYTES).copy(out, pos);
    pos += VECTOR_BYTES;
  }
  return out;
}

/** The JSON part alone: what a writer deciding the article's next revision needs. */
export function decodeHistory(bytes: Uint8Array): Pick<LoggedRevision, 'id' | 'source' | 'history'> {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const head = JSON.parse(b.toString('utf8', 4, 4 + b.readUInt32LE(0))) as Head;
  return { id: head.id, source: head.source, history: head.history };
}

export function decodeRevision(bytes: Uint8Array): LoggedRevision {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const len = b.readUInt32LE(0);
  const { v, chunkTexts, ...rest } = JSON.parse(b.toString('utf8', 4, 4 + len)) as Head;
  if (v !== 1) throw new Error(`a revision log record of version ${v}: this node reads version 1 (upgrade it)`);
  if (b.length !== 4 + len + chunkTexts.length * VECTOR_BYTES) throw new Error(`revision ${rest.id} in the log is damaged: its length does not fit its chunks`);
  const chunks = chunkTexts.map((text, i) => {
    // A copy: the message's buffer is not kept, and the store reads aligned float32s.
    const vector = new Float32Array(DIMS);
    Buffer.from(vector.buffer).set(b.subarray(4 + len + i * VECTOR_BYTES, 4 + len + (i + 1) * VECTOR_BYTES));
    return { text, vector };
  });
  return { ...rest, chunks };
}

/** What `Store.applyDecided` stores for a logged revision. */
export function decided(r: LoggedRevision): DecidedRevision {
  return {
    id: r.id,
    eventTime: r.eventTime,
    first: r.first,
    hash: r.hash,
    input: {
      url: r.url,
      source: r.source,
      sourceHomepage: r.homepage,
      title: r.title,
      body: r.body,
      text: r.text,
      publishedAt: r.history[0].eventTime,
      chunks: r.chunks,
    },
  };
}
