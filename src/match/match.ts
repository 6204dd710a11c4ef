/**
 * POST /v1/match, as a pure function of the validated request body (README, "Query" and
 * "Search: how a query is answered"). The HTTP layer has already checked types and ranges with the schema.
 */
import { createHash } from 'node:crypto';
import { AppError } from '../errors.js';
import type { Domain, Scored, VectorSearch } from '../search/index.js';
import { inDomain, normalise, rangeAny, topKAny } from '../search/index.js';
import { resolveSources, type ArticleFields, type Catalog, type Store } from '../store/index.js';
import { readTimeRange } from '../time.js';
import { fingerprint, type CursorCodec, type Position } from '../cursor/index.js';
import { articleOrds, likeQuery, type LikeQuery } from './like.js';
import type { CachedRow, PageCache } from './page-cache.js';

export const MODEL = 'bge-m3';

/** The request body (the route's schema in http/routes/match.ts). */
export interface MatchRequest {
  model?: string;
  vector?: number[];
  text?: string;
  /** An article's id: its latest revision's chunk vectors are the query (like.ts). */
  like?: string;
  order?: 'time' | 'relevance';
  min_score?: number;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
  include_edits?: boolean;
  sources?: string[];
  exclude_sources?: string[];
  /** order=time only: the revisions that became searchable since this point of the ingest sequence (a response's `seq`). */
  after_seq?: number;
}

/** A match item: the article's fields, its score and its best chunk (null without a query). */
export interface MatchItem extends ArticleFields {
  score: number | null;
  best_chunk: string | null;
}

/** The shape of the response body (the route's schema); `match` returns it already serialised. */
export interface MatchResponse {
  model: string;
  order: 'time' | 'relevance';
  count: number;
  items: MatchItem[];
  next_cursor?: string | null;
  /**
   * The ingest sequence this answer saw up to: every revision that became searchable before it
   * was in reach. Sent back as `after_seq`, it asks for what became searchable since.
   */
  seq: number;
}

export interface MatchDeps {
  store: Store;
  catalog: Catalog;
  search: VectorSearch;
  cursors: CursorCodec;
  pages: PageCache;
  /** Brings the catalog and engine up to date with LMDB at once (another process may have imported): for callers off the request path. */
  sync(): void;
  /** The same, a slice at a time with the event loop free between slices: what a request awaits. */
  catchUp(): Promise<void>;
  /** Names of enabled outlets: valid in source filters before they have articles. */
  outletNames?: () => Set<string>;
  /** Text → unit bge-m3 vector; absent when text mode is off. Throws 503 `embed_unavailable`. */
  embedQuery?: (text: string) => Promise<Float32Array>;
  /** Cluster mode on a node that holds some shards' vectors: where a vector query goes (src/cluster). */
  shards?: ShardRouter;
}

/**
 * A vector query sent to the nodes holding the vectors of the shards it touches (README,
 * "Cluster mode"): each group answers it from its own vectors (`localRows`), and the rows are
 * merged, newest first or best first, `limit` of them.
 */
export interface ShardRouter {
  rows(q: RoutedQuery): Promise<RoutedRow[]>;
  /** The query vectors of `like: id` from a node that holds the vectors of the article's shard (first published at `firstPublished`, unix s). */
  likeVectors(id: string, firstPublished: number): Promise<number[][]>;
}

export interface RoutedQuery {
  order: 'time' | 'relevance';
  /** Unit vectors: one, or a liked article's chunks. */
  vectors: number[][];
  /** `like`: the article whose revisions are left out. */
  like?: string;
  minScore: number;
  since?: number;
  until?: number;
  includeEdits: boolean;
  sources?: string[];
  excludeSources?: string[];
  /** Rows wanted: limit + 1 for a time page (the extra one proves there is more). */
  take: number;
  /** A time page: after this row. */
  after?: Position;
  /** The query's fingerprint: where a node keeps the whole sorted set for the next pages. */
  fp: string;
}

