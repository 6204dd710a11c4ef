/**
 * Embedding stored revisions: chunk each (headline, then sentence groups of its text), embed
 * every chunk through the bulk lane, and attach the chunks in one durable LMDB transaction per
 * batch. Used by `import` for lines without chunks and by `newsmatch embed` for the backlog
 * (revisions stored while text mode was off). Resumable: a revision leaves the backlog only
 * when its chunks are committed.
 */
import type { Store } from '../store/index.js';
import type { ChunkSettings, Embedder } from './embedder.js';

/** The text a revision is chunked from: the snippet stands in for a text never stored (a feed item without its page). */
export const textOf = (snippet: string, text: string | undefined): string => text || snippet;

/** Revisions embedded per transaction: large enough to batch well, small enough to lose little. */
const REVISIONS_PER_BATCH = 64;

/** Embeds the given stored revisions that have no vectors. Returns the chunks added. */
export async function embedRevisions(store: Store, embedder: Embedder, ords: number[], chunking: ChunkSettings): Promise<number> {
  let added = 0;
  for (let i = 0; i < ords.length; i += REVISIONS_PER_BATCH) {
    const docs = ords.slice(i, i + REVISIONS_PER_BATCH).flatMap((ord) => {
      const rev = store.revisions.get(ord);
      if (!rev || rev.labelCount > 0) return [];
      return [{ ord, title: rev.title, text: textOf(rev.body, store.texts.get(ord)) }];
    });
    const chunks = await embedder.embedDocs(docs, chunking);
    const items = docs.map(({ ord }, j) => ({ ord, chunks: chunks[j] })).filter((item) => item.chunks.length > 0);
    const done = new Set(store.attachChunks(items));
    for (const item of items) if (done.has(item.ord)) added += item.chunks.length;
  }
  return added;
}

/**
 * Embeds every revision stored without vectors, in ord order, `onProgress(done, total)` after
 * each batch. Safe to interrupt and run again.
 */
export async function embedBacklog(
  store: Store,
  embedder: Embedder,
  chunking: ChunkSettings,
  onProgress?: (done: number, total: number) => void,
): Promise<{ revisions: number; chunks: number }> {
  const total = store.unembeddedCount();
  let revisions = 0;
  let chunks = 0;
  let after = -1;
  for (;;) {
    const ords = store.unembeddedOrds(REVISIONS_PER_BATCH, after);
    if (ords.length === 0) break;
    chunks += await embedRevisions(store, embedder, ords, chunking);
    revisions += ords.length;
    after = ords[ords.length - 1];
    onProgress?.(revisions, total);
  }
  return { revisions, chunks };
}
