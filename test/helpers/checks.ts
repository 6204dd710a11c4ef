/** Assertions that compare returned match items with the corpus and the oracle. */
import { expect } from 'vitest';
import type { Corpus, RevisionRec } from './corpus.js';
import { chunkScores, itemKey, revisionIndex } from './oracle.js';
import { expectItemShape } from './service.js';

export const SCORE_TOL = 1e-3;

const indexes = new WeakMap<Corpus, Map<string, RevisionRec>>();

export function revisionOf(corpus: Corpus, item: { source_url: string; event_time: string }): RevisionRec | undefined {
  let idx = indexes.get(corpus);
  if (!idx) {
    idx = revisionIndex(corpus);
    indexes.set(corpus, idx);
  }
  return idx.get(itemKey(item));
}

/**
 * Every item is a known revision with its own title, snippet and source; with a query, its
 * score is the max cosine over that revision's own chunks (within 1e-3) and best_chunk is the
 * text of that chunk (or of one within 1e-3 of it). Returns the largest score error seen.
 */
export function checkItems(corpus: Corpus, query: Float64Array | null, items: any[]): number {
  let maxErr = 0;
  for (const it of items) {
    expectItemShape(it, query !== null);
    const rev = revisionOf(corpus, it);
    expect(rev, `item ${it.source_url} @ ${it.event_time} is not a revision of the corpus`).toBeDefined();
    if (!rev) continue;
    expect(it.title).toBe(rev.title);
    expect(it.body).toBe(rev.snippet);
    expect(it.source_name).toBe(rev.source);
    if (query) {
      const cs = chunkScores(rev, query);
      const best = Math.max(...cs.map((c) => c.score));
      const err = Math.abs(it.score - best);
      maxErr = Math.max(maxErr, err);
      expect(err, `score of ${it.source_url} @ ${it.event_time}: got ${it.score}, oracle ${best}`).toBeLessThanOrEqual(SCORE_TOL);
      const okTexts = cs.filter((c) => c.score >= best - SCORE_TOL).map((c) => c.text);
      expect(okTexts, `best_chunk of ${it.source_url} @ ${it.event_time}`).toContain(it.best_chunk);
    }
  }
  return maxErr;
}

/** Page sizes: every page but the last is full (no silent truncation). */
export function expectFullPages(pages: { count: number; limit: number; next_cursor: string | null }[]): void {
  pages.forEach((p, i) => {
    if (p.next_cursor !== null) expect(p.count, `page ${i + 1} of ${pages.length} under-filled`).toBe(p.limit);
  });
}