/** A row as a group answers it: its place in either order, and the item as JSON. */
export interface RoutedRow {
  t: number;
  id: string;
  score: number;
  item: string;
}

interface Row {
  ord: number;
  t: number;
  id: string;
  scored?: Scored;
}

const invalid = (message: string) => new AppError('invalid_request', message);

/** Answers a request with its response body as UTF-8 JSON: a MatchResponse, serialised by `respond`. */
export async function match(deps: MatchDeps, req: MatchRequest): Promise<Buffer> {
  const order = req.order ?? 'time';
  const limit = req.limit ?? 50;
  const minScore = req.min_score ?? 0.5;
  const shapes = (['text', 'vector', 'like'] as const).filter((k) => req[k] !== undefined);
  const hasQuery = shapes.length > 0;

  if (shapes.length > 1) throw invalid(`${shapes.join(' and ')}: send one of text, vector or like, not several`);
  if (req.vector !== undefined && req.model !== undefined && req.model !== MODEL) {
    throw invalid(`model: only "${MODEL}" is accepted, got "${req.model}"`);
  }
  if (req.sources && req.exclude_sources) throw invalid('sources and exclude_sources are mutually exclusive');
  if (order === 'relevance' && !hasQuery) throw new AppError('order_requires_query');
  if (order === 'relevance' && req.cursor !== undefined) throw new AppError('cursor_requires_time_order');
  if (order === 'relevance' && req.after_seq !== undefined)
    throw invalid('after_seq: only with order=time (it lists what became searchable since, newest first)');
  const { since, until } = readTimeRange(req.since, req.until, invalid);
  let query: Float32Array | undefined;
  if (req.vector !== undefined) {
    query = normalise(req.vector) ?? undefined;
    if (!query) throw invalid('vector: an all-zero vector has no direction');
  }

  await deps.catchUp();
  const sourceFilter = sourcesOf(deps, req.sources, req.exclude_sources);
  if (req.text !== undefined && !deps.embedQuery) throw new AppError('text_mode_unavailable');
  // On a node holding some shards, the liked article's vectors may be elsewhere (likeVectors).
  const like: LikeQuery | undefined = req.like === undefined || deps.shards ? undefined : likeQuery(deps.store, req.like);

  // How far the ingest sequence is in reach of this request: the catalog's and the engine's
  // labels (both caught up above; the engine files a slice after the catalog reads it).
  // A point inside a revision (the engine took part of it) steps back to the revision's start.
  const synced = deps.catalog.boundary(Math.min(deps.catalog.labels, deps.search.engine.nextLabel), deps.store);
  const domain: Domain = { since, until, includeEdits: req.include_edits ?? false, sources: sourceFilter };
  // Only order=time pages have cursors to bind; relevance answers skip hashing the vector.
  const fp =
    order === 'relevance'
      ? ''
      : fingerprint({
          vector: query ? createHash('sha256').update(query).digest('base64url') : null,
          text: req.text,
          // Only when sent: a key more would change every other query's fingerprint, and void their cursors.
          ...(req.like !== undefined && { like: req.like }),
          ...(req.after_seq !== undefined && { after_seq: req.after_seq }),
          order,
          min_score: hasQuery ? minScore : null,
          since,
          until,
          include_edits: domain.includeEdits,
          sources: req.sources ? [...req.sources].sort() : null,
          exclude_sources: req.exclude_sources ? [...req.exclude_sources].sort() : null,
        });
  const after = req.cursor === undefined ? undefined : deps.cursors.decode(req.cursor, fp);
  // An after_seq walk's pages all read the set as it stood at its first page (its cursor carries
  // where that ended); an after_seq past what is in reach answers nothing and keeps its place.
  const seq = req.after_seq === undefined ? synced : Math.max(req.after_seq, after?.seq ?? synced);
  if (req.after_seq !== undefined) domain.labels = { from: req.after_seq, to: seq };
  const walk = req.after_seq === undefined ? undefined : seq;

  if (hasQuery && deps.shards) {
    if (req.after_seq !== undefined)
      throw invalid('after_seq: not with a query on a node that holds some shards (its ingest sequence is its own): ask a node with CLUSTER_SHARDS=all');
    if (req.text !== undefined) query = await deps.embedQuery!(req.text);
    const vectors = req.like !== undefined ? await likeVectors(deps, req.like) : [Array.from(query!)];
    const rows = await deps.shards.rows({
      order,
      vectors,
      like: req.like,
      minScore,
      since,
      until,
      includeEdits: domain.includeEdits,
      sources: req.sources,
      excludeSources: req.exclude_sources,
      take: order === 'time' ? limit + 1 : limit,
      after,
      fp,
    });
    return routedPage(rows, order, limit, fp, seq, deps);
  }
  if (!hasQuery) {
    const rows = domain.labels ? arrivals(deps, domain, after, limit + 1) : chronological(deps, domain, after, limit + 1);
    return page(deps, rows, limit, fp, seq, walk);
  }
  if (order === 'relevance') {
    if (req.text !== undefined) query = await deps.embedQuery!(req.text);
    const top = like
      ? await topKAny(deps.search, like.vectors, limit, minScore, domain, like.exclude)
      : await deps.search.topK(query!, limit, minScore, domain);
    const rows = top.map((s) => row(deps.catalog, s));
    return respond(deps, rows, order, seq);
  }
  const rows = await timeRows(deps, walk === undefined ? fp : `${fp}|${walk}`, after, limit + 1, async () => {
    // A text is embedded only when a search runs: a later page from the cache needs no vector.
    if (req.text !== undefined) query = await deps.embedQuery!(req.text);
    return like ? rangeAny(deps.search, like.vectors, minScore, domain, like.exclude) : deps.search.range(query!, minScore, domain);
  });
  return page(deps, rows, limit, fp, seq, walk);
}

