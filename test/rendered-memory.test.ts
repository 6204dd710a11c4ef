/**
 * The rendered articles kept in memory (RENDERED_MEMORY_MB, README "The rendered articles in
 * memory"): match responses read them from the copy and are byte for byte what LMDB gives
 * without it.
 */
import { describe, expect, it } from 'vitest';
import { makeQuery, vec, type QueryKind } from './helpers/oracle.js';
import { Rng } from './helpers/rng.js';
import { SMALL, startHarness, type Harness } from './helpers/service.js';

describe('match responses with the rendered articles in memory', () => {
  it('are the same responses as LMDB alone gives, the second time from memory', async () => {
    const withCopy = await startHarness({ corpus: SMALL });
    try {
      const without = await startHarness({ corpus: SMALL, env: { RENDERED_MEMORY_MB: '0' } });
      try {
        await compare(withCopy, without);
      } finally {
        await without.close();
      }
    } finally {
      await withCopy.close();
    }
  });
});

/** The same relevance queries against both: equal items, and the second ask read from the copy. */
async function compare(withCopy: Harness, without: Harness): Promise<void> {
  const rng = new Rng(11);
  // Two data directories give revisions different ids: compare everything else.
  const strip = (res: { body: { items: { id: string }[] } }) => res.body.items.map(({ id, ...rest }) => rest);
  expect(without.service.store.mirrored()).toBeNull();
  for (const kind of ['story', 'topic', 'off-topic'] as QueryKind[]) {
    const body = { vector: vec(makeQuery(withCopy.corpus!, rng, kind)), order: 'relevance', limit: 50, min_score: -1, include_edits: true };
    const first = await withCopy.match(body);
    expect(first.status).toBe(200);
    const mirrored = withCopy.service.store.mirrored()!.count;
    expect(mirrored).toBeGreaterThan(0);
    const again = await withCopy.match(body);
    const plain = await without.match(body);
    expect(again.raw).toBe(first.raw);
    expect(strip(again)).toEqual(strip(plain));
    expect(strip(again).length).toBe(50);
    // Read the second time from the copy: nothing new copied.
    expect(withCopy.service.store.mirrored()!.count).toBe(mirrored);
  }
}
