/**
 * Monitors (src/search/monitors.ts over native/core/monitors.h) against a float64 oracle in
 * plain JS: dot products of the original float32 vectors, best chunk per (monitor, revision).
 * Data: clustered unit vectors (centroids → revisions → 1–4 chunks), the batch's rows shuffled
 * so a revision's chunks are not adjacent; monitors near some chunks, a few anywhere. Floors are
 * picked inside gaps of each monitor's revision scores, so f16 rounding (< 1e-4) cannot move a
 * pair across one and set equality is the assertion; floors exactly at a pair's score are
 * checked by the 1e-4 rule (found when >= floor + 1e-4, never when < floor - 1e-4).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../test/helpers/rng.js';
import { DIMS } from '../dims.js';
import { native } from '../native.js';
import { SearchEngine } from './engine.js';
import type { MonitorChunks, MonitorMatches } from './monitors.js';

const TOL = 1e-4;
const ISAS = ['generic', 'avx2', 'avx512', 'avx512vnni', 'amx'] as const;

function unit(v: Float64Array): Float32Array {
  let s = 0;
  for (const x of v) s += x * x;
  const inv = 1 / Math.sqrt(s);
  return Float32Array.from(v, (x) => x * inv);
}

/** normalise(base + sigma * g), g ~ N(0, I/1024). */
function jitter(rng: Rng, base: ArrayLike<number> | null, sigma: number): Float32Array {
  const v = new Float64Array(DIMS);
  for (let i = 0; i < DIMS; i++) v[i] = (base ? base[i] : 0) + (sigma * rng.gauss()) / 32;
  return unit(v);
}

/** A batch of `nRevs` revisions (1–4 chunks each) around a few centroids, rows shuffled. */
function makeBatch(rng: Rng, nRevs: number): MonitorChunks & { rows: Float32Array[] } {
  const centroids = Array.from({ length: 5 }, () => jitter(rng, null, 1));
  const rows: { v: Float32Array; ord: number }[] = [];
  for (let r = 0; r < nRevs; r++) {
    const center = jitter(rng, centroids[rng.int(centroids.length)], 1.1);
    const count = rng.range(1, 4);
    for (let c = 0; c < count; c++) rows.push({ v: jitter(rng, center, 0.7), ord: 1000 + 7 * r });
  }
  const order = rng.shuffle(rows.map((_, i) => i));
  const n = rows.length;
  const out = { vectors: new Float32Array(n * DIMS), ords: new Float64Array(n), labels: new Float64Array(n), rows: [] as Float32Array[] };
  order.forEach((src, i) => {
    out.vectors.set(rows[src].v, i * DIMS);
    out.ords[i] = rows[src].ord;
    out.labels[i] = 2 ** 40 + src;
    out.rows.push(rows[src].v);
  });
  return out;
}

function dot64(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < DIMS; i++) s += a[i] * b[i];
  return s;
}

/** scores[q][r]: monitor q against row r, in float64. */
function oracleScores(monitors: Float32Array[], rows: Float32Array[]): number[][] {
  return monitors.map((m) => rows.map((r) => dot64(m, r)));
}

/** Per monitor, each revision's best chunk: ord → {score, label}. */
function bestByRevision(scores: number[], batch: MonitorChunks): Map<number, { score: number; label: number }> {
  const best = new Map<number, { score: number; label: number }>();
  scores.forEach((s, r) => {
    const b = best.get(batch.ords[r]);
    if (!b || s > b.score) best.set(batch.ords[r], { score: s, label: batch.labels[r] });
  });
  return best;
}

/** A floor in a gap of at least 3e-4 between revision scores, near rank `target`; 2 (nothing) if none. */
function gapFloor(best: Map<number, { score: number }>, target: number): number {
  const s = [...best.values()].map((b) => b.score).sort((a, b) => b - a);
  for (let d = 0; d < s.length; d++)
    for (const i of [target + d, target - d]) if (i >= 1 && i < s.length && s[i - 1] - s[i] > 3e-4) return Math.fround((s[i - 1] + s[i]) / 2);
  return 2;
}