/** The source filter of `sources` / `exclude_sources`; null when neither is sent (only a filter needs the sources: an item's name is in its rendered record). */
function sourcesOf(deps: MatchDeps, sources: string[] | undefined, exclude: string[] | undefined): Set<number> | null {
  if (sources === undefined && exclude === undefined) return null;
  return resolveSources(deps.store.listSources(), sources, exclude, () => deps.outletNames?.() ?? new Set(), invalid);
}

/** Newest first, then by id: the order of a time page and of its cursor (t, id). */
export const newestFirst = (a: { t: number; id: string }, b: { t: number; id: string }): number => b.t - a.t || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/**
 * `take` rows of a time query after `after`: page one finds the whole set (`find`) and keeps it,
 * newest first, under `key`; later pages slice the kept one (or find it again on a miss).
 */
async function timeRows(deps: MatchDeps, key: string, after: Position | undefined, take: number, find: () => Promise<Scored[]>): Promise<Row[]> {
  let all = after ? deps.pages.get(key) : undefined;
  if (!all) {
    all = (await find())
      .map((s): CachedRow => ({ ord: s.ord, t: deps.catalog.eventTime[s.ord], id: deps.catalog.ids[s.ord], score: s.score, label: s.label }))
      .sort(newestFirst);
    deps.pages.set(key, all);
  }
  const start = after === undefined ? 0 : firstAfter(all, after);
  return all.slice(start, start + take).map((r): Row => ({ ord: r.ord, t: r.t, id: r.id, scored: { ord: r.ord, score: r.score, label: r.label } }));
}

