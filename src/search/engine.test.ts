/**
 * Conformance of the native search engine (src/search/engine.ts over native/) against an
 * oracle: float64 dot products of the ORIGINAL float32 vectors, max per revision, in plain JS.
 * Every path is checked against it: the int8 + f16 range scan (single and batched), top-k by
 * scan, top-k by the index (plain, filtered, with rows not yet filed, far queries, through the
 * planner), and each lifecycle state (delta, segments, compaction, a saved index, a reopened
 * directory, a damaged index file).
 *
 * Data: a seeded corpus of clustered unit vectors (topics → centroids → revisions → chunks),
 * 1–4 chunks per revision with adjacent labels, event times on an hourly grid (many ties), ten
 * common sources plus one source (id 37) that holds a single row, ~30% non-first revisions.
 * Thresholds are chosen inside gaps of the oracle's score distribution, so f16 rounding (< 1e-4)
 * can never move a revision across one and set equality is the right assertion.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../test/helpers/rng.js';
import { DIMS } from '../dims.js';
import { native, type NativeEngine, type NativeFilter, type NativeHits, type NativeRows } from '../native.js';
import type { Catalog } from '../store/index.js';
import { EngineLockedError, SearchEngine } from './engine.js';
import { VectorSearch, type Domain } from './vector-search.js';

/** f16 storage: a score may differ from the f32 oracle by this much. */
const TOL = 1e-4;
const T0 = 1_700_000_000;
const HOUR = 3600;
/** Engine settings: lists by the production rule (about sqrt(rows)), trained on this small corpus. */
const PROD = { lists: 0, indexMinRows: 256, threads: 2, passes: 1, topkBatches: 2 };
const FAST = PROD;
const LONE_SOURCE = 37;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// ---------------------------------------------------------------------------------------------
// Corpus

interface Rev {
  ord: number;
  /** Index of its first row (chunk) in the corpus; labels are labelBase + row. */
  start: number;
  count: number;
  time: number;
  source: number;
  first: number;
}

interface Corpus extends NativeRows {
  revs: Rev[];
  rows: number;
  labelBase: number;
}

function unit(v: Float64Array | number[]): Float32Array {
  let s = 0;
  for (const x of v) s += x * x;
  const inv = 1 / Math.sqrt(s);
  return Float32Array.from(v, (x) => x * inv);
}

/** normalise(base + sigma * g), g ~ N(0, I/1024) (so |g| ≈ 1). */
function jitter(rng: Rng, base: ArrayLike<number>, sigma: number): Float32Array {
  const v = new Float64Array(DIMS);
  for (let i = 0; i < DIMS; i++) v[i] = base[i] + (sigma * rng.gauss()) / 32;
  return unit(v);
}

function makeCorpus(seed: number, nRevs: number, o: { labelBase?: number; ordBase?: number; chunks?: [number, number]; chunkSigma?: number } = {}): Corpus {
  const rng = new Rng(seed);
  const labelBase = o.labelBase ?? 0;
  const ordBase = o.ordBase ?? 0;
  const zero = new Float64Array(DIMS);
  const topics = Array.from({ length: 4 }, () => jitter(rng, zero, 1));
  const centroids = Array.from({ length: 12 }, (_, i) => jitter(rng, topics[i % 4], 0.9));
  // Ords are not in label order (a revision's row in LMDB says nothing of its time or label).
  const ordOf = rng.shuffle(Array.from({ length: nRevs }, (_, i) => ordBase + 3 * i + 1));
  const lone = Math.floor(nRevs / 2);
  const revs: Rev[] = [];
  const chunks: Float32Array[] = [];
  for (let r = 0; r < nRevs; r++) {
    const [lo, hi] = o.chunks ?? [1, 4];
    const count = r === lone ? 1 : rng.range(lo, hi);
    const center = jitter(rng, centroids[rng.int(centroids.length)], 1.1);
    const rev: Rev = {
      ord: ordOf[r],
      start: chunks.length,
      count,
      time: T0 + HOUR * rng.int(60),
      source: r === lone ? LONE_SOURCE : rng.int(10),
      first: rng.chance(0.7) ? 1 : 0,
    };
    revs.push(rev);
    for (let c = 0; c < count; c++) chunks.push(jitter(rng, center, o.chunkSigma ?? 0.7));
  }
  const n = chunks.length;
  const corpus: Corpus = {
    revs,
    rows: n,
    labelBase,
    labels: new Float64Array(n),
    ords: new Float64Array(n),
    times: new Float64Array(n),
    sources: new Uint32Array(n),
    first: new Uint8Array(n),
    vectors: new Float32Array(n * DIMS),
  };
  for (const rev of revs)
    for (let i = rev.start; i < rev.start + rev.count; i++) {
      corpus.labels[i] = labelBase + i;
      corpus.ords[i] = rev.ord;
      corpus.times[i] = rev.time;
      corpus.sources[i] = rev.source;
      corpus.first[i] = rev.first;
      corpus.vectors.set(chunks[i], i * DIMS);
    }
  return corpus;
}

/** The rows of revisions [from, to), in the shape append() takes. */
function rowsOf(c: Corpus, from = 0, to = c.revs.length): NativeRows {
  const a = c.revs[from]?.start ?? c.rows;
  const b = to < c.revs.length ? c.revs[to].start : c.rows;
  return {
    labels: c.labels.slice(a, b),
    ords: c.ords.slice(a, b),
    times: c.times.slice(a, b),
    sources: c.sources.slice(a, b),
    first: c.first.slice(a, b),
    vectors: c.vectors.slice(a * DIMS, b * DIMS),
  };
}

function makeQueries(c: Corpus, seed: number, n: number): Float32Array[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, (_, i) => {
    // Half near a stored chunk (many close neighbours), half a noisier probe.
    const row = rng.int(c.rows);
    return jitter(rng, c.vectors.subarray(row * DIMS, (row + 1) * DIMS), i % 2 ? 0.6 : 1.2);
  });
}

// ---------------------------------------------------------------------------------------------
// Oracle

interface OHit {
  ord: number;
  label: number;
  score: number;
  rev: Rev;
}

const rowScoreCache = new WeakMap<Float32Array, Map<Corpus, Float64Array>>();

/** Every row's cosine with q, float64 accumulation over the float32 inputs. */
function rowScores(c: Corpus, q: Float32Array): Float64Array {
  let byCorpus = rowScoreCache.get(q);
  if (!byCorpus) rowScoreCache.set(q, (byCorpus = new Map()));
  let s = byCorpus.get(c);
  if (!s) {
    s = new Float64Array(c.rows);
    for (let r = 0; r < c.rows; r++) {
      let acc = 0;
      const o = r * DIMS;
      for (let i = 0; i < DIMS; i++) acc += q[i] * c.vectors[o + i];
      s[r] = acc;
    }
    byCorpus.set(c, s);
  }
  return s;
}

function sourceAllowed(f: NativeFilter | null | undefined, s: number): boolean {
  const bm = f?.sources;
  if (bm === undefined || bm === null) return true;
  return s >> 3 < bm.length && ((bm[s >> 3] >> (s & 7)) & 1) === 1;
}

/** A source bitmap with `ids` set, `bytes` long (default: just long enough). */
function bitmap(ids: number[], bytes?: number): Uint8Array {
  const b = new Uint8Array(bytes ?? Math.max(1, Math.ceil((Math.max(-1, ...ids) + 1) / 8)));
  for (const id of ids) b[id >> 3] |= 1 << (id & 7);
  return b;
}

function allowed(rev: Rev, f: NativeFilter | null | undefined): boolean {
  if (f?.tmin !== undefined && rev.time < f.tmin) return false;
  if (f?.tmax !== undefined && rev.time > f.tmax) return false;
  if (f?.firstOnly && !rev.first) return false;
  return sourceAllowed(f, rev.source);
}

/** Allowed revisions among [from, to) with their best chunk, best first. */
function oracle(c: Corpus, q: Float32Array, f?: NativeFilter | null, minScore = -Infinity, revRange: [number, number] = [0, c.revs.length]): OHit[] {
  const s = rowScores(c, q);
  const out: OHit[] = [];
  for (let r = revRange[0]; r < revRange[1]; r++) {
    const rev = c.revs[r];
    if (!allowed(rev, f)) continue;
    let best = -Infinity;
    let bestRow = rev.start;
    for (let i = rev.start; i < rev.start + rev.count; i++)
      if (s[i] > best) {
        best = s[i];
        bestRow = i;
      }
    if (best >= minScore) out.push({ ord: rev.ord, label: c.labelBase + bestRow, score: best, rev });
  }
  return out.sort((a, b) => b.score - a.score || a.ord - b.ord);
}

/** A threshold between two revision scores near rank `target`, with no revision within 1.5e-4 of it. */
function gapThreshold(c: Corpus, q: Float32Array, target: number): number {
  const s = oracle(c, q).map((h) => h.score);
  for (let d = 0; d < s.length; d++)
    for (const i of [target + d, target - d]) {
      if (i < 1 || i >= s.length) continue;
      if (s[i - 1] - s[i] > 3e-4) return (s[i - 1] + s[i]) / 2;
    }
  throw new Error('no gap in the score distribution');
}

// ---------------------------------------------------------------------------------------------
// Assertions

function sortedOrds(h: { ords: ArrayLike<number> }): number[] {
  return Array.from(h.ords).sort((a, b) => a - b);
}

/** The hit's label must be the revision's best chunk (or tie with it within TOL). */
function expectLabel(c: Corpus, q: Float32Array, label: number, want: OHit, what: string): void {
  if (label === want.label) return;
  const row = label - c.labelBase;
  expect(row >= want.rev.start && row < want.rev.start + want.rev.count, `${what}: label ${label} is not a chunk of ord ${want.ord}`).toBe(true);
  expect(rowScores(c, q)[row], `${what}: label ${label} is not the best chunk of ord ${want.ord}`).toBeGreaterThanOrEqual(want.score - TOL);
}

/** A range result equals the oracle: same revisions, scores within TOL, best chunks. */
function expectRange(c: Corpus, q: Float32Array, got: NativeHits & { overflow: boolean }, want: OHit[], what: string): void {
  expect(got.overflow, `${what}: overflow`).toBe(false);
  expect(sortedOrds(got), `${what}: revision set`).toEqual(want.map((h) => h.ord).sort((a, b) => a - b));
  const byOrd = new Map(want.map((h) => [h.ord, h]));
  for (let i = 0; i < got.ords.length; i++) {
    const w = byOrd.get(got.ords[i])!;
    expect(Math.abs(got.scores[i] - w.score), `${what}: score of ord ${w.ord}`).toBeLessThanOrEqual(TOL);
    expectLabel(c, q, got.labels[i], w, what);
  }
}

