/**
 * `like`: "more like this" for a stored article (README, "Query"). The id is any revision's
 * `id` as a match item shows it; the query is the chunk vectors of that article's latest
 * revision, read from LMDB, and every revision of the article is left out of the answer (it
 * would match itself at 1.0; Exa's findSimilar leaves the source out too).
 */
import { AppError } from '../errors.js';
import type { Store } from '../store/index.js';

export interface LikeQuery {
  /** The latest revision's chunk vectors, L2-normalised as stored: one query vector each. */
  vectors: Float32Array[];
  /** Ords of every revision of the liked article. */
  exclude: Set<number>;
}

/** Ords of every revision of the article one of whose revisions has id `id`, oldest first (undefined: no such revision). */
export function articleOrds(store: Store, id: string): number[] | undefined {
  const ord = store.revIds.get(id);
  return ord === undefined ? undefined : store.articles.get(store.revisions.get(ord)!.url)!.ords;
}

/** The query for `like: id`; 422 unknown_article for an id no revision has, 422 article_not_embedded for one stored without vectors. */
export function likeQuery(store: Store, id: string): LikeQuery {
  const ords = articleOrds(store, id);
  if (ords === undefined)
    throw new AppError('unknown_article', `like: no article has the id ${JSON.stringify(id)} (use an item's id from /v1/match or /v1/news)`);
  const latest = store.revisions.get(ords[ords.length - 1])!;
  if (latest.labelCount === 0) {
    throw new AppError(
      'article_not_embedded',
      `like: article ${JSON.stringify(id)} is stored without vectors (imported while text mode was off); run \`newsmatch embed\``,
    );
  }
  const vectors: Float32Array[] = [];
  // store.vector() is a view valid until the next read: copy each.
  for (let label = latest.labelStart; label < latest.labelStart + latest.labelCount; label++) vectors.push(new Float32Array(store.vector(label)));
  return { vectors, exclude: new Set(ords) };
}