/** `like` on a node that holds some shards: the article's vectors from here, or from a node of its shard. */
async function likeVectors(deps: MatchDeps, id: string): Promise<number[][]> {
  try {
    return likeQuery(deps.store, id).vectors.map((v) => Array.from(v));
  } catch (e) {
    if (!(e instanceof AppError) || e.code !== 'article_not_embedded') throw e;
    const first = Math.min(...articleOrds(deps.store, id)!);
    return deps.shards!.likeVectors(id, deps.catalog.eventTime[first]);
  }
}

/** The answer from routed rows (merged by the router), as `page` and `respond` make it from local ones. */
function routedPage(rows: RoutedRow[], order: 'time' | 'relevance', limit: number, fp: string, seq: number, deps: MatchDeps): Buffer {
  const shown = rows.slice(0, limit);
  let next: string | null | undefined;
  if (order === 'time') {
    const last = shown[shown.length - 1];
    next = rows.length > limit ? deps.cursors.encode({ t: last.t, id: last.id }, fp) : null;
  }
  const out = new JsonBytes();
  out.text(`{"model":${JSON.stringify(MODEL)},"order":"${order}","count":${shown.length},"items":[${shown.map((r) => r.item).join(',')}]`);
  if (next !== undefined) out.text(`,"next_cursor":${JSON.stringify(next)}`);
  out.text(`,"seq":${seq}}`);
  return out.done();
}

/**
 * A group's side of a routed query: its rows from its own vectors, each with its item as JSON
 * (the same bytes `respond` writes), the whole sorted set of a time query kept for its next pages.
 */
export async function localRows(deps: MatchDeps, q: RoutedQuery): Promise<RoutedRow[]> {
  await deps.catchUp();
  const domain: Domain = { since: q.since, until: q.until, includeEdits: q.includeEdits, sources: sourcesOf(deps, q.sources, q.excludeSources) };
  const queries = q.vectors.map((v) => Float32Array.from(v));
  const skip = new Set(q.like === undefined ? [] : (articleOrds(deps.store, q.like) ?? []));
  let rows: Row[];
  if (q.order === 'relevance') {
    const top = await topKAny(deps.search, queries, q.take, q.minScore, domain, skip);
    rows = top.map((s) => row(deps.catalog, s));
  } else {
    rows = await timeRows(deps, `routed|${q.fp}`, q.after, q.take, () => rangeAny(deps.search, queries, q.minScore, domain, skip));
  }
  return rows.map((r) => ({ t: r.t, id: r.id, score: r.scored!.score, item: itemJson(deps, r).toString('utf8') }));
}

/**
 * The revisions of an after_seq walk with no query, newest first, strictly after `after`:
 * those whose labels start in the window (read off the catalog; the time index cannot say
 * when a row became searchable).
 */
function arrivals(deps: MatchDeps, d: Domain, after: Position | undefined, take: number): Row[] {
  const c = deps.catalog;
  const rows: Row[] = [];
  for (let ord = 0; ord < c.size; ord++) if (inDomain(c, ord, d)) rows.push({ ord, t: c.eventTime[ord], id: c.ids[ord] });
  rows.sort(newestFirst);
  const start = after === undefined ? 0 : rows.findIndex((r) => before(r, after));
  return start < 0 ? [] : rows.slice(start, start + take);
}

