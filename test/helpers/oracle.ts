/**
 * The exhaustive oracle: scores every revision against a query by the highest cosine over its
 * OWN chunks (each normalised as the service stores it), applies the filters of a match
 * request, and sorts newest-first. The approximate index is measured against this.
 */
import { DIM, dot, normalize, parseSec, perturb, type Corpus, type RevisionRec } from './corpus.js';
import type { Rng } from './rng.js';

export interface Filters {
  since?: string;
  until?: string;
  sources?: string[];
  exclude_sources?: string[];
  include_edits?: boolean;
  min_score?: number;
}

export interface OracleRow {
  rev: RevisionRec;
  /** `${source_url}|${event_time}`: how a returned item is matched to its revision. */
  key: string;
  score: number | null;
  bestChunk: string | null;
  /** Every chunk text whose cosine is within `tol` of the best (ties for best_chunk). */
  chunkScores: { text: string; score: number }[] | null;
}

export function rowKey(url: string, eventTime: string): string {
  return `${url}|${eventTime}`;
}

export function itemKey(item: { source_url: string; event_time: string }): string {
  return rowKey(item.source_url, item.event_time);
}

interface Scored {
  score: Float64Array;
  best: Int32Array;
}

const cache = new WeakMap<Float64Array, Scored>();

/** Scores of every revision (by `rev.idx`) for one query vector (normalised here). */
export function scoreAll(corpus: Corpus, query: Float64Array): Scored {
  const hit = cache.get(query);
  if (hit) return hit;
  const q = normalize(query);
  const score = new Float64Array(corpus.revisions.length);
  const best = new Int32Array(corpus.revisions.length);
  const memo = new Map<Float32Array, number>();
  for (const r of corpus.revisions) {
    let m = -Infinity;
    let bi = -1;
    r.chunks.forEach((c, i) => {
      let s = memo.get(c.raw);
      if (s === undefined) {
        s = dot(q, c.raw) * c.invNorm;
        memo.set(c.raw, s);
      }
      if (s > m) {
        m = s;
        bi = i;
      }
    });
    score[r.idx] = m;
    best[r.idx] = bi;
  }
  const out = { score, best };
  cache.set(query, out);
  return out;
}

export function chunkScores(rev: RevisionRec, query: Float64Array): { text: string; score: number }[] {
  const q = normalize(query);
  return rev.chunks.map((c) => ({ text: c.text, score: dot(q, c.raw) * c.invNorm }));
}

/** Rows that pass the non-score filters (time window, sources, include_edits). */
export function eligible(corpus: Corpus, f: Filters): RevisionRec[] {
  const since = f.since !== undefined ? parseSec(f.since) : -Infinity;
  // A bare date is a whole UTC day (README, "Query"): until runs through its last second.
  const until = f.until !== undefined ? parseSec(f.until) + (f.until.length === 10 ? 86_399 : 0) : Infinity;
  const inc = f.sources ? new Set(f.sources) : null;
  const exc = f.exclude_sources ? new Set(f.exclude_sources) : null;
  return corpus.revisions.filter(
    (r) => (f.include_edits || r.isFirst) && r.eventSec >= since && r.eventSec <= until && (!inc || inc.has(r.source)) && !exc?.has(r.source),
  );
}

/**
 * The exact expected rows, newest-first (ties in event_time in arbitrary order: the service
 * breaks them by its own ids). With a query, rows below `min_score` (default 0.5) are dropped.
 */
export function oracle(corpus: Corpus, query: Float64Array | null, f: Filters = {}): OracleRow[] {
  const revs = eligible(corpus, f);
  let rows: OracleRow[];
  if (!query) {
    rows = revs.map((rev) => ({ rev, key: rowKey(rev.url, rev.eventTime), score: null, bestChunk: null, chunkScores: null }));
  } else {
    const min = f.min_score ?? 0.5;
    const s = scoreAll(corpus, query);
    rows = [];
    for (const rev of revs) {
      const sc = s.score[rev.idx];
      if (sc < min) continue;
      rows.push({
        rev,
        key: rowKey(rev.url, rev.eventTime),
        score: sc,
        bestChunk: rev.chunks[s.best[rev.idx]].text,
        chunkScores: chunkScores(rev, query),
      });
    }
  }
  rows.sort((a, b) => b.rev.eventSec - a.rev.eventSec);
  return rows;
}