/** A top-k result equals the oracle's first k, allowing ties within TOL at the cut. */
function expectTopK(c: Corpus, q: Float32Array, got: NativeHits, k: number, want: OHit[], what: string): void {
  expect(got.ords.length, `${what}: rows returned`).toBe(Math.min(k, want.length));
  expect(new Set(got.ords).size, `${what}: distinct revisions`).toBe(got.ords.length);
  const byOrd = new Map(want.map((h) => [h.ord, h]));
  for (let i = 0; i < got.ords.length; i++) {
    if (i > 0) expect(got.scores[i], `${what}: best first`).toBeLessThanOrEqual(got.scores[i - 1]);
    expect(Math.abs(got.scores[i] - want[i].score), `${what}: score at rank ${i}`).toBeLessThanOrEqual(TOL);
    const w = byOrd.get(got.ords[i]);
    expect(w, `${what}: ord ${got.ords[i]} is not an allowed revision above min_score`).toBeDefined();
    expect(Math.abs(got.scores[i] - w!.score), `${what}: score of ord ${got.ords[i]}`).toBeLessThanOrEqual(TOL);
    expectLabel(c, q, got.labels[i], w!, what);
  }
}

// ---------------------------------------------------------------------------------------------
// Engines in temporary directories

const dirs: string[] = [];
const opened: { close(): void }[] = [];

function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'nm-engine-test-'));
  dirs.push(d);
  return d;
}

function openEngine(dir: string, options = FAST): SearchEngine {
  const e = new SearchEngine(dir, options);
  opened.push(e);
  return e;
}

function openNative(dir: string): NativeEngine {
  const e = new native.Engine({ dir, indexMinRows: 256, threads: 2 });
  opened.push(e);
  return e;
}

async function indexAll(e: { indexPending(max: number): Promise<number> }): Promise<void> {
  while ((await e.indexPending(1024)) > 0);
}