/** Index of the first row after `p` in newest-first order (binary search). */
function firstAfter(rows: CachedRow[], p: Position): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (before(rows[mid], p)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Keyset walk of the time index, newest first, strictly after `after`. Exact, no cap on depth. */
function chronological(deps: MatchDeps, d: Domain, after: Position | undefined, take: number): Row[] {
  const index = d.includeEdits ? deps.store.timeAll : deps.store.timeFirst;
  // Keys are [event_time, id]; [t + 1] sorts after every [t, id], so it bounds `until` inclusively.
  let start: [number, string] | [number] = d.until === undefined ? [Number.MAX_SAFE_INTEGER] : [d.until + 1];
  if (after && (d.until === undefined || after.t <= d.until)) start = [after.t, after.id];
  const rows: Row[] = [];
  for (const { key, value: ord } of index.getRange({ start, end: d.since === undefined ? undefined : [d.since], reverse: true })) {
    const [t, id] = key;
    if (after && t === after.t && id === after.id) continue;
    // Written by another process after this request synced the catalog: next request sees it.
    if (ord >= deps.catalog.size) continue;
    if (d.sources && !d.sources.has(deps.catalog.sourceId[ord])) continue;
    rows.push({ ord, t, id });
    if (rows.length >= take) break;
  }
  return rows;
}

const before = (r: { t: number; id: string }, p: Position): boolean => r.t < p.t || (r.t === p.t && r.id < p.id);

const row = (c: Catalog, s: Scored): Row => ({ ord: s.ord, t: c.eventTime[s.ord], id: c.ids[s.ord], scored: s });

/** One page of a time-ordered walk: `rows` holds up to limit + 1 rows, the extra one proving there is more. */
function page(deps: MatchDeps, rows: Row[], limit: number, fp: string, seq: number, walk: number | undefined): Buffer {
  const more = rows.length > limit;
  const shown = rows.slice(0, limit);
  const last = shown[shown.length - 1];
  const next = more ? deps.cursors.encode({ t: last.t, id: last.id, ...(walk !== undefined && { seq: walk }) }, fp) : null;
  return respond(deps, shown, 'time', seq, next);
}

/**
 * The MatchResponse as JSON bytes. Each item is its revision as rendered when stored (one
 * read: Store.rendered), its score and best chunk spliced in before the closing brace.
 * Decoding two records an item and serialising its body again was the largest part of a
 * relevance request's event-loop time (README, "Search: how a query is answered").
 */
function respond(deps: MatchDeps, rows: Row[], order: 'time' | 'relevance', seq: number, nextCursor?: string | null): Buffer {
  const out = new JsonBytes();
  out.text(`{"model":${JSON.stringify(MODEL)},"order":"${order}","count":${rows.length},"items":[`);
  rows.forEach((r, i) => {
    if (i > 0) out.text(',');
    writeItem(deps, r, out);
  });
  out.text(']');
  if (nextCursor !== undefined) out.text(`,"next_cursor":${JSON.stringify(nextCursor)}`);
  out.text(`,"seq":${seq}}`);
  return out.done();
}

/** An item: its revision as rendered when stored, its score and best chunk spliced in before the closing brace. */
function writeItem(deps: MatchDeps, r: Row, out: JsonBytes): void {
  // Views valid until the store's next read: copied at once.
  const { article, chunk } = deps.store.rendered(r.ord, r.scored ? r.scored.label : null)!;
  out.bytes(article.subarray(0, article.length - 1));
  out.text(`,"score":${r.scored ? r.scored.score : null},"best_chunk":`);
  if (chunk) out.bytes(chunk);
  else out.text('null');
  out.text('}');
}

function itemJson(deps: MatchDeps, r: Row): Buffer {
  const out = new JsonBytes(4096);
  writeItem(deps, r, out);
  return out.done();
}

/** One growing buffer a response is written into: a copy per piece, one allocation per doubling. */
class JsonBytes {
  // A page of 50 items with their snippets is ~20 KB on the benchmark corpus: sized for that,
  // not for the largest (each allocation is external memory the collector runs after).
  #buf: Buffer;
  #len = 0;

  constructor(size = 32 * 1024) {
    this.#buf = Buffer.allocUnsafe(size);
  }

  text(s: string): void {
    this.#room(s.length * 3);
    this.#len += this.#buf.write(s, this.#len);
  }

  bytes(b: Uint8Array): void {
    this.#room(b.length);
    this.#buf.set(b, this.#len);
    this.#len += b.length;
  }

  done(): Buffer {
    return this.#buf.subarray(0, this.#len);
  }

  #room(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#len + n));
    this.#buf.copy(grown, 0, 0, this.#len);
    this.#buf = grown;
  }
}
