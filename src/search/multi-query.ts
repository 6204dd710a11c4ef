/**
 * Several query vectors asked as one (`like`: an article's chunk vectors): a revision's score
 * is its best cosine over every query vector × its own chunks. The engine answers one vector
 * at a time, so each vector runs its own range or top-k (issued in the same turn of the event
 * loop, they share passes and addon calls: engine.ts `Batcher`) and the answers merge by max
 * per revision. Both stay exact: see each function.
 */
import { AppError } from '../errors.js';
import type { Domain, Scored, VectorSearch } from './vector-search.js';

/** Best per revision over several answers; on an equal score the lower label (the earlier chunk) wins, so the merge is deterministic. */
function mergeMax(answers: Scored[][], skip: ReadonlySet<number>): Map<number, Scored> {
  const best = new Map<number, Scored>();
  for (const answer of answers) {
    for (const s of answer) {
      if (skip.has(s.ord)) continue;
      const had = best.get(s.ord);
      if (!had || s.score > had.score || (s.score === had.score && s.label < had.label)) best.set(s.ord, s);
    }
  }
  return best;
}

/**
 * Every revision in the domain (less `skip`) whose best score over `queries` is at least
 * `minScore`, unordered. Exact: a revision is in the union exactly when one query alone puts it
 * at or above the floor, and each range is exact. Past `maxMatches` merged rows it is
 * too_many_matches, as one query's range is.
 */
export async function rangeAny(search: VectorSearch, queries: Float32Array[], minScore: number, d: Domain, skip: ReadonlySet<number>): Promise<Scored[]> {
  const answers = await Promise.all(queries.map((q) => search.range(q, minScore, d)));
  const merged = mergeMax(answers, skip);
  if (merged.size > search.options.maxMatches) throw new AppError('too_many_matches', undefined, { extra: { matched_at_least: merged.size } });
  return [...merged.values()];
}

/**
 * The best `k` revisions in the domain (less `skip`) by their best score over `queries`, best
 * first. Each query asks for `k + skip.size`: a revision R of the true top k takes its score
 * from some query q, and were R missing from q's answer, q would rank `k + skip.size`
 * revisions at or above R, at least k of them not skipped and each at least as good overall as
 * R, so R was not in the top k (ties aside).
 */
export async function topKAny(
  search: VectorSearch,
  queries: Float32Array[],
  k: number,
  minScore: number,
  d: Domain,
  skip: ReadonlySet<number>,
): Promise<Scored[]> {
  const answers = await Promise.all(queries.map((q) => search.topK(q, k + skip.size, minScore, d)));
  return [...mergeMax(answers, skip).values()].sort((a, b) => b.score - a.score || a.ord - b.ord).slice(0, k);
}