/** The oracle's rows sorted best-first. */
export function oracleByScore(corpus: Corpus, query: Float64Array, f: Filters = {}): OracleRow[] {
  return oracle(corpus, query, f).sort((a, b) => (b.score as number) - (a.score as number));
}

/**
 * A `min_score` that keeps about `target` rows: the midpoint of the widest gap between
 * consecutive oracle scores within ±20% of the target count, so few rows sit on the edge.
 */
export function pickMinScore(corpus: Corpus, query: Float64Array, f: Filters, target: number): number {
  const scores = eligible(corpus, f)
    .map((r) => scoreAll(corpus, query).score[r.idx])
    .sort((a, b) => b - a);
  if (scores.length <= target) return Math.max(-1, scores[scores.length - 1] - 0.01);
  const lo = Math.max(1, Math.floor(target * 0.8));
  const hi = Math.min(scores.length - 1, Math.ceil(target * 1.2));
  let bestGap = -1;
  let bestAt = target;
  for (let k = lo; k <= hi; k++) {
    const gap = scores[k - 1] - scores[k];
    if (gap > bestGap) {
      bestGap = gap;
      bestAt = k;
    }
  }
  return (scores[bestAt - 1] + scores[bestAt]) / 2;
}

export type QueryKind = 'topic' | 'story' | 'chunk';

/** A query vector like a user's: a topic or story centroid plus noise, or a chunk plus noise. */
export function makeQuery(corpus: Corpus, rng: Rng, kind: QueryKind): Float64Array {
  if (kind === 'topic') return perturb(rng, rng.pick(corpus.topicCentroids), 0.5);
  if (kind === 'story') return perturb(rng, rng.pick(rng.pick(corpus.storyCentroids)), 0.4);
  const rev = rng.pick(corpus.revisions);
  const c = rng.pick(rev.chunks);
  const v = new Float64Array(DIM);
  for (let i = 0; i < DIM; i++) v[i] = c.raw[i] * c.invNorm;
  return perturb(rng, v, 0.35);
}

/** Query vectors are sent as plain number arrays. */
export function vec(v: Float64Array): number[] {
  return Array.from(v);
}

/** Scores within this of `min_score` may fall either side because of float32 storage. */
export const EDGE = 1e-4;

export interface RecallResult {
  expected: number;
  found: number;
  recall: number;
  /** Returned rows that the oracle does not allow (below min_score, filtered out, or unknown). */
  extraneous: string[];
}

/** Recall of returned keys against the oracle set, ignoring rows within EDGE of min_score. */
export function recallOf(corpus: Corpus, query: Float64Array | null, f: Filters, returnedKeys: string[]): RecallResult {
  const min = f.min_score ?? 0.5;
  const allowed = new Set(oracle(corpus, query, query ? { ...f, min_score: min - EDGE } : f).map((r) => r.key));
  const expected = oracle(corpus, query, query ? { ...f, min_score: min + EDGE } : f).map((r) => r.key);
  const got = new Set(returnedKeys);
  const found = expected.filter((k) => got.has(k)).length;
  return {
    expected: expected.length,
    found,
    recall: expected.length === 0 ? 1 : found / expected.length,
    extraneous: returnedKeys.filter((k) => !allowed.has(k)),
  };
}

/** Index of a corpus's revisions by `${url}|${event_time}`. */
export function revisionIndex(corpus: Corpus): Map<string, RevisionRec> {
  const m = new Map<string, RevisionRec>();
  for (const r of corpus.revisions) m.set(rowKey(r.url, r.eventTime), r);
  return m;
}

/**
 * Rows as a single node orders them, up to the order of rows with one event_time (ordered by
 * id, and the single node's ids are its own): event times in page order, each with its rows' keys and scores sorted.
 */
export const canonical = (items: any[]): string[] => {
  const groups: string[] = [];
  let at: string | null = null;
  let group: string[] = [];
  for (const i of [...items, { event_time: null }]) {
    if (i.event_time !== at && group.length > 0) groups.push(`${at} ${group.sort().join(' ')}`);
    if (i.event_time !== at) group = [];
    at = i.event_time;
    if (at !== null) group.push(`${itemKey(i)}=${i.score ?? ''}`);
  }
  return groups;
};
