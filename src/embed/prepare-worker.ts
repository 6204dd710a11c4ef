/**
 * A Piscina worker that turns revisions into what the embedding workers run: chunks (ICU
 * sentences grouped by token counts) and their token ids. Off the event loop, as
 * text-embeddings-inference keeps tokenisation off its router: for feed text this costs about
 * as much main-thread time as the LMDB commit of the result, and HTTP requests would wait
 * behind it.
 *
 * workerData: { modelDir, maxTokens }
 */
import { workerData } from 'piscina';
import { chunkRevision, type ChunkOptions } from './chunk.js';
import { TextTokenizer } from './tokenizer.js';

export interface PrepareTask {
  docs: { title: string; text: string }[];
  minTokens: number;
  maxTokens: number;
}

export interface Prepared {
  /** Each doc's chunk texts, headline first. */
  chunks: string[][];
  /** Every chunk's ids (`<s>` … `</s>`), back to back, in order. */
  ids: Int32Array;
  /** Ids per chunk. */
  lengths: Int32Array;
}

const { modelDir, maxTokens } = workerData as { modelDir: string; maxTokens: number };
const tokenizer = TextTokenizer.load(modelDir, maxTokens);

export default function prepare(task: PrepareTask): Prepared {
  const options: ChunkOptions = {
    countTokens: (t) => tokenizer.count(t),
    additiveAtSpaces: tokenizer.additiveAtSpaces,
    minTokens: task.minTokens,
    maxTokens: task.maxTokens,
  };
  const chunks = task.docs.map((d) => chunkRevision(d.title, d.text, options));
  const encoded = chunks.flat().map((t) => tokenizer.encode(t));
  const lengths = Int32Array.from(encoded, (e) => e.length);
  const ids = new Int32Array(lengths.reduce((a, n) => a + n, 0));
  let at = 0;
  for (const e of encoded) {
    ids.set(e, at);
    at += e.length;
  }
  return { chunks, ids, lengths };
}
