/**
 * GET /v1/news as a function of its query: keyword search over the corpus /v1/match serves,
 * newest-first (keyset cursor) or by BM25 (cursor too), with the source, time and edit
 * filters of /v1/match. The route checks and types the parameters; the SQL runs on a reader
 * thread; highlights are cut here from the few rows shown.
 */
import { AppError } from '../errors.js';
import { fingerprint, type CursorCodec } from '../cursor/index.js';
import { articleFields, resolveSources, type ArticleFields, type Store } from '../store/index.js';
import { highlight } from './highlight.js';
import type { NewsIndex } from './news.js';
import { parseQuery, termMatcher } from './query.js';

export interface NewsDeps {
  store: Store;
  news: NewsIndex;
  cursors: CursorCodec;
  /** Names of enabled outlets: valid in source filters before they have articles. */
  outletNames?: () => Set<string>;
}

export const NEWS_SORTS = ['time', 'relevance'] as const;
export type NewsSort = (typeof NEWS_SORTS)[number];
export const Q_MAX = 1000;

/** A search, checked and typed by the route (its schema holds the defaults). */
export interface NewsQuery {
  /** The query language of parseQuery. */
  q: string;
  /** Source names to keep, or to drop: not both (400). */
  sources?: string[];
  exclude_sources?: string[];
  /** Inclusive bounds on event_time, Unix seconds. */
  since?: number;
  until?: number;
  sort: NewsSort;
  include_edits: boolean;
  /** Rows a page, 1 to 100. */
  limit: number;
  cursor?: string;
}

/** A match item's article fields, `score` under sort=relevance, and the highlight. */
export interface NewsResult extends ArticleFields {
  score?: number;
  highlight: string | null;
}

export interface NewsResponse {
  results: NewsResult[];
  count: number;
  next_cursor: string | null;
  /** True while the keyword index is catching up with a large backlog: rows stored meanwhile may be missing. */
  partial: boolean;
}

export async function searchNews(deps: NewsDeps, p: NewsQuery): Promise<NewsResponse> {
  const { q, sources: include, exclude_sources: exclude, since, until, sort, include_edits: includeEdits, limit } = p;
  if (include && exclude) throw new AppError('bad_parameter', 'sources and exclude_sources are mutually exclusive');
  const query = parseQuery(q);

  const allowed = resolveSources(
    deps.store.listSources(),
    include,
    exclude,
    () => deps.outletNames?.() ?? new Set(),
    (m) => new AppError('unknown_source', m),
  );
  const fp = fingerprint({
    q,
    sources: include ? [...include].sort() : null,
    exclude_sources: exclude ? [...exclude].sort() : null,
    since,
    until,
    sort,
    include_edits: includeEdits,
  });
  let after: { rid: number; score?: number } | undefined;
  if (p.cursor !== undefined) {
    const pos = deps.cursors.decode(p.cursor, fp);
    const rid = sort === 'time' ? pos.t : Number(pos.id);
    if (!Number.isSafeInteger(rid) || (sort === 'relevance' && !/^\d+$/.test(pos.id))) throw new AppError('bad_cursor', 'cursor is malformed');
    after = sort === 'time' ? { rid } : { rid, score: pos.t };
  }

  const pending = await deps.news.fresh();
  const hits = await deps.news.query({ match: query.match, since, until, includeEdits, sources: allowed }, sort, limit + 1, after);
  const shown = hits.slice(0, limit);
  // The index may hold rows committed after this request's LMDB snapshot was taken.
  if (shown.some((h) => h.ord >= deps.store.nextOrd())) deps.store.refresh();
  const names = deps.store.sourceNames();
  const matches = termMatcher(query);
  const results = shown.map((h): NewsResult => {
    const rev = deps.store.revisions.get(h.ord)!;
    const r: NewsResult = { ...articleFields(rev, names), highlight: null };
    if (h.score !== undefined) r.score = h.score;
    // The snippet when it has a matched word, else the stored text, else the headline.
    r.highlight = highlight([rev.body, () => deps.store.texts.get(h.ord) ?? '', rev.title], matches);
    return r;
  });
  let next: string | null = null;
  if (hits.length > limit) {
    const last = shown[shown.length - 1];
    next = deps.cursors.encode(sort === 'time' ? { t: last.rid, id: '' } : { t: last.score!, id: String(last.rid) }, fp);
  }
  return { results, count: results.length, next_cursor: next, partial: pending > 0 };
}