/** The matches checked against the oracle under the 1e-4 rule (set equality when floors sit in gaps). */
function check(got: MonitorMatches, scores: number[][], floors: Float32Array, batch: MonitorChunks, what: string): void {
  const n = got.monitor.length;
  expect(got.ord.length, what).toBe(n);
  expect(got.label.length, what).toBe(n);
  expect(got.score.length, what).toBe(n);
  const byLabel = new Map<number, number>();
  batch.labels.forEach((l, r) => byLabel.set(l, r));
  const seen = new Set<string>();
  for (let i = 0; i < n; i++) {
    const q = got.monitor[i];
    if (i > 0) expect(got.monitor[i - 1] < q || (got.monitor[i - 1] === q && got.ord[i - 1] < got.ord[i]), `${what}: order at ${i}`).toBe(true);
    seen.add(`${q}:${got.ord[i]}`);
    const best = bestByRevision(scores[q], batch).get(got.ord[i]);
    expect(best, `${what}: monitor ${q} ord ${got.ord[i]} not in the batch`).toBeDefined();
    expect(got.score[i], `${what}: monitor ${q} below its floor`).toBeGreaterThanOrEqual(floors[q]);
    expect(Math.abs(got.score[i] - best!.score), `${what}: monitor ${q} ord ${got.ord[i]} score`).toBeLessThanOrEqual(TOL);
    const r = byLabel.get(got.label[i]);
    expect(r, `${what}: label`).toBeDefined();
    expect(batch.ords[r!], `${what}: the label is a chunk of the revision`).toBe(got.ord[i]);
    expect(best!.score - scores[q][r!], `${what}: monitor ${q} ord ${got.ord[i]}: label ${got.label[i]} is not the best chunk`).toBeLessThanOrEqual(TOL);
  }
  expect(seen.size, `${what}: a (monitor, revision) twice`).toBe(n);
  scores.forEach((s, q) => {
    for (const [ord, b] of bestByRevision(s, batch))
      if (b.score >= floors[q] + TOL) expect(seen.has(`${q}:${ord}`), `${what}: monitor ${q} missed ord ${ord} (${b.score} >= ${floors[q]})`).toBe(true);
  });
}

function concat(vs: Float32Array[]): Float32Array {
  const out = new Float32Array(vs.length * DIMS);
  vs.forEach((v, i) => out.set(v, i * DIMS));
  return out;
}

let dir: string;
let engine: SearchEngine;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nm-monitors-test-'));
  engine = new SearchEngine(dir, { lists: 0, indexMinRows: 256, threads: 2, passes: 1, topkBatches: 1 });
});