afterAll(() => {
  for (const e of opened)
    try {
      e.close();
    } catch {
      // already closed
    }
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// The shared corpus: two sealed segments and a delta, every row filed in the index.

const corpus = makeCorpus(20_260_101, 900);
const queries = makeQueries(corpus, 7, 24);
let engine: SearchEngine;

/** The time of the k-th distinct time value (all revisions share an hourly grid). */
const timeAt = (k: number): number => T0 + HOUR * k;

beforeAll(async () => {
  engine = openEngine(tempDir(), PROD);
  engine.append(rowsOf(corpus, 0, 350));
  await engine.seal();
  engine.append(rowsOf(corpus, 350, 650));
  await engine.seal();
  engine.append(rowsOf(corpus, 650));
  await indexAll(engine);
  const s = engine.stats();
  expect(s).toMatchObject({ segments: 2, deltaRows: corpus.rows - corpus.revs[650].start, indexPending: 0, nextLabel: corpus.rows });
  // Kept on the JS side (every append goes through it), it says what the engine says.
  expect(engine.nextLabel).toBe(s.nextLabel);
});

describe('corpus', () => {
  it('has what the tests rely on: ties in time, a one-row source, non-first revisions, multi-chunk revisions', () => {
    const times = new Set(corpus.revs.map((r) => r.time));
    expect(times.size).toBeLessThan(corpus.revs.length / 5);
    expect(corpus.revs.filter((r) => r.source === LONE_SOURCE).map((r) => r.count)).toEqual([1]);
    expect(corpus.revs.some((r) => !r.first)).toBe(true);
    expect(corpus.revs.some((r) => r.count > 1)).toBe(true);
    expect(corpus.revs.some((r) => r.source >= 8 && r.source !== LONE_SOURCE)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------

describe('range: the int8 + f16 scan equals the f32 oracle', () => {
  it('finds exactly the oracle set at thresholds giving a few, tens and hundreds of revisions', async () => {
    for (const [qi, q] of queries.slice(0, 8).entries())
      for (const target of [3, 40, 300]) {
        const t = gapThreshold(corpus, q, target);
        const want = oracle(corpus, q, null, t);
        expect(Math.abs(want.length - target)).toBeLessThan(target / 2 + 5);
        expectRange(corpus, q, await engine.range(q, t, {}, 1e6), want, `query ${qi}, ~${target} rows`);
      }
  });

  it('treats time windows as inclusive, with rows at exactly tmin and tmax', async () => {
    const windows: NativeFilter[] = [{ tmin: timeAt(10), tmax: timeAt(20) }, { tmin: timeAt(33), tmax: timeAt(33) }, { tmin: timeAt(50) }, { tmax: timeAt(4) }];
    for (const f of windows) {
      if (f.tmin !== undefined) expect(corpus.revs.some((r) => r.time === f.tmin)).toBe(true);
      if (f.tmax !== undefined) expect(corpus.revs.some((r) => r.time === f.tmax)).toBe(true);
    }
    for (const [qi, q] of queries.slice(0, 4).entries()) {
      const t = gapThreshold(corpus, q, 400);
      for (const f of windows) {
        const want = oracle(corpus, q, f, t);
        expect(want.some((h) => h.rev.time === (f.tmin ?? f.tmax))).toBe(true);
        expectRange(corpus, q, await engine.range(q, t, f, 1e6), want, `query ${qi}, window ${JSON.stringify(f)}`);
      }
    }
  });

  it('applies source bitmaps: a subset, a source with one row, ids ≥ 8, short bitmaps, all-zero = nothing', async () => {
    const q = queries[2];
    const t = gapThreshold(corpus, q, 300);
    const cases: [string, NativeFilter][] = [
      ['subset {1,3,9}', { sources: bitmap([1, 3, 9]) }],
      ['source 9 only (second byte)', { sources: bitmap([9]) }],
      ['bitmap of one byte (sources 0-7)', { sources: Uint8Array.of(0xff) }],
      ['subset with a window and first only', { sources: bitmap([0, 2, 8, 9]), tmin: timeAt(5), tmax: timeAt(40), firstOnly: true }],
    ];
    for (const [what, f] of cases) {
      const want = oracle(corpus, q, f, t);
      expect(want.length, what).toBeGreaterThan(0);
      expectRange(corpus, q, await engine.range(q, t, f, 1e6), want, what);
    }
    // The one-row source: the whole bitmap is 5 bytes, one bit set.
    const lone = { sources: bitmap([LONE_SOURCE]) };
    expect(lone.sources.length).toBe(5);
    const one = await engine.range(q, -1, lone, 1e6);
    expectRange(corpus, q, one, oracle(corpus, q, lone), 'lone source');
    expect(one.ords.length).toBe(1);
    expect(engine.count(lone)).toBe(1);
    // Nothing: an all-zero bitmap and an empty one.
    for (const sources of [new Uint8Array(2), new Uint8Array(0)]) {
      const r = await engine.range(q, -1, { sources }, 1e6);
      expect(r.ords.length, `bitmap of ${sources.length} zero bytes`).toBe(0);
      expect(engine.count({ sources })).toBe(0);
    }
  });

  it('applies firstOnly', async () => {
    for (const q of queries.slice(4, 7)) {
      const t = gapThreshold(corpus, q, 300);
      const want = oracle(corpus, q, { firstOnly: true }, t);
      expect(want.length).toBeLessThan(oracle(corpus, q, null, t).length);
      expectRange(corpus, q, await engine.range(q, t, { firstOnly: true }, 1e6), want, 'firstOnly');
    }
  });

  it('returns nothing for a window with no rows, an inverted window or one before all data', async () => {
    const q = queries[0];
    for (const f of [{ tmin: timeAt(10) + 1, tmax: timeAt(11) - 1 }, { tmin: timeAt(20), tmax: timeAt(19) }, { tmax: T0 - 1 }] as NativeFilter[]) {
      const r = await engine.range(q, -1, f, 1e6);
      expect(r.ords.length, JSON.stringify(f)).toBe(0);
      expect(r.overflow).toBe(false);
      expect((await engine.topk(q, 10, -1, f, 'scan')).ords.length).toBe(0);
      expect(engine.count(f)).toBe(0);
    }
  });

  it('counts allowed chunks', () => {
    const f = { tmin: timeAt(10), tmax: timeAt(30), firstOnly: true };
    const want = corpus.revs.filter((r) => allowed(r, f)).reduce((a, r) => a + r.count, 0);
    expect(engine.count(f)).toBe(want);
    expect(engine.count({})).toBe(corpus.rows);
    // Windows that cover whole segments are answered from per-source counts: same answers.
    const whole: NativeFilter[] = [
      { firstOnly: true },
      { sources: bitmap([0, 2]) },
      { firstOnly: true, sources: bitmap([1, LONE_SOURCE]) },
      { tmin: T0 - 1, firstOnly: true },
      { tmin: timeAt(10), sources: bitmap([1]) },
    ];
    for (const g of whole) {
      const n = corpus.revs.filter((r) => allowed(r, g)).reduce((a, r) => a + r.count, 0);
      expect(engine.count(g), JSON.stringify(g)).toBe(n);
    }
  });

  it('on cap: overflow=true with exactly cap + 1 correct revisions; no overflow at cap = count', async () => {
    const q = queries[3];
    const t = gapThreshold(corpus, q, 300);
    const want = oracle(corpus, q, null, t);
    const byOrd = new Map(want.map((h) => [h.ord, h]));
    for (const cap of [0, 10, want.length - 1]) {
      const r = await engine.range(q, t, {}, cap);
      expect(r.overflow, `cap ${cap}`).toBe(true);
      expect(r.ords.length, `cap ${cap}`).toBe(cap + 1);
      for (let i = 0; i < r.ords.length; i++) {
        const w = byOrd.get(r.ords[i]);
        expect(w, `cap ${cap}: ord ${r.ords[i]} is not in the oracle set`).toBeDefined();
        expect(Math.abs(r.scores[i] - w!.score)).toBeLessThanOrEqual(TOL);
      }
    }
    expectRange(corpus, q, await engine.range(q, t, {}, want.length), want, 'cap = count');
  });

  it('returns nothing on an empty engine, and its maintenance calls are no-ops', async () => {
    const dir = tempDir();
    const e = openEngine(dir);
    const q = queries[0];
    expect((await e.range(q, -1, {}, 10)).ords.length).toBe(0);
    expect((await e.topk(q, 10, -1, {}, 'scan')).ords.length).toBe(0);
    const h = await e.topk(q, 10, -1, {}, 'index');
    expect(h.ords.length).toBe(0);
    expect(e.count({})).toBe(0);
    expect(e.estimate({})).toBe(0);
    expect(await e.indexPending(100)).toBe(0);
    await e.seal();
    await e.compact();
    await e.saveIndex();
    expect(e.stats()).toMatchObject({ segments: 0, segmentRows: 0, deltaRows: 0, indexLists: 0, indexPending: 0, nextLabel: 0 });
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('seg-'))).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('batching', () => {
  const specs = (): { q: Float32Array; t: number; f: NativeFilter; cap: number }[] => {
    const filters: NativeFilter[] = [
      {},
      { firstOnly: true },
      { tmin: timeAt(10), tmax: timeAt(40) },
      { sources: Uint8Array.of(0b1010_0110, 0b11) },
      { tmax: timeAt(3) },
    ];
    return queries.map((q, i) => ({ q, t: gapThreshold(corpus, q, [5, 60, 250][i % 3]), f: filters[i % filters.length], cap: 1e6 }));
  };

  it('20 concurrent range calls answer as the same calls one at a time, in fewer passes', async () => {
    const s = specs().slice(0, 20);
    const before = { ...engine.batches };
    const together = await Promise.all(s.map((x) => engine.range(x.q, x.t, x.f, x.cap)));
    const passes = engine.batches.passes - before.passes;
    expect(engine.batches.queries - before.queries).toBe(20);
    expect(passes).toBeGreaterThanOrEqual(1);
    expect(passes).toBeLessThan(20);
    for (const [i, x] of s.entries()) {
      const alone = await engine.range(x.q, x.t, x.f, x.cap);
      expect(sortedOrds(together[i]), `query ${i}`).toEqual(sortedOrds(alone));
      expectRange(corpus, x.q, together[i], oracle(corpus, x.q, x.f, x.t), `batched query ${i}`);
    }
  });

  it('70 concurrent calls (more than one pass holds) are all answered correctly', async () => {
    const s = [...specs(), ...specs(), ...specs(), ...specs()].slice(0, 70);
    expect(s.length).toBe(70);
    const before = { ...engine.batches };
    const r = await Promise.all(s.map((x) => engine.range(x.q, x.t, x.f, x.cap)));
    const passes = engine.batches.passes - before.passes;
    expect(passes).toBeGreaterThanOrEqual(2);
    expect(passes).toBeLessThan(70);
    for (const [i, x] of s.entries()) expectRange(corpus, x.q, r[i], oracle(corpus, x.q, x.f, x.t), `query ${i} of 70`);
  });

  it('drain: every query taken before it is answered (not refused as closed), later ones are refused', async () => {
    const e = openEngine(tempDir());
    e.append(rowsOf(corpus));
    const s = specs().slice(0, 12);
    // Taken, and still waiting for their turn of the event loop, when the drain begins.
    const ranges = s.map((x) => e.range(x.q, x.t, x.f, x.cap));
    const tops = s.map((x) => e.topk(x.q, 10, -1, x.f, 'scan'));
    // Asked twice (two closers): both wait.
    await Promise.all([e.drain(), e.drain()]);
    e.close();
    const [r, t] = await Promise.all([Promise.all(ranges), Promise.all(tops)]);
    for (const [i, x] of s.entries()) {
      expectRange(corpus, x.q, r[i], oracle(corpus, x.q, x.f, x.t), `drained range ${i}`);
      expectTopK(corpus, x.q, t[i], 10, oracle(corpus, x.q, x.f), `drained top-k ${i}`);
    }
    await expect(e.range(s[0].q, s[0].t, {}, 1e6)).rejects.toThrow('the search engine is closed');
    await expect(e.topk(s[0].q, 10, -1, {}, 'scan')).rejects.toThrow('the search engine is closed');
  });

  it('a direct native call with 3 queries equals three single calls, caps and all', async () => {
    const e = openNative(tempDir());
    e.append(rowsOf(corpus, 0, 500));
    await e.seal();
    e.append(rowsOf(corpus, 500));
    const qs = [queries[5], queries[6], queries[7]];
    const t = qs.map((q, i) => gapThreshold(corpus, q, [10, 200, 300][i]));
    const sp: { threshold: number; cap: number; filter?: NativeFilter }[] = [
      { threshold: t[0], cap: 1e6, filter: { tmin: timeAt(0), tmax: timeAt(29) } },
      { threshold: t[1], cap: 1e6, filter: { sources: Uint8Array.of(0xff, 0x03), firstOnly: true } },
      { threshold: t[2], cap: 20 },
    ];
    // The queries sit at an offset inside a larger buffer: the addon must honour byteOffset.
    const buf = new Float32Array(5 * DIMS).fill(Number.NaN);
    qs.forEach((q, i) => buf.set(q, (i + 1) * DIMS));
    const batch = await e.range(buf.subarray(DIMS, 4 * DIMS), sp);
    expect(batch.length).toBe(3);
    for (let i = 0; i < 3; i++) {
      const [single] = await e.range(qs[i], [sp[i]]);
      expect(sortedOrds(batch[i]), `query ${i}`).toEqual(sortedOrds(single));
      expect(batch[i].overflow).toBe(single.overflow);
    }
    for (let i = 0; i < 2; i++) expectRange(corpus, qs[i], batch[i], oracle(corpus, qs[i], sp[i].filter, t[i]), `native batch query ${i}`);
    expect(batch[2].overflow).toBe(true);
    expect(batch[2].ords.length).toBe(21);
    expect(await e.range(new Float32Array(0), [])).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('top-k by scan', () => {
  it('equals the oracle top k, unfiltered', async () => {
    for (const [qi, q] of queries.slice(0, 10).entries())
      for (const k of [1, 10, 50]) expectTopK(corpus, q, await engine.topk(q, k, -1, {}, 'scan'), k, oracle(corpus, q), `query ${qi}, k ${k}`);
  });

  it('equals the oracle top k under filters and min_score', async () => {
    const filters: NativeFilter[] = [
      { firstOnly: true },
      { tmin: timeAt(10), tmax: timeAt(12) },
      { sources: Uint8Array.of(0, 0b10) },
      { sources: Uint8Array.of(0b1001), firstOnly: true, tmin: timeAt(30) },
    ];
    for (const [qi, q] of queries.slice(10, 16).entries()) {
      const min = gapThreshold(corpus, q, 120);
      for (const f of filters)
        for (const [k, m] of [
          [10, -1],
          [50, min],
        ]) {
          const want = oracle(corpus, q, f, m);
          expectTopK(corpus, q, await engine.topk(q, k, m, f, 'scan'), k, want, `query ${qi}, k ${k}, min ${m}, ${JSON.stringify(f)}`);
        }
    }
  });

  it('full scans asked together share one pass (two groups of 16 queries), each equal to the oracle', async () => {
    const filters: NativeFilter[] = [
      {},
      { firstOnly: true },
      { tmin: timeAt(10), tmax: timeAt(30) },
      { sources: Uint8Array.of(0, 0b10) },
      { sources: Uint8Array.of(0b1001), firstOnly: true, tmin: timeAt(30) },
      { tmin: timeAt(7), tmax: timeAt(7) },
    ];
    // 21 scans in one turn of the event loop: one native call, one pass; a far query planned
    // by the index ('auto') joins them, and near ones answered from the index run beside.
    const asks = queries.slice(0, 21).map((q, i) => {
      const f = filters[i % filters.length];
      const k = [1, 10, 50, 200][i % 4];
      const min = i % 3 === 2 ? gapThreshold(corpus, q, 60) : -1;
      return { q, f, k, min };
    });
    const rng = new Rng(950);
    const farQ = unit(Array.from({ length: DIMS }, () => rng.gauss()));
    const got = await Promise.all([
      ...asks.map(({ q, f, k, min }) => engine.topk(q, k, min, f, 'scan')),
      engine.topk(farQ, 10, -1, {}, 'auto', { scanMaxRows: 0 }),
      engine.topk(queries[22], 10, -1, {}, 'auto', { scanMaxRows: 0 }),
      engine.topk(queries[23], 0, -1, {}, 'scan'),
    ]);
    expect(got[23].ords.length, 'k = 0 beside them').toBe(0);
    asks.forEach(({ q, f, k, min }, i) => expectTopK(corpus, q, got[i], k, oracle(corpus, q, f, min), `scan ${i}, k ${k}, min ${min}, ${JSON.stringify(f)}`));
    expect(got[21].plan).toBe('scan-far');
    expectTopK(corpus, farQ, got[21], 10, oracle(corpus, farQ), 'far query, planned');
    expect(got[22].plan).toBe('index');
  });

  it('returns every allowed revision when k exceeds them, and nothing for k = 0', async () => {
    const q = queries[1];
    const lone = { sources: Uint8Array.of(0, 0, 0, 0, 1 << (LONE_SOURCE & 7)) };
    expectTopK(corpus, q, await engine.topk(q, 10, -1, lone, 'scan'), 10, oracle(corpus, q, lone), 'lone source');
    const narrow = { tmin: timeAt(7), tmax: timeAt(7), firstOnly: true };
    const want = oracle(corpus, q, narrow);
    expect(want.length).toBeGreaterThan(0);
    expect(want.length).toBeLessThan(100);
    expectTopK(corpus, q, await engine.topk(q, 100, -1, narrow, 'scan'), 100, want, 'narrow window');
    expectTopK(corpus, q, await engine.topk(q, 5000, -1, {}, 'scan'), 5000, oracle(corpus, q), 'k > all revisions');
    expect((await engine.topk(q, 0, -1, {}, 'scan')).ords.length).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------

describe('top-k by the index', () => {
  /** An index query, checked: inside the filter, above min_score, exact scores, best first, distinct. */
  function expectSound(c: Corpus, q: Float32Array, r: NativeHits, want: OHit[], k: number, what: string): void {
    expect(r.ords.length, what).toBeLessThanOrEqual(k);
    expect(new Set(r.ords).size, `${what}: distinct revisions`).toBe(r.ords.length);
    const byOrd = new Map(want.map((h) => [h.ord, h]));
    for (let i = 0; i < r.ords.length; i++) {
      const w = byOrd.get(r.ords[i]);
      expect(w, `${what}: ord ${r.ords[i]} is outside the filter or below min_score`).toBeDefined();
      expect(Math.abs(r.scores[i] - w!.score), `${what}: score of ord ${r.ords[i]} is exact`).toBeLessThanOrEqual(TOL);
      expectLabel(c, q, r.labels[i], w!, what);
      if (i > 0) expect(r.scores[i], `${what}: best first`).toBeLessThanOrEqual(r.scores[i - 1]);
    }
  }
  const far = (seed: number): Float32Array => {
    const rng = new Rng(seed);
    return unit(Array.from({ length: DIMS }, () => rng.gauss()));
  };

  it('is trained once the engine holds indexMinRows rows, with about sqrt(rows) lists', async () => {
    const s = engine.stats();
    expect(s.indexLists).toBe(Math.round(Math.sqrt(s.trainedRows)));
    expect(s).toMatchObject({ indexRows: corpus.rows, indexPending: 0, trainedRows: corpus.rows });
    const e = openEngine(tempDir(), { ...PROD, indexMinRows: corpus.rows + 1 });
    e.append(rowsOf(corpus));
    expect(await e.indexPending(1e9)).toBe(0);
    expect(e.stats()).toMatchObject({ indexLists: 0, indexPending: 0, indexRows: 0 });
    const vs = new VectorSearch({} as Catalog, e, { maxMatches: 1e6, topk: { scanMaxRows: 0 } });
    await vs.topK(queries[0], 10, -1, { includeEdits: true, sources: null });
    expect(vs.plans).toEqual({ scan: 1, 'scan-far': 0, index: 0, 'index-then-scan': 0 });
  });

  it('has top-10 recall ≥ 0.95 over 20 queries, with every score exact, reading a fraction of the rows', async () => {
    let found = 0;
    let rows = 0;
    for (const [qi, q] of queries.slice(0, 20).entries()) {
      const want = oracle(corpus, q);
      const r = await engine.topk(q, 10, -1, {}, 'index', { probeMaxRows: corpus.rows, farScore: -1 });
      expect(r.complete, `query ${qi}`).toBe(true);
      expect(r.plan, `query ${qi}`).toBe('index');
      expect(r.ords.length).toBe(10);
      expectSound(corpus, q, r, want, 10, `query ${qi}`);
      const cut = want[9].score - TOL;
      found += Array.from(r.scores).filter((s) => s >= cut).length;
      rows += r.probe.rows;
    }
    expect(found / 200).toBeGreaterThanOrEqual(0.95);
    expect(rows / 20).toBeLessThan(corpus.rows / 2);
  });

  it('a lone query sweeps its lists on every thread, and answers as the same query batched (one thread each)', async () => {
    // Few lists, so each holds several 256-row pieces the threads share; part of the rows in
    // the index file, part filed since (read from the columns), none pending.
    const e = new native.Engine({ dir: tempDir(), indexMinRows: 256, threads: 2, lists: 5 });
    opened.push(e);
    e.append(rowsOf(corpus, 0, 600));
    await e.seal();
    await indexAll(e);
    await e.saveIndex();
    e.append(rowsOf(corpus, 600));
    await indexAll(e);
    expect(e.stats()).toMatchObject({ indexLists: 5, indexPending: 0 });
    const opts = { probeMaxRows: corpus.rows, probeMinRows: corpus.rows / 2, farScore: -1 };
    const filters: (NativeFilter | null)[] = [null, { firstOnly: true }, { tmin: timeAt(0), tmax: timeAt(400), sources: bitmap([1, 2, 3, 5, 8]) }];
    for (const [qi, q] of queries.slice(0, 6).entries())
      for (const [fi, f] of filters.entries()) {
        const what = `query ${qi}, filter ${fi}`;
        const lone = await e.topk(q, 20, -1, f, 'index', opts);
        const both = new Float32Array(2 * DIMS);
        both.set(q);
        both.set(queries[qi + 6], DIMS);
        const spec = { k: 20, minScore: -1, filter: f, mode: 'index' as const, options: opts };
        const [batched] = await e.topkMany(both, [spec, spec]);
        expect([lone.probe.threads, batched.probe.threads], what).toEqual([2, 1]);
        expectTopK(corpus, q, lone, 20, oracle(corpus, q, f), what);
        expect(Array.from(lone.ords), what).toEqual(Array.from(batched.ords));
        expect(Array.from(lone.labels), what).toEqual(Array.from(batched.labels));
        expect(Array.from(lone.scores), what).toEqual(Array.from(batched.scores));
        // Both threads count toward when to stop: a lone sweep reads at least the batched one's lists.
        expect(lone.probe.lists, what).toBeGreaterThanOrEqual(batched.probe.lists);
        expect(lone.probe.allowed, what).toBeGreaterThanOrEqual(batched.probe.allowed);
      }
  });

  it('filtered: stays inside the filter; complete means filled or nothing more exists', async () => {
    const filters: NativeFilter[] = [
      { firstOnly: true },
      { tmin: timeAt(20), tmax: timeAt(25) },
      { sources: Uint8Array.of(0b100) },
      { sources: Uint8Array.of(0, 0, 0, 0, 1 << (LONE_SOURCE & 7)) },
      { sources: Uint8Array.of(0b11), tmin: timeAt(50), firstOnly: true },
      { tmin: timeAt(10) + 1, tmax: timeAt(11) - 1 },
    ];
    for (const [qi, q] of queries.slice(0, 6).entries()) {
      const min = gapThreshold(corpus, q, 60);
      for (const f of filters)
        for (const [k, m] of [
          [10, -1],
          [30, min],
        ]) {
          const what = `query ${qi}, k ${k}, min ${m}, ${JSON.stringify(f)}`;
          const want = oracle(corpus, q, f, m);
          const r = await engine.topk(q, k, m, f, 'index', { probeMaxRows: 400 });
          expectSound(corpus, q, r, want, k, what);
          if (r.complete) expect(r.ords.length, `${what}: complete but under-filled`).toBe(Math.min(k, want.length));
        }
    }
  });

  it('filtered: answers from the index where the planner sends it (a budget covering the lists), filled and equal to the oracle', async () => {
    // With a row budget as large as the corpus the index may read every list, so a planned
    // index answer must be complete: an index that gave up would show as index-then-scan.
    const vs = new VectorSearch({} as Catalog, engine, { maxMatches: 1e6, topk: { scanMaxRows: 0, probeMaxRows: corpus.rows, farScore: -1 } });
    const misses: string[] = [];
    let found = 0;
    let expected = 0;
    for (const [qi, q] of queries.slice(0, 4).entries())
      for (let h = 0; h < 60; h += 3) {
        const f = { tmin: timeAt(h), tmax: timeAt(h + 1), firstOnly: h % 2 === 0 };
        const want = oracle(corpus, q, f);
        const r = await engine.topk(q, 20, -1, f, 'index', { probeMaxRows: corpus.rows, farScore: -1 });
        if (!r.complete || r.ords.length !== Math.min(20, want.length)) misses.push(`query ${qi}, hours ${h}-${h + 1}: ${r.ords.length} of ${want.length}`);
        expectSound(corpus, q, r, want, 20, `query ${qi}, hours ${h}-${h + 1}`);
        const cut = want[Math.min(20, want.length) - 1].score - TOL;
        found += Array.from(r.scores).filter((x) => x >= cut).length;
        expected += Math.min(20, want.length);
        const planned = await vs.topK(q, 20, -1, { includeEdits: h % 2 !== 0, sources: null, since: f.tmin, until: f.tmax });
        if (planned.length !== Math.min(20, want.length)) misses.push(`planner, query ${qi}, hours ${h}-${h + 1}: ${planned.length} of ${want.length}`);
      }
    expect(misses, 'complete (or planned) but under-filled').toEqual([]);
    expect(vs.plans['index-then-scan']).toBe(0);
    expect(vs.plans.index).toBe(80);
    expect(found / expected).toBeGreaterThanOrEqual(0.95);
  });

  it('fills k when the best revisions have many chunks each (candidates are counted by revision)', async () => {
    const long = makeCorpus(4242, 130, { chunks: [14, 20], chunkSigma: 0.15 });
    const lq = makeQueries(long, 5, 6);
    const e = openEngine(tempDir(), { ...PROD, lists: 8 });
    e.append(rowsOf(long));
    await indexAll(e);
    const vs = new VectorSearch({} as Catalog, e, { maxMatches: 1e6, topk: { scanMaxRows: 0, probeMaxRows: long.rows } });
    for (const [qi, q] of lq.entries())
      for (const [k, f] of [
        [10, {}],
        [25, { firstOnly: true }],
      ] as [number, NativeFilter][]) {
        const what = `query ${qi}, k ${k}, ${JSON.stringify(f)}`;
        const want = oracle(long, q, f);
        const r = await e.topk(q, k, -1, f, 'index', { probeMaxRows: long.rows });
        expectSound(long, q, r, want, k, what);
        expect(r.complete, what).toBe(true);
        expect(r.ords.length, `${what}: under-filled`).toBe(Math.min(k, want.length));
        const planned = await vs.topK(q, k, -1, { includeEdits: !f.firstOnly, sources: null });
        expect(planned.length, `${what}: planner under-filled`).toBe(Math.min(k, want.length));
      }
  });

  it('scans the rows not yet filed beside the lists: new rows are found at once, with no full scan', async () => {
    const e = openEngine(tempDir(), PROD);
    e.append(rowsOf(corpus, 0, 700));
    await indexAll(e);
    e.append(rowsOf(corpus, 700));
    const pending = corpus.rows - corpus.revs[700].start;
    expect(e.stats().indexPending).toBe(pending);
    const vs = new VectorSearch({} as Catalog, e, { maxMatches: 1e6, topk: { scanMaxRows: 0, probeMaxRows: corpus.rows } });
    for (const [qi, q] of queries.slice(0, 10).entries()) {
      const want = oracle(corpus, q);
      const r = await e.topk(q, 10, -1, {}, 'index', { probeMaxRows: corpus.rows });
      expect(r.probe.pending, `query ${qi}`).toBe(pending);
      expect(r.probe.rows, `query ${qi}: lists read`).toBeLessThan(corpus.revs[700].start);
      expectSound(corpus, q, r, want, 10, `query ${qi}`);
      // A new revision at the top of the exact answer is in the index's answer too.
      const fresh = want.slice(0, 10).filter((h) => corpus.revs.indexOf(h.rev) >= 700);
      for (const h of fresh) expect(Array.from(r.ords), `query ${qi}: new ord ${h.ord}`).toContain(h.ord);
      await vs.topK(q, 10, -1, { includeEdits: true, sources: null });
    }
    expect(vs.plans.index).toBe(10);
    await indexAll(e);
    expect(e.stats().indexPending).toBe(0);
  });

  it('answers a query far from every list by an exact scan (scan-far), equal to the oracle', async () => {
    const vs = new VectorSearch({} as Catalog, engine, { maxMatches: 1e6, topk: { scanMaxRows: 0 } });
    for (let i = 0; i < 3; i++) {
      const q = far(900 + i);
      const r = await engine.topk(q, 10, -1, {}, 'index');
      expect(r.plan, `far query ${i}`).toBe('far');
      const got = await vs.topK(q, 10, -1, { includeEdits: true, sources: null });
      const want = oracle(corpus, q);
      expect(got.map((h) => h.ord)).toEqual(want.slice(0, 10).map((h) => h.ord));
    }
    expect(vs.plans['scan-far']).toBe(3);
    // Lists too many to steer by (a row budget below what lies within probe_delta) are far too.
    const near = queries[0];
    expect((await engine.topk(near, 10, -1, {}, 'index', { probeDelta: 2, probeMaxRows: 10 })).plan).toBe('far');
  });

  it('the planner never under-fills a page, however selective the domain', async () => {
    const vs = new VectorSearch({} as Catalog, engine, { maxMatches: 1e6, topk: { scanMaxRows: 0, probeMaxRows: 300 } });
    const inDomain = (rev: Rev, d: Domain): boolean =>
      (d.since === undefined || rev.time >= d.since) &&
      (d.until === undefined || rev.time <= d.until) &&
      (d.includeEdits || rev.first === 1) &&
      (d.sources === null || d.sources.has(rev.source));
    const domains: Domain[] = [
      { includeEdits: true, sources: null },
      { includeEdits: false, sources: null },
      { includeEdits: true, sources: new Set([LONE_SOURCE]) },
      { includeEdits: true, sources: new Set([4]), since: timeAt(15), until: timeAt(18) },
      { includeEdits: false, sources: new Set([1, 9]), since: timeAt(44) },
      { includeEdits: true, sources: null, since: timeAt(8), until: timeAt(8) },
      { includeEdits: true, sources: null, since: timeAt(8) + 1, until: timeAt(9) - 1 },
      { includeEdits: true, sources: new Set() },
    ];
    for (const [qi, q] of queries.slice(6, 14).entries()) {
      const mins = [-1, gapThreshold(corpus, q, 8), gapThreshold(corpus, q, 80)];
      for (const d of domains)
        for (const min of mins)
          for (const k of [10, 50]) {
            const what = `query ${qi}, k ${k}, min ${min}, domain ${JSON.stringify({ ...d, sources: d.sources && [...d.sources] })}`;
            const s = rowScores(corpus, q);
            const want = corpus.revs
              .filter((r) => inDomain(r, d))
              .map((r) => ({ ord: r.ord, score: Math.max(...Array.from(s.subarray(r.start, r.start + r.count))) }))
              .filter((h) => h.score >= min)
              .sort((a, b) => b.score - a.score);
            const got = await vs.topK(q, k, min, d);
            expect(got.length, `${what}: under-filled`).toBe(Math.min(k, want.length));
            const byOrd = new Map(want.map((h) => [h.ord, h.score]));
            got.forEach((h, i) => {
              expect(byOrd.has(h.ord), `${what}: ord ${h.ord} outside the domain`).toBe(true);
              expect(Math.abs(h.score - byOrd.get(h.ord)!), what).toBeLessThanOrEqual(TOL);
              if (i > 0) expect(h.score, `${what}: best first`).toBeLessThanOrEqual(got[i - 1].score);
            });
          }
    }
    // It did plan the index, and fell back to the scan where the row budget ran out.
    expect(vs.plans.index).toBeGreaterThan(0);
    expect(vs.plans['index-then-scan']).toBeGreaterThan(0);
  });

  it('estimates allowed rows from the time index and per-source counts, close to the count', () => {
    for (const f of [
      {},
      { firstOnly: true },
      { tmin: timeAt(10), tmax: timeAt(30) },
      { sources: Uint8Array.of(0b1010) },
      { sources: Uint8Array.of(0b11), tmin: timeAt(50), firstOnly: true },
    ] as NativeFilter[]) {
      const n = engine.count(f);
      const e = engine.estimate(f);
      expect(Math.abs(e - n), JSON.stringify(f)).toBeLessThanOrEqual(Math.max(30, n * 0.35));
    }
    expect(engine.estimate({ tmin: timeAt(10), tmax: timeAt(30) })).toBe(engine.count({ tmin: timeAt(10), tmax: timeAt(30) }));
  });
});

// ---------------------------------------------------------------------------------------------

describe('lifecycle: delta, seal, compact, save, reopen', () => {
  const small = makeCorpus(99, 400);
  const sq = makeQueries(small, 11, 6);

  /** Range and top-k results over revisions [0, upto) of `small`, checked against the oracle. */
  async function check(e: SearchEngine, upto: number, what: string): Promise<{ range: number[][]; topk: number[][] }> {
    const out = { range: [] as number[][], topk: [] as number[][] };
    for (const [qi, q] of sq.entries()) {
      const t = gapThreshold(small, q, 60);
      const f = qi % 2 ? { tmin: timeAt(10), tmax: timeAt(45) } : {};
      const r = await e.range(q, t, f, 1e6);
      expectRange(small, q, r, oracle(small, q, f, t, [0, upto]), `${what}, range ${qi}`);
      const k = await e.topk(q, 20, -1, f, 'scan');
      expectTopK(small, q, k, 20, oracle(small, q, f, -Infinity, [0, upto]), `${what}, top-k ${qi}`);
      out.range.push(sortedOrds(r));
      out.topk.push(Array.from(k.ords));
    }
    return out;
  }

  it('answers the same through seal, delta, compaction, saveIndex and a reopen', async () => {
    const dir = tempDir();
    let e = openEngine(dir);
    e.append(rowsOf(small, 0, 150));
    const delta = await check(e, 150, 'delta only');
    await e.seal();
    expect(e.stats()).toMatchObject({ segments: 1, deltaRows: 0, segmentRows: small.revs[150].start });
    expect(await check(e, 150, 'one segment')).toEqual(delta);

    e.append(rowsOf(small, 150, 280));
    const mixed = await check(e, 280, 'segment + delta');
    // Results draw on both the segment and the delta.
    const fromDelta = new Set(small.revs.slice(150, 280).map((r) => r.ord));
    expect(mixed.range.flat().some((o) => fromDelta.has(o))).toBe(true);
    expect(mixed.range.flat().some((o) => !fromDelta.has(o))).toBe(true);

    await e.seal();
    e.append(rowsOf(small, 280));
    expect(e.stats()).toMatchObject({ segments: 2 });
    const before = await check(e, 400, 'two segments + delta');
    await indexAll(e);
    const indexed = await indexCheck(e, 'filed, two segments + delta');
    await e.compact();
    expect(e.stats()).toMatchObject({ segments: 1, deltaRows: small.rows - small.revs[280].start });
    expect(await check(e, 400, 'compacted')).toEqual(before);
    expect(await indexCheck(e, 'compacted')).toEqual(indexed);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('seg-')).length).toBe(1);

    await e.seal();
    await e.saveIndex();
    expect(await indexCheck(e, 'sealed')).toEqual(indexed);
    e.close();
    await expect(e.range(sq[0], 0.5, {}, 10)).rejects.toThrow(/closed/);

    e = openEngine(dir);
    expect(e.stats()).toMatchObject({
      segmentRows: small.rows,
      deltaRows: 0,
      indexRows: small.rows,
      indexPending: 0,
      indexSaved: small.rows,
      nextLabel: small.rows,
    });
    expect(await check(e, 400, 'reopened')).toEqual(before);
    expect(await indexCheck(e, 'reopened')).toEqual(indexed);
  });

  it('maps its segment and index files at 2 MiB boundaries, asks for huge pages where they are read in bulk, and reads them back unchanged', async () => {
    // Mapping (native/core/segment.cc) places every mapping of 2 MiB or more on a huge-page
    // boundary (a file mapped off one can never be mapped by 2 MiB page-table entries), and
    // marks MADV_HUGEPAGE ("hg" in VmFlags) what is read in bulk: the index file and a segment's
    // int8 column, not the f16 column the rescoring reads a row at a time.
    const big = makeCorpus(7, 3000);
    const dir = tempDir();
    const e = openEngine(dir);
    e.append(rowsOf(big, 0));
    await e.seal();
    await indexAll(e);
    await e.saveIndex();
    // Each mapping of the engine's files: its file, its address, its offset in the file, its flags.
    const areas: { file: string; at: number; offset: number; flags: string[] }[] = [];
    for (const line of fs.readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
      const m = /^([0-9a-f]+)-[0-9a-f]+ \S+ ([0-9a-f]+) \S+ \S+\s*(\S*)$/.exec(line);
      if (m?.[3].startsWith(dir)) areas.push({ file: path.basename(m[3]), at: Number.parseInt(m[1], 16), offset: Number.parseInt(m[2], 16), flags: [] });
      else if (m) areas.push({ file: '', at: 0, offset: 0, flags: [] });
      else if (line.startsWith('VmFlags:') && areas.length > 0) areas[areas.length - 1].flags = line.slice('VmFlags:'.length).trim().split(/\s+/);
    }
    const mine = areas.filter((x) => x.file !== '');
    // An int8 column of 4 MiB or more holds a whole 2 MiB page, wherever it starts.
    expect(big.rows).toBeGreaterThanOrEqual(4096);
    const segment = mine.filter((x) => x.file.startsWith('seg-'));
    const index = mine.filter((x) => x.file === 'index.nmi');
    expect(segment.length).toBeGreaterThan(1);
    expect(index.length).toBeGreaterThan(0);
    for (const x of mine.filter((y) => y.offset === 0)) {
      expect(fs.statSync(path.join(dir, x.file)).size).toBeGreaterThanOrEqual(2 << 20);
      expect(x.at % (2 << 20), x.file).toBe(0);
    }
    // The index file is read in bulk from its start (its last partial 2 MiB page aside).
    expect(index.find((x) => x.offset === 0)?.flags, 'index.nmi').toContain('hg');
    // The segment starts with its f16 column: no huge pages there; its int8 column has them.
    expect(segment.find((x) => x.offset === 0)?.flags).not.toContain('hg');
    expect(segment.some((x) => x.flags.includes('hg'))).toBe(true);
    // Written through 4 MiB blocks and mapped this way, the rows read back as the oracle says.
    const q = makeQueries(big, 3, 1)[0];
    const k = await e.topk(q, 10, -1, {}, 'scan');
    expectTopK(big, q, k, 10, oracle(big, q, {}, -Infinity), 'segment written in aligned blocks');
  });

  /** Index top-10 (first revisions, a budget covering every list) for each query: exact scores, complete. */
  async function indexCheck(e: SearchEngine, what: string): Promise<number[][]> {
    const out: number[][] = [];
    for (const [i, q] of sq.entries()) {
      // No far line: these probes test the lists, and a noisy one may score every centroid low.
      const r = await e.topk(q, 10, -1, { firstOnly: true }, 'index', { probeMaxRows: small.rows, farScore: -1 });
      expect(r.complete, `${what}: query ${i}`).toBe(true);
      const want = new Map(oracle(small, q, { firstOnly: true }).map((h) => [h.ord, h.score]));
      for (let j = 0; j < r.ords.length; j++) expect(Math.abs(r.scores[j] - want.get(r.ords[j])!), `${what}: query ${i}`).toBeLessThanOrEqual(TOL);
      out.push(Array.from(r.ords));
    }
    return out;
  }

  it('files rows appended after a save, and saves them again; a reopen keeps both', async () => {
    const dir = tempDir();
    let e = openEngine(dir);
    e.append(rowsOf(small, 0, 200));
    await indexAll(e);
    await e.seal();
    await e.saveIndex();
    expect(e.stats()).toMatchObject({ indexRows: small.revs[200].start, indexSaved: small.revs[200].start });
    e.append(rowsOf(small, 200));
    expect(e.stats().indexPending).toBe(small.rows - small.revs[200].start);
    await indexAll(e);
    await e.seal();
    await e.saveIndex();
    expect(e.stats()).toMatchObject({ indexRows: small.rows, indexPending: 0, indexSaved: small.rows });
    const beforeReopen = await indexCheck(e, 'before reopen');
    e.close();
    e = openEngine(dir);
    expect(e.stats()).toMatchObject({ indexRows: small.rows, indexPending: 0 });
    expect(await indexCheck(e, 'after two saves')).toEqual(beforeReopen);
    // Every list read: the file's lists, merged over two saves with each list's first revisions
    // in front (a first-revisions query reads only those), answer exactly as the oracle.
    const every = { probeDelta: 2, probeMaxRows: small.rows, farScore: -1 };
    for (const [i, q] of sq.entries())
      for (const f of [{ firstOnly: true }, {}, { firstOnly: true, tmin: timeAt(5), tmax: timeAt(60) }]) {
        const r = await e.topk(q, 10, -1, f, 'index', every);
        expect(r.complete).toBe(true);
        expectTopK(small, q, r, 10, oracle(small, q, f, -Infinity), `query ${i}, ${JSON.stringify(f)}, after two saves`);
      }
  });

  it('rebuilds a missing or damaged index file: every row pending, then filed again', async () => {
    for (const damage of [(f: string) => fs.truncateSync(f, 100), (f: string) => fs.unlinkSync(f), (f: string) => fs.writeFileSync(f, 'NMIVF01\0garbage')]) {
      const dir = tempDir();
      let e = openEngine(dir);
      e.append(rowsOf(small));
      await indexAll(e);
      await e.seal();
      await e.saveIndex();
      e.close();
      damage(path.join(dir, 'index.nmi'));
      e = openEngine(dir);
      expect(e.stats()).toMatchObject({ indexLists: 0, indexRows: 0, indexPending: small.rows });
      await indexAll(e);
      expect(e.stats()).toMatchObject({ indexRows: small.rows, indexPending: 0 });
      await indexCheck(e, 'rebuilt');
    }
  });

  it('trains again, filing every row anew, once the rows have grown 4x', async () => {
    const e = openEngine(tempDir(), { ...PROD, indexMinRows: 100 });
    e.append(rowsOf(small, 0, 80));
    await indexAll(e);
    const first = e.stats();
    expect(first.trainedRows).toBe(small.revs[80].start);
    expect(first.indexLists).toBe(16); // at least 16 lists
    e.append(rowsOf(small, 80));
    await indexAll(e);
    const s = e.stats();
    expect(s.trainedRows).toBe(small.rows);
    expect(s.indexLists).toBe(Math.round(Math.sqrt(small.rows)));
    expect(s).toMatchObject({ indexRows: small.rows, indexPending: 0 });
    await indexCheck(e, 'retrained');
  });

  it('forgets unsealed rows at reopen and reports the sealed next label (LMDB re-syncs from there)', async () => {
    const dir = tempDir();
    let e = openEngine(dir);
    e.append(rowsOf(small, 0, 100));
    await e.seal();
    e.append(rowsOf(small, 100, 150));
    e.close();
    e = openEngine(dir);
    expect(e.stats()).toMatchObject({ segmentRows: small.revs[100].start, deltaRows: 0, nextLabel: small.revs[100].start });
    e.append(rowsOf(small, 100));
    await check(e, 400, 're-synced');
  });

  /** A closed directory holding one sealed segment of 20 revisions. */
  async function sealedDir(): Promise<{ dir: string; seg: string }> {
    const dir = tempDir();
    const e = openEngine(dir);
    e.append(rowsOf(small, 0, 20));
    await e.seal();
    e.close();
    const seg = fs.readdirSync(dir).find((f) => /^seg-\d+\.nms$/.test(f))!;
    expect(seg).toBeDefined();
    return { dir, seg };
  }

  it('refuses a damaged or missing segment with a clear error', async () => {
    const cases: [string, (file: string) => void, RegExp][] = [
      ['truncated by 64 bytes', (f) => fs.truncateSync(f, fs.statSync(f).size - 64), /damaged/],
      ['truncated to 10 bytes', (f) => fs.truncateSync(f, 10), /too short|damaged/],
      ['grown by a page', (f) => fs.appendFileSync(f, Buffer.alloc(4096)), /damaged/],
      [
        'header overwritten',
        (f) => {
          const fd = fs.openSync(f, 'r+');
          fs.writeSync(fd, Buffer.from('XXXXXXXX'), 0, 8, 0);
          fs.closeSync(fd);
        },
        /damaged/,
      ],
      ['deleted', (f) => fs.unlinkSync(f), /No such file/],
    ];
    for (const [what, damage, message] of cases) {
      const { dir, seg } = await sealedDir();
      damage(path.join(dir, seg));
      let error: unknown;
      try {
        openEngine(dir);
      } catch (e) {
        error = e;
      }
      expect(error, what).toBeInstanceOf(Error);
      expect((error as Error).message, what).toMatch(message);
      expect((error as Error).message, what).toContain(seg);
    }
  });

  it('releases the directory after a failed open, so a repaired directory opens again', async () => {
    const { dir, seg } = await sealedDir();
    const file = path.join(dir, seg);
    const good = fs.readFileSync(file);
    fs.truncateSync(file, good.length - 64);
    expect(() => openEngine(dir)).toThrow(/damaged/);
    fs.writeFileSync(file, good);
    const e = openEngine(dir);
    expect(e.stats().segmentRows).toBe(small.revs[20].start);
  });

  it('refuses an unknown manifest entry', async () => {
    const { dir } = await sealedDir();
    fs.appendFileSync(path.join(dir, 'manifest'), 'bogus 1\n');
    expect(() => openEngine(dir)).toThrow(/unknown entry bogus/);
  });

  it('deletes stray segment and temp files at open, keeping the live segment', async () => {
    const { dir, seg } = await sealedDir();
    fs.writeFileSync(path.join(dir, 'seg-99999999.nms'), 'stray');
    fs.writeFileSync(path.join(dir, `${seg}.tmp`), 'half-written');
    const e = openEngine(dir);
    expect(fs.existsSync(path.join(dir, 'seg-99999999.nms'))).toBe(false);
    expect(fs.existsSync(path.join(dir, `${seg}.tmp`))).toBe(false);
    expect(fs.existsSync(path.join(dir, seg))).toBe(true);
    expect(e.stats()).toMatchObject({ segments: 1, segmentRows: small.revs[20].start });
    const q = sq[0];
    expectRange(small, q, await e.range(q, -1, {}, 1e6), oracle(small, q, null, -1, [0, 20]), 'after cleanup');
  });

  it('one engine owns a directory until it is closed', () => {
    const dir = tempDir();
    const e = openEngine(dir);
    expect(() => openEngine(dir)).toThrow(EngineLockedError);
    e.close();
    expect(openEngine(dir).stats().nextLabel).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------

describe('ids beyond 2^32', () => {
  for (const [labelBase, ordBase] of [
    [2 ** 40, 2 ** 32],
    [2 ** 32 + 5, 2 ** 40],
  ]) {
    it(`round-trips labels from ${labelBase} and ords from ${ordBase} through range, top-k, the index and a reopen`, async () => {
      const c = makeCorpus(labelBase % 1000, 120, { labelBase, ordBase });
      const qs = makeQueries(c, 3, 4);
      const dir = tempDir();
      let e = openEngine(dir);
      e.append(rowsOf(c, 0, 80));
      await e.seal();
      e.append(rowsOf(c, 80));
      await indexAll(e);
      const run = async (what: string) => {
        for (const [qi, q] of qs.entries()) {
          const t = gapThreshold(c, q, 30);
          expectRange(c, q, await e.range(q, t, { tmin: timeAt(5) }, 1e6), oracle(c, q, { tmin: timeAt(5) }, t), `${what} range ${qi}`);
          expectTopK(c, q, await e.topk(q, 10, -1, {}, 'scan'), 10, oracle(c, q), `${what} scan ${qi}`);
          const h = await e.topk(q, 5, -1, { firstOnly: true }, 'index', { probeMaxRows: c.rows });
          expect(h.complete).toBe(true);
          const want = new Map(oracle(c, q, { firstOnly: true }).map((x) => [x.ord, x]));
          for (let i = 0; i < h.ords.length; i++) {
            const w = want.get(h.ords[i]);
            expect(w, `${what} index ${qi}: ord ${h.ords[i]}`).toBeDefined();
            expectLabel(c, q, h.labels[i], w!, `${what} index ${qi}`);
          }
        }
      };
      await run('delta');
      expect(e.stats().nextLabel).toBe(labelBase + c.rows);
      expect(e.nextLabel).toBe(labelBase + c.rows);
      await e.seal();
      await e.saveIndex();
      e.close();
      e = openEngine(dir);
      expect(e.stats()).toMatchObject({ segmentRows: c.rows, indexRows: c.rows, indexPending: 0, nextLabel: labelBase + c.rows });
      expect(e.nextLabel).toBe(labelBase + c.rows);
      await run('reopened');
    });
  }
});

// ---------------------------------------------------------------------------------------------

describe('argument checks', () => {
  const good = (): NativeRows => rowsOf(corpus, 0, 3);
  const n = (): number => good().labels.length;

  it('rejects wrong typed-array types and lengths in append with TypeError / RangeError, leaving the engine unchanged', () => {
    const e = openNative(tempDir());
    const cases: [string, Partial<Record<keyof NativeRows, unknown>>, ErrorConstructor][] = [
      ['vectors one float short', { vectors: good().vectors.subarray(1) }, RangeError],
      ['vectors of 1023 floats per row', { vectors: new Float32Array(n() * 1023) }, RangeError],
      ['vectors as Float64Array', { vectors: new Float64Array(n() * DIMS) }, TypeError],
      ['vectors as a plain array', { vectors: Array.from(good().vectors) }, TypeError],
      ['labels as Uint32Array', { labels: Uint32Array.from(good().labels) }, TypeError],
      ['labels as BigUint64Array', { labels: BigUint64Array.from(Array.from(good().labels, BigInt)) }, TypeError],
      ['ords one short', { ords: good().ords.subarray(1) }, RangeError],
      ['times one long', { times: new Float64Array(n() + 1) }, RangeError],
      ['sources as Int32Array', { sources: new Int32Array(n()) }, TypeError],
      ['sources one short', { sources: new Uint32Array(n() - 1) }, RangeError],
      ['first as a plain array', { first: [1, 1, 1] }, TypeError],
      ['first missing', { first: undefined }, TypeError],
      ['a fractional label', { labels: Float64Array.of(0.5, 1, 2) }, RangeError],
      ['a negative ord', { ords: Float64Array.of(-1, 1, 2) }, RangeError],
      ['a label past 2^53', { labels: Float64Array.of(2 ** 53, 2 ** 53 + 2, 2 ** 53 + 4) }, RangeError],
    ];
    for (const [what, patch, type] of cases) {
      const rows = { ...good(), ...patch } as NativeRows;
      expect(() => e.append(rows), what).toThrow(type);
    }
    expect(() => (e.append as (x: unknown) => void)(undefined)).toThrow(TypeError);
    expect(e.stats()).toMatchObject({ deltaRows: 0, nextLabel: 0, indexPending: 0 });
    e.append(good());
    expect(e.stats()).toMatchObject({ deltaRows: n(), nextLabel: n() });
  });

  it('rejects labels that are not new, in a later batch or within one', () => {
    const e = openNative(tempDir());
    e.append(rowsOf(corpus, 0, 3));
    const k = e.stats().nextLabel;
    const one = (labels: number[]): NativeRows => ({
      labels: Float64Array.from(labels),
      ords: Float64Array.from(labels, (l) => 1e9 + l),
      times: new Float64Array(labels.length).fill(T0),
      sources: new Uint32Array(labels.length),
      first: new Uint8Array(labels.length),
      vectors: corpus.vectors.slice(0, labels.length * DIMS),
    });
    expect(() => e.append(one([k - 1])), 'a label already held').toThrow(/not new/);
    expect(() => e.append(one([0])), 'the first label').toThrow(/not new/);
    expect(e.stats().deltaRows).toBe(k);
    // Within one batch: a repeated label (indexPending would then read a row that was never
    // copied) and a decreasing pair both break "labels must be new and increasing".
    expect(() => e.append(one([k, k])), 'a label twice in one batch').toThrow();
    expect(() => e.append(one([k + 5, k + 4])), 'decreasing labels in one batch').toThrow();
    expect(e.stats().deltaRows, 'rejected batches add nothing').toBe(k);
  });

  it('leaves the engine unchanged when an append is refused (labels too sparse for the attribute table)', async () => {
    const e = openNative(tempDir());
    e.append(rowsOf(corpus, 0, 3));
    const before = e.stats();
    const far = {
      labels: Float64Array.of(2 ** 45),
      ords: Float64Array.of(7),
      times: Float64Array.of(T0),
      sources: Uint32Array.of(1),
      first: Uint8Array.of(1),
      vectors: corpus.vectors.slice(0, DIMS),
    };
    expect(() => e.append(far)).toThrow();
    expect(e.stats()).toEqual(before);
    expect(e.count(null)).toBe(before.deltaRows);
    const r = await e.range(corpus.vectors.slice(0, DIMS), [{ threshold: -1, cap: 1e6 }]);
    expect(Array.from(r[0].labels)).not.toContain(2 ** 45);
  });

  it('rejects bad queries and filters in range / topk with TypeError / RangeError', async () => {
    const e = openNative(tempDir());
    e.append(rowsOf(corpus, 0, 5));
    const q = queries[0];
    const spec = { threshold: 0, cap: 10 };
    expect(() => e.range(q.subarray(1), [spec])).toThrow(RangeError);
    expect(() => e.range(q, [spec, spec])).toThrow(RangeError);
    expect(() => e.range(new Float32Array(3 * DIMS), [spec])).toThrow(RangeError);
    expect(() => e.range(Float64Array.from(q) as unknown as Float32Array, [spec])).toThrow(TypeError);
    expect(() => e.range(q, spec as never)).toThrow(TypeError);
    expect(() => e.range(q, [{ ...spec, filter: { sources: [1, 2] as never } }])).toThrow(TypeError);
    expect(() => e.range(q, [{ ...spec, filter: 'all' as never }])).toThrow(TypeError);
    expect(() => e.topk(q.subarray(1), 5, -1, null, 'scan')).toThrow(RangeError);
    expect(() => e.topk(new Float32Array(2 * DIMS), 5, -1, null, 'scan')).toThrow(RangeError);
    expect(() => e.topk(Array.from(q) as unknown as Float32Array, 5, -1, null, 'scan')).toThrow(TypeError);
    expect(() => e.topk(q, 5, -1, { sources: new Uint16Array(1) as never }, 'index')).toThrow(TypeError);
    expect(() => e.topk(q, 5, -1, null, 'hnsw' as never)).toThrow(TypeError);
    expect(() => e.topk(q, 5, -1, null, 'auto', 'fast' as never)).toThrow(TypeError);
    for (const bad of [{ probeDelta: -1 }, { probeDelta: Number.NaN }, { farScore: 2 }, { scanMaxRows: -5 }, { probeMaxRows: 1.5 }, { scanMaxRows: 'x' }])
      expect(() => e.topk(q, 5, -1, null, 'auto', bad as never), JSON.stringify(bad)).toThrow(RangeError);
    expect(() => e.indexPending(-1)).toThrow(RangeError);
    expect(() => new native.Engine({ dir: tempDir(), lists: -3 })).toThrow(RangeError);
    // The wrapper checks the query before queueing, and fails that query alone (a rejection).
    const se = openEngine(tempDir());
    await expect(se.range(q.subarray(0, 1023), 0, {}, 10)).rejects.toThrow(RangeError);
    // Nothing was damaged on the way.
    expect((await e.range(q, [{ threshold: -1, cap: 100 }]))[0].ords.length).toBe(oracle(corpus, q, null, -1, [0, 5]).length);
    // count() converts its filter like the others (a wrong type is a TypeError there too).
    expect(() => e.count({ sources: 'x' as never })).toThrow(TypeError);
  });

  it('a cap of Infinity means no cap (or a RangeError), never an overflow after one row', async () => {
    const e = openNative(tempDir());
    e.append(rowsOf(corpus, 0, 5));
    const q = queries[0];
    let r: Awaited<ReturnType<NativeEngine['range']>> | undefined;
    try {
      r = await e.range(q, [{ threshold: -1, cap: Infinity }]);
    } catch (x) {
      expect(x).toBeInstanceOf(RangeError);
    }
    if (r) expect({ overflow: r[0].overflow, rows: r[0].ords.length }, 'cap Infinity').toEqual({ overflow: false, rows: 5 });
  });

  it('rejects caps and k that are not non-negative integers with RangeError (no wrap-around, no huge allocation)', async () => {
    const e = openNative(tempDir());
    e.append(rowsOf(corpus, 0, 5));
    await indexAll(e);
    const q = queries[0];
    for (const cap of [Number.NaN, -1, 1.5]) await expect((async () => e.range(q, [{ threshold: -1, cap }]))(), `cap ${cap}`).rejects.toThrow(RangeError);
    for (const k of [-1, 1.5, Number.NaN])
      for (const mode of ['scan', 'index', 'auto'] as const)
        await expect((async () => e.topk(q, k, -1, null, mode))(), `k ${k} by ${mode}`).rejects.toThrow(RangeError);
  });

  /** Runs `body` (TypeScript, top-level await) in a child Node process, so a crash fails one test, not the file. */
  function child(body: string): { status: number | null; signal: NodeJS.Signals | null; out: string } {
    const dir = tempDir();
    const file = path.join(dir, 'child.mts');
    const src = (p: string) => JSON.stringify(path.join(ROOT, p));
    fs.writeFileSync(
      file,
      `import { native } from ${src('src/native.ts')};\nimport { SearchEngine } from ${src('src/search/engine.ts')};\n` +
        `const dir = ${JSON.stringify(dir)};\nconst q = new Float32Array(1024); q[0] = 1;\n` +
        `const rows = (labels) => ({ labels: Float64Array.from(labels), ords: Float64Array.from(labels), times: new Float64Array(labels.length), sources: new Uint32Array(labels.length), first: new Uint8Array(labels.length), vectors: Float32Array.from({ length: labels.length * 1024 }, (_, i) => (i % 1025 === 0 ? 1 : 0)) });\n` +
        body,
    );
    const r = spawnSync(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    return { status: r.status, signal: r.signal, out: `${r.stdout}${r.stderr}` };
  }

  it('a batched range with a bad filter rejects that query; its batch-mates still resolve (no uncaught exception)', () => {
    const r = child(`
      process.on('uncaughtException', (e) => { console.log('UNCAUGHT ' + e.message); process.exit(3); });
      const e = new SearchEngine(dir, { lists: 0, indexMinRows: 2, threads: 2, passes: 1, topkBatches: 2 });
      e.append(rows([0, 1, 2]));
      const settle = (p) => p.then((x) => 'resolved ' + x.ords.length, (x) => 'rejected ' + x.name);
      const out = await Promise.all([settle(e.range(q, -1, {}, 10)), settle(e.range(q, -1, { sources: [1] }, 10)), settle(e.range(q, -1, { firstOnly: false }, 10))]);
      console.log(JSON.stringify(out));
      // The engine still serves after the failures.
      for (let i = 0; i < 3; i++) await Promise.all([settle(e.range(q, -1, { sources: 'x' }, 10))]);
      console.log(JSON.stringify(await settle(e.range(q, -1, {}, 10))));
      e.close();
    `);
    expect(r.out).not.toMatch(/UNCAUGHT/);
    expect(r.out).toContain(JSON.stringify(['resolved 3', 'rejected TypeError', 'resolved 3']));
    expect(r.out).toContain('"resolved 3"\n');
    expect(r.status, r.out).toBe(0);
  });

  it('a top-k call out keeps the process alive until it is answered; an idle engine never does', () => {
    // Top-k calls are answered by the engine's own threads (native/engine_wrap.cc, TopkDispatch),
    // not a libuv work item: nothing else here holds the event loop open.
    const r = child(`
      const e = new native.Engine({ dir, indexMinRows: 2 });
      e.append(rows([0, 1, 2]));
      e.topk(q, 2, -1, null, 'scan').then((h) => console.log('answered ' + h.ords.length));
      e.topkMany(Float32Array.from([...q, ...q]), [{ k: 1, minScore: -1, mode: 'scan' }, { k: 3, minScore: -1, mode: 'auto' }])
        .then((a) => console.log('answered many ' + a.map((h) => h.ords.length).join(',')));
    `);
    expect(r.out).toContain('answered 2');
    expect(r.out).toContain('answered many 1,3');
    expect(r.status, r.out).toBe(0);
    // An engine with no call out, never closed, lets the process end.
    const idle = child(`
      const e = new native.Engine({ dir, indexMinRows: 2 });
      e.append(rows([0, 1, 2]));
      console.log('answered ' + (await e.topk(q, 1, -1, null, 'scan')).ords.length);
    `);
    expect(idle.out).toContain('answered 1');
    expect(idle.status, idle.out).toBe(0);
  });

  it('an engine collected without a close, a top-k call out, still answers it and lets the process end', () => {
    const r = child(`
      import v8 from 'node:v8';
      import vm from 'node:vm';
      v8.setFlagsFromString('--expose-gc');
      const gc = vm.runInNewContext('gc');
      let e = new native.Engine({ dir, indexMinRows: 2 });
      e.append(rows([0, 1, 2]));
      const out = e.topk(q, 2, -1, null, 'scan');
      e = null;
      for (let i = 0; i < 5; i++) { gc(); await new Promise((r) => setImmediate(r)); }
      console.log('answered ' + (await out).ords.length);
    `);
    expect(r.out).toContain('answered 2');
    expect(r.signal, r.out).toBeNull();
    expect(r.status, r.out).toBe(0);
  });

  it('a close with top-k calls out settles every one (answered, or refused as closed), and later calls are refused', () => {
    const r = child(`
      const e = new native.Engine({ dir, indexMinRows: 2 });
      e.append(rows(Array.from({ length: 64 }, (_, i) => i)));
      const settle = (p) => p.then((h) => 'answered', (x) => (/closed/.test(x.message) ? 'closed' : 'other ' + x.message));
      const out = Array.from({ length: 40 }, (_, i) => settle(i % 2 ? e.topk(q, 5, -1, null, 'scan') : e.topkMany(q, [{ k: 5, minScore: -1, mode: 'auto' }])));
      e.close();
      const all = await Promise.all(out);
      console.log('settled ' + all.length + ' ' + JSON.stringify([...new Set(all)].sort()));
      console.log('after ' + (await settle(e.topk(q, 5, -1, null, 'scan'))) + ' ' + (await settle(e.topkMany(q, [{ k: 5, minScore: -1, mode: 'scan' }]))));
    `);
    expect(r.out).toMatch(/settled 40 \[("answered",?)?("closed")?\]/);
    expect(r.out).toContain('after closed closed');
    expect(r.status, r.out).toBe(0);
  });

  it('a duplicate label in one append never crashes the process at indexPending', () => {
    const r = child(`
      const e = new native.Engine({ dir, indexMinRows: 1 });
      try { e.append(rows([0, 0])); console.log('append accepted'); } catch (x) { console.log('append threw'); }
      try { await e.indexPending(100); console.log('indexed'); } catch (x) { console.log('indexPending threw'); }
      e.close();
    `);
    expect(r.signal, r.out).toBeNull();
    expect(r.status, r.out).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------

describe('int8 margin', () => {
  /**
   * One dominant component sets the int8 scale; every other component sits just under a
   * rounding midpoint (4.49 steps), so all 1023 rounding errors share a sign. The query is
   * aligned with those components: the int8 estimate is ~0.08 low, far beyond the 0.01 margin.
   */
  const oneWayRow = () => {
    const v = new Float32Array(DIMS);
    const step = 4.49 / 127;
    const a = 1 / Math.sqrt(1 + (DIMS - 1) * step * step);
    v[0] = a;
    for (let i = 1; i < DIMS; i++) v[i] = step * a;
    const q = new Float32Array(DIMS);
    for (let i = 1; i < DIMS; i++) q[i] = 1 / Math.sqrt(DIMS - 1);
    let score = 0;
    for (let i = 0; i < DIMS; i++) score += v[i] * q[i];
    return { v, q, score };
  };

  it('never loses a row, even a unit vector whose int8 rounding errors all point one way', async () => {
    const { v, q, score } = oneWayRow();
    const e = openNative(tempDir());
    e.append({
      labels: Float64Array.of(0),
      ords: Float64Array.of(0),
      times: Float64Array.of(T0),
      sources: Uint32Array.of(0),
      first: Uint8Array.of(1),
      vectors: v,
    });
    const [r] = await e.range(q, [{ threshold: score - 0.005, cap: 10 }]);
    expect(Array.from(r.ords), `range at ${score - 0.005} misses a row scoring ${score}`).toEqual([0]);
    expect(Math.abs(r.scores[0] - score)).toBeLessThanOrEqual(TOL);
    const k = await e.topk(q, 1, score - 0.005, null, 'scan');
    expect(Array.from(k.ords), 'top-k with min_score').toEqual([0]);
  });

  it('the index keeps that row against a rival whose bound is tight (the refined bound is rigorous, not typical)', async () => {
    // The same row, its estimate 0.08 low and its bound 0.0835 wide, beside a rival scoring 0.01
    // less whose bound is ~0.013: the rival's lower bound is above the row's estimate, so only a
    // full-width bound on the row keeps it to be rescored. Filler rows let the index train.
    const { v, q, score } = oneWayRow();
    const rng = new Rng(77);
    const noise = jitter(rng, new Float64Array(DIMS), 1);
    let along = 0;
    for (let i = 0; i < DIMS; i++) along += noise[i] * q[i];
    const rival = unit(
      Array.from(noise, (x, i) => (score - 0.01) * q[i] + (Math.sqrt(1 - (score - 0.01) ** 2) * (x - along * q[i])) / Math.sqrt(1 - along * along)),
    );
    const n = 300;
    const vectors = new Float32Array(n * DIMS);
    for (let r = 0; r < n - 2; r++) vectors.set(jitter(rng, new Float64Array(DIMS), 1), r * DIMS);
    vectors.set(rival, (n - 2) * DIMS);
    vectors.set(v, (n - 1) * DIMS);
    const e = openEngine(tempDir(), { ...PROD, lists: 4 });
    e.append({
      labels: Float64Array.from({ length: n }, (_, i) => i),
      ords: Float64Array.from({ length: n }, (_, i) => i),
      times: new Float64Array(n).fill(T0),
      sources: new Uint32Array(n),
      first: new Uint8Array(n).fill(1),
      vectors,
    });
    await indexAll(e);
    // Filed rows (bounded per component), then saved ones (bounded by their measured error too).
    for (const state of ['filed', 'saved']) {
      if (state === 'saved') {
        await e.seal();
        await e.saveIndex();
        expect(e.stats().indexSaved).toBe(n);
      }
      const r = await e.topk(q, 1, -1, {}, 'index', { probeDelta: 2, probeMaxRows: n, farScore: -1 });
      expect(r.plan, state).toBe('index');
      expect(Array.from(r.ords), `${state}: the row scoring ${score} beats the rival at ${score - 0.01}`).toEqual([n - 1]);
      expect(Math.abs(r.scores[0] - score), state).toBeLessThanOrEqual(TOL);
    }
  });
});

describe('index rescoring', () => {
  it('returns exactly the scan top k when thousands of chunks score within a few hundredths; scans of a small k (alone, or sharing a pass) give the head of the full ranking', async () => {
    // One story: every chunk scores the query 0.71 ± 0.02, so the k-th best lies among hundreds
    // of near ties and a rescoring walk that stopped early, or judged a revision by one chunk,
    // would show here.
    const rng = new Rng(2024);
    const q0 = jitter(rng, new Float64Array(DIMS), 1);
    const revs = 600;
    const per = 3;
    const n = revs * per;
    const vectors = new Float32Array(n * DIMS);
    for (let i = 0; i < n; i++) vectors.set(jitter(rng, q0, 1), i * DIMS);
    const e = openEngine(tempDir(), { ...PROD, lists: 6 });
    e.append({
      labels: Float64Array.from({ length: n }, (_, i) => i),
      ords: Float64Array.from({ length: n }, (_, i) => Math.floor(i / per)),
      times: new Float64Array(n).fill(T0),
      sources: new Uint32Array(n),
      first: new Uint8Array(n).fill(1),
      vectors,
    });
    await indexAll(e);
    const queries = [q0, ...Array.from({ length: 4 }, () => jitter(rng, q0, 0.3))];
    // The same queries over filed rows, then over a saved index file (bounded by measured error too).
    for (const state of ['filed', 'saved']) {
      if (state === 'saved') {
        await e.seal();
        await e.saveIndex();
        expect(e.stats().indexSaved).toBe(n);
      }
      // Scans of a small k stop scoring once the next bound is below the k-th best; alone and
      // sharing a pass, they give the head of the full ranking (k = every revision: no stop).
      const full = await Promise.all(queries.map((q) => e.topk(q, revs, -1, {}, 'scan')));
      for (const k of [10, 50, 200]) {
        const alone: NativeHits[] = [];
        for (const q of queries) alone.push(await e.topk(q, k, -1, {}, 'scan'));
        const shared = await Promise.all(queries.map((q) => e.topk(q, k, -1, {}, 'scan')));
        for (const [t, got] of [...alone.entries(), ...shared.map((h, t) => [t, h] as const)]) {
          const what = `${state}, scan of query ${t}, k ${k}`;
          expect(Array.from(got.ords), what).toEqual(Array.from(full[t].ords.slice(0, k)));
          expect(Array.from(got.scores), what).toEqual(Array.from(full[t].scores.slice(0, k)));
        }
      }
      for (const [t, q] of queries.entries()) {
        const exact = await e.topk(q, revs, -1, {}, 'scan');
        const every = new Map(Array.from(exact.ords, (o, i) => [o, { score: exact.scores[i], label: exact.labels[i] }]));
        for (const k of [10, 50]) {
          const what = `${state}, query ${t}, k ${k}`;
          const all = await e.topk(q, k, -1, {}, 'index', { probeDelta: 2, probeMaxRows: n, farScore: -1 });
          expect(all.plan, what).toBe('index');
          expect(Array.from(all.ords), `${what}: every list read`).toEqual(Array.from(exact.ords.slice(0, k)));
          expect(Array.from(all.scores), what).toEqual(Array.from(exact.scores.slice(0, k)));
          expect(Array.from(all.labels), what).toEqual(Array.from(exact.labels.slice(0, k)));
          // Fewer lists read: a revision's chunks in lists not read are scored too, so each
          // score returned is its revision's best chunk.
          const some = await e.topk(q, k, -1, {}, 'index', { probeDelta: 0, probeMinRows: 1, probeMaxRows: n, farScore: -1 });
          expect(some.probe.lists, what).toBeLessThan(6);
          for (let i = 0; i < some.ords.length; i++) {
            const want = every.get(some.ords[i])!;
            expect(some.scores[i], `${what}: ord ${some.ords[i]}`).toBe(want.score);
            expect(some.labels[i], `${what}: ord ${some.ords[i]}`).toBe(want.label);
          }
        }
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('ISA dispatch', () => {
  it('gives the same hits under every ISA this CPU supports, scores within 1e-5 (single, batched, top-k, index)', async () => {
    const auto = native.setIsa('auto');
    expect(() => native.setIsa('sse9' as never)).toThrow(/does not support/);
    const qs = queries.slice(0, 3);
    // One native pass of 21 queries, each its own filter: six tiles of four, or with AMX two
    // groups of 16 (the last of each padded).
    const batch = queries.slice(3, 24);
    const pass = new Float32Array(batch.length * DIMS);
    batch.forEach((q, i) => pass.set(q, i * DIMS));
    const specs = batch.map((q, i) => ({
      threshold: gapThreshold(corpus, q, 40 + 30 * i),
      cap: 1e6,
      filter: i % 3 ? { tmin: timeAt(5 * i), firstOnly: i % 2 === 0 } : {},
    }));
    const direct = openNative(tempDir());
    direct.append(rowsOf(corpus));
    const run = async () => {
      const out: { range: (NativeHits & { overflow: boolean })[]; topk: NativeHits[] } = { range: [], topk: [] };
      for (const q of qs) {
        const t = gapThreshold(corpus, q, 200);
        out.range.push(await engine.range(q, t, {}, 1e6));
        out.range.push(await engine.range(q, t, { tmin: timeAt(10), tmax: timeAt(30), sources: Uint8Array.of(0xf0, 0x03) }, 1e6));
        out.topk.push(await engine.topk(q, 25, -1, { firstOnly: true }, 'scan'));
        out.topk.push(await engine.topk(q, 25, -1, {}, 'index', { probeMaxRows: 500 }));
      }
      out.range.push(...(await direct.range(pass, specs)));
      // Full scans asked together: one shared pass (topk_scan_batch).
      out.topk.push(...(await Promise.all(batch.map((q, i) => engine.topk(q, 5 + 3 * i, -1, specs[i].filter, 'scan')))));
      return out;
    };
    const ref = await run();
    const tried: string[] = [];
    try {
      for (const isa of ['generic', 'avx2', 'avx512', 'avx512vnni', 'amx'] as const) {
        try {
          native.setIsa(isa);
        } catch (e) {
          expect((e as Error).message).toMatch(/does not support/);
          continue;
        }
        tried.push(isa);
        expect(engine.stats().isa).toBe(isa);
        const got = await run();
        for (const kind of ['range', 'topk'] as const)
          got[kind].forEach((h, i) => {
            const byOrd = new Map(Array.from(ref[kind][i].ords, (o, j) => [o, ref[kind][i].scores[j]]));
            expect(sortedOrds(h), `${isa} ${kind} ${i}`).toEqual(sortedOrds(ref[kind][i]));
            h.ords.forEach((o, j) => expect(Math.abs(h.scores[j] - byOrd.get(o)!), `${isa} ${kind} ${i}`).toBeLessThanOrEqual(1e-5));
          });
      }
    } finally {
      expect(native.setIsa('auto')).toBe(auto);
    }
    expect(tried).toContain('generic');
    expect(tried).toContain(auto);
  });
});