afterAll(() => {
  engine.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('monitors', () => {
  const rng = new Rng(41);
  const batch = makeBatch(rng, 45);
  // 37 monitors: not a multiple of the 4-wide tile; most near a chunk, every fifth anywhere.
  const monitors = Array.from({ length: 37 }, (_, q) =>
    q % 5 === 4 ? jitter(rng, null, 1) : jitter(rng, batch.rows[rng.int(batch.rows.length)], q % 2 ? 0.6 : 1),
  );
  const scores = oracleScores(monitors, batch.rows);
  const floors = Float32Array.from(monitors, (_, q) => (q === 9 ? -1 : gapFloor(bestByRevision(scores[q], batch), 1 + ((q * 7) % 25))));
  const vectors = concat(monitors);

  it('finds exactly the oracle set under every ISA this CPU supports, with the same scores', async () => {
    const auto = native.setIsa('auto');
    const tried: string[] = [];
    let ref: MonitorMatches | null = null;
    try {
      for (const isa of ISAS) {
        try {
          native.setIsa(isa);
        } catch {
          continue;
        }
        tried.push(isa);
        const got = await engine.scoreMonitors(vectors, floors, batch);
        check(got, scores, floors, batch, isa);
        expect(got.rescored, `${isa}: the int8 pass rules pairs out`).toBeLessThan(monitors.length * batch.labels.length);
        if (!ref) ref = got;
        expect(Array.from(got.ord), isa).toEqual(Array.from(ref.ord));
        expect(Array.from(got.monitor), isa).toEqual(Array.from(ref.monitor));
        got.score.forEach((s, i) => expect(Math.abs(s - ref!.score[i]), isa).toBeLessThanOrEqual(1e-5));
      }
    } finally {
      expect(native.setIsa('auto')).toBe(auto);
    }
    expect(tried).toContain('generic');
    expect(tried).toContain(auto);
    expect(ref!.monitor.length, 'the data gives matches').toBeGreaterThan(monitors.length);
    // Monitor 9's floor is -1: every revision of the batch, once.
    expect(ref!.monitor.filter((q) => q === 9).length).toBe(new Set(batch.ords).size);
  });

  it('misses nothing just above a floor, keeps the 1e-4 rule at it', async () => {
    // Floors 2e-4 under a revision's score (it must be found: the int8 estimate alone, ~0.01
    // off, would miss about half), at it exactly, and 2e-4 over it (it must not be).
    const ranked = scores.map((s) => [...bestByRevision(s, batch).values()].map((b) => b.score).sort((a, b) => b - a));
    for (let k = 0; k < 6; k++) {
      const edge = Float32Array.from(ranked, (s, q) => s[(q + 3 * k) % s.length] + [-2e-4, 0, 2e-4][k % 3]);
      check(await engine.scoreMonitors(vectors, edge, batch), scores, edge, batch, `edge floors ${k}`);
    }
  });

  it('returns one entry per revision, its best chunk', async () => {
    // One revision of three chunks, all above the floor, in the middle of the batch order.
    const base = batch.rows[0];
    const chunks = [jitter(rng, base, 0.3), jitter(rng, base, 0.2), jitter(rng, base, 0.4)];
    const one: MonitorChunks = { vectors: concat([batch.rows[5], ...chunks]), ords: Float64Array.of(1, 99, 99, 99), labels: Float64Array.of(10, 11, 12, 13) };
    const s = chunks.map((c) => dot64(base, c));
    const got = await engine.scoreMonitors(base, Float32Array.of(Math.min(...s) - 0.01), one);
    const i = Array.from(got.ord).indexOf(99);
    expect(got.ord.filter((o) => o === 99).length).toBe(1);
    expect(got.label[i]).toBe(11 + s.indexOf(Math.max(...s)));
    expect(Math.abs(got.score[i] - Math.max(...s))).toBeLessThanOrEqual(TOL);
  });

  it('handles one monitor, one chunk and empty sides', async () => {
    const one = { vectors: batch.vectors.slice(0, DIMS), ords: batch.ords.slice(0, 1), labels: batch.labels.slice(0, 1) };
    const sub = (rows: number) => scores.map((s) => s.slice(0, rows));
    check(await engine.scoreMonitors(vectors, floors, one), sub(1), floors, one, 'n=1');
    const m1 = vectors.slice(3 * DIMS, 4 * DIMS);
    check(await engine.scoreMonitors(m1, floors.slice(3, 4), batch), [scores[3]], floors.slice(3, 4), batch, 'm=1');
    check(await engine.scoreMonitors(m1, floors.slice(3, 4), one), [scores[3].slice(0, 1)], floors.slice(3, 4), one, 'm=1 n=1');
    const empty = { vectors: new Float32Array(0), ords: new Float64Array(0), labels: new Float64Array(0) };
    expect((await engine.scoreMonitors(vectors, floors, empty)).monitor.length).toBe(0);
    expect((await engine.scoreMonitors(new Float32Array(0), new Float32Array(0), batch)).monitor.length).toBe(0);
  });

  it("merges a batch larger than one pass (2,048 rows) to each revision's best chunk", async () => {
    const big = makeBatch(new Rng(7), 900);
    expect(big.labels.length).toBeGreaterThan(2048);
    const some = monitors.slice(0, 9).map((v, q) => (q % 3 === 2 ? v : jitter(rng, big.rows[rng.int(big.rows.length)], 0.6)));
    const s = oracleScores(some, big.rows);
    const f = Float32Array.from(s, (row, q) => gapFloor(bestByRevision(row, big), 3 + 5 * q));
    check(await engine.scoreMonitors(concat(some), f, big), s, f, big, 'two passes');
  });

  it('scores batch after batch against one prepared set', async () => {
    const set = await engine.prepareMonitors(vectors, floors);
    expect(set.size).toBe(monitors.length);
    const again = await set.score(batch);
    check(again, scores, floors, batch, 'prepared set');
    expect(await set.rawDots(batch.vectors)).toBe(await set.rawDots(batch.vectors));
  });

  it('refuses malformed input with a TypeError or RangeError, never a crash', async () => {
    const set = await engine.prepareMonitors(vectors, floors);
    const ok = { vectors: batch.vectors, ords: batch.ords, labels: batch.labels };
    await expect(engine.prepareMonitors(vectors.slice(1), floors)).rejects.toThrow(RangeError);
    await expect(engine.prepareMonitors(vectors, floors.slice(1))).rejects.toThrow(RangeError);
    await expect(
      engine.prepareMonitors(
        vectors,
        Float32Array.from(floors, (f, i) => (i === 3 ? Number.NaN : f)),
      ),
    ).rejects.toThrow(/floors\[3\]/);
    await expect(engine.prepareMonitors(Array.from(vectors) as never, floors)).rejects.toThrow(TypeError);
    await expect(engine.prepareMonitors(vectors, new Float64Array(floors) as never)).rejects.toThrow(TypeError);
    await expect(set.score({ ...ok, vectors: ok.vectors.slice(0, DIMS + 5) })).rejects.toThrow(RangeError);
    await expect(set.score({ ...ok, ords: ok.ords.slice(1) })).rejects.toThrow(RangeError);
    await expect(set.score({ ...ok, labels: new Float64Array(ok.labels.length + 1) })).rejects.toThrow(RangeError);
    await expect(set.score({ ...ok, ords: Float64Array.from(ok.ords, (o, i) => (i === 2 ? 1.5 : o)) })).rejects.toThrow(RangeError);
    await expect(set.score({ ...ok, labels: Float64Array.from(ok.labels, (l, i) => (i === 2 ? -1 : l)) })).rejects.toThrow(RangeError);
    const inf = ok.vectors.slice();
    inf[DIMS + 7] = Number.POSITIVE_INFINITY;
    await expect(set.score({ ...ok, vectors: inf })).rejects.toThrow(/chunks.vectors\[1031\]/);
    await expect(set.score({ ...ok, ords: new Uint32Array(ok.ords) as never })).rejects.toThrow(TypeError);
    await expect(set.score(null as never)).rejects.toThrow(TypeError);
    // A handle not made by prepareMonitors.
    const raw = new native.Engine({ dir: fs.mkdtempSync(path.join(dir, 'other-')), threads: 1 });
    try {
      expect(() => raw.scoreMonitors({} as never, ok)).toThrow(TypeError);
      expect(() => raw.monitorDots(null as never, ok)).toThrow(TypeError);
    } finally {
      raw.close();
    }
    // Still answers afterwards.
    check(await set.score(batch), scores, floors, batch, 'after refusals');
  });

  it("scores a window of the engine's own rows (scoreLabels) as it scores the same chunks handed in", async () => {
    // The batch's rows appended in label order, in two appends with a seal between (a segment and the delta).
    const byLabel = Array.from(batch.labels.keys()).sort((a, b) => batch.labels[a] - batch.labels[b]);
    const sorted: MonitorChunks = {
      vectors: concat(byLabel.map((i) => batch.rows[i])),
      ords: Float64Array.from(byLabel, (i) => batch.ords[i]),
      labels: Float64Array.from(byLabel, (i) => batch.labels[i]),
    };
    const rowsOf = (a: number, b: number) => ({
      labels: sorted.labels.slice(a, b),
      ords: sorted.ords.slice(a, b),
      times: new Float64Array(b - a).fill(1_700_000_000),
      sources: new Uint32Array(b - a).fill(1),
      first: new Uint8Array(b - a).fill(1),
      vectors: sorted.vectors.slice(a * DIMS, b * DIMS),
    });
    const n = sorted.labels.length;
    const own = new SearchEngine(fs.mkdtempSync(path.join(dir, 'own-')), { lists: 0, indexMinRows: 1 << 20, threads: 2, passes: 1, topkBatches: 1 });
    try {
      own.append(rowsOf(0, 40));
      await own.seal();
      own.append(rowsOf(40, n));
      const set = await own.prepareMonitors(vectors, floors);
      const scoresByLabel = scores.map((s) => byLabel.map((i) => s[i]));
      const lo = sorted.labels[0];
      // The whole sequence, then a window cut inside revisions and across the segment's edge.
      for (const [a, b] of [
        [0, n],
        [17, n - 9],
      ]) {
        const window = { vectors: sorted.vectors.slice(a * DIMS, b * DIMS), ords: sorted.ords.slice(a, b), labels: sorted.labels.slice(a, b) };
        const got = await set.scoreLabels(sorted.labels[a], b === n ? sorted.labels[n - 1] + 1 : sorted.labels[b]);
        check(
          got,
          scoresByLabel.map((s) => s.slice(a, b)),
          floors,
          window,
          `labels [${a}, ${b})`,
        );
        const want = await set.score(window);
        expect(Array.from(got.monitor)).toEqual(Array.from(want.monitor));
        expect(Array.from(got.ord)).toEqual(Array.from(want.ord));
        expect(Array.from(got.label)).toEqual(Array.from(want.label));
        expect(Array.from(got.score)).toEqual(Array.from(want.score));
      }
      expect((await set.scoreLabels(sorted.labels[n - 1] + 1, sorted.labels[n - 1] + 50)).monitor.length, 'labels not held').toBe(0);
      // A span far wider than the rows it holds costs the rows, not the span.
      const whole = await set.scoreLabels(lo, sorted.labels[n - 1] + 1);
      expect(Array.from((await set.scoreLabels(0, 2 ** 52)).ord)).toEqual(Array.from(whole.ord));
      expect((await set.scoreLabels(lo + 5, lo)).monitor.length, 'an empty range').toBe(0);
      await expect(set.scoreLabels(-1, 3)).rejects.toThrow(RangeError);
      await expect(set.scoreLabels('0' as never, 3)).rejects.toThrow(TypeError);
    } finally {
      own.close();
    }
  });

  it("runs on the addon's background threads, at nice 19 (Linux)", async () => {
    await (await engine.prepareMonitors(vectors, floors)).score(batch);
    const tasks = fs.existsSync('/proc/self/task') ? fs.readdirSync('/proc/self/task') : [];
    if (tasks.length === 0) return;
    // Field 19 of /proc/<pid>/task/<tid>/stat is the nice value (after the parenthesised name).
    const nice = tasks.map((t) => {
      try {
        const stat = fs.readFileSync(`/proc/self/task/${t}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      } catch {
        return Number.NaN;
      }
    });
    expect(nice.filter((x) => x === 19).length, `nice values of this process's threads: ${nice.join(' ')}`).toBeGreaterThanOrEqual(1);
  });
});
