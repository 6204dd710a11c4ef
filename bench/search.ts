/**
 * The search core on a large cached corpus (bench/big-corpus.ts; BENCH_CHUNKS, default
 * 300,000; the size is 1,000,000): recall of the native engine against the float32 JS oracle (exactRange), and
 * its speed against its own limits, all measured in this process:
 *
 * - recall_time: order=time sets (service.search.range) against the oracle at thresholds
 *   that give ~10, ~300 and ~3,000 rows, unfiltered and under a 10% time window, two
 *   sources, first revisions only, and all three; plus the largest |score − f32| seen.
 * - recall_relevance: top-50 planned (service.search.topK) against the oracle's top 50,
 *   unfiltered and filtered.
 * - range_bw_ratio: a full-corpus range query ÷ (int8 bytes ÷ the single-threaded read
 *   bandwidth native.measureBandwidth reports for a buffer at least that large).
 * - window_ratio: a range query over a 10% time window ÷ the full-corpus one.
 * - hnsw_speedup: exact-scan top-50 ÷ planned top-50, unfiltered.
 * - batch_gain: range queries/s with 16 in flight ÷ one at a time.
 *
 * The oracle reads every vector from LMDB in JS (~4 µs a chunk), so BENCH_QUERIES (default
 * 20 below 200k chunks, else 6) is kept small; every oracle pass serves all filters and
 * thresholds of its query. Timings are medians; only the ratios are the result.
 */
import { native } from '../src/native.js';
import { exactRange, inDomain, type Domain } from '../src/search/index.js';
import { openService } from '../src/service.js';
import { benchChunks, benchConfig, benchDataDir, benchQueries, DAYS, ensureBigCorpus, START_SEC } from './big-corpus.js';
import { envInt } from './corpus.js';

const chunks = benchChunks();
const dir = benchDataDir(chunks);
const info = await ensureBigCorpus(chunks, dir);
const nQueries = envInt('BENCH_QUERIES', chunks <= 200_000 ? 20 : 6);
const reps = envInt('BENCH_REPS', 20);

const rssBefore = process.memoryUsage().rss;
let t0 = performance.now();
const service = await openService(benchConfig(dir));
const openMs = performance.now() - t0;
const { store, catalog, engine, search } = service;
const stats = engine.stats();
console.log(
  `opened ${stats.nextLabel} chunks, ${catalog.size} revisions in ${openMs.toFixed(0)} ms (RSS +${((process.memoryUsage().rss - rssBefore) / 1e6).toFixed(0)} MB); ` +
    `engine ${JSON.stringify(stats)}`,
);

const median = (xs: number[]): number => {
  const s = xs.slice().sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const timeIt = async (f: () => Promise<unknown>): Promise<number> => {
  const t = performance.now();
  await f();
  return performance.now() - t;
};

// ---- filters ----
const ids = new Map(store.listSources().map((s) => [s.name, s.id]));
const twoSources = new Set([ids.get('Wire One')!, ids.get('Café Économie')!]);
const year = DAYS * 86400;
/** A 10% window of the year around `t`, clipped into the year. */
const windowAround = (t: number) => {
  const since = Math.min(Math.max(START_SEC, Math.round(t - year * 0.05)), START_SEC + year - Math.round(year * 0.1));
  return { since, until: since + Math.round(year * 0.1) };
};
const filters: { name: string; domain: (t: number) => Domain }[] = [
  { name: 'none', domain: () => ({ includeEdits: true, sources: null }) },
  { name: '10% window', domain: (t) => ({ ...windowAround(t), includeEdits: true, sources: null }) },
  { name: '2 sources', domain: () => ({ includeEdits: true, sources: twoSources }) },
  { name: 'first only', domain: () => ({ includeEdits: false, sources: null }) },
  { name: 'all three', domain: (t) => ({ ...windowAround(t), includeEdits: false, sources: twoSources }) },
];
const targets = [10, 300, 3000];

// ---- recall against the f32 oracle ----
const queries = benchQueries(service, nQueries, 99);
/** `boundary`: misses whose f32 score is within 1e-4 of the threshold (inside the score tolerance). */
interface Acc { found: number; expected: number; extra: number; boundary: number; maxErr: number; rows: number; n: number }
const acc = (): Acc => ({ found: 0, expected: 0, extra: 0, boundary: 0, maxErr: 0, rows: 0, n: 0 });
const timeAcc = new Map<string, Acc>();
const relAcc = new Map<string, Acc>();
/** Full-corpus ~300-row thresholds, reused by the timing runs. */
const fullThresholds: number[] = [];
let oracleMs = 0;
let boundaryMisses = 0;
const all: Domain = { includeEdits: true, sources: null };
console.log(`f32 oracle over ${nQueries} queries (each one pass over all ${stats.nextLabel} chunks in JS)…`);
for (const [qi, { label, query }] of queries.entries()) {
  t0 = performance.now();
  const scored = exactRange(store, catalog, query, -Infinity, all);
  oracleMs += performance.now() - t0;
  const f32 = new Float64Array(catalog.size).fill(Number.NaN);
  for (const s of scored) f32[s.ord] = s.score;
  const t = catalog.eventTime[catalog.labelOrd[label]];
  for (const f of filters) {
    const d = f.domain(t);
    const inD = scored.filter((s) => inDomain(catalog, s.ord, d)).sort((a, b) => b.score - a.score);
    for (const n of targets) {
      // Midway between the n-th score and the next lower distinct one. An edit shares its
      // unchanged chunks' vectors with the revision before it, so equal scores are common; a
      // threshold equal to rows' own f32 score would make recall hinge on rounding below 1e-5.
      let m = Math.min(n, inD.length);
      while (m < inD.length && inD[m - 1].score - inD[m].score < 1e-7) m++;
      const thr = m < inD.length ? (inD[m - 1].score + inD[m].score) / 2 : inD[inD.length - 1].score - 1e-3;
      if (f.name === 'none' && n === 300) fullThresholds.push(thr);
      const want = new Set(inD.slice(0, m).map((s) => s.ord));
      const got = await search.range(query, thr, d);
      const gotSet = new Set(got.map((s) => s.ord));
      const a = timeAcc.get(`${f.name}|${n}`) ?? acc();
      for (const s of got) {
        if (want.has(s.ord)) a.found++;
        else a.extra++;
        a.maxErr = Math.max(a.maxErr, Math.abs(s.score - f32[s.ord]));
      }
      for (const o of want) if (!gotSet.has(o) && Math.abs(f32[o] - thr) < 1e-4) a.boundary++;
      a.expected += want.size;
      a.rows += got.length;
      a.n++;
      timeAcc.set(`${f.name}|${n}`, a);
    }
    const k = 50;
    const want = inD.slice(0, k);
    const wantSet = new Set(want.map((s) => s.ord));
    const got = await search.topK(query, k, -1, d);
    const r = relAcc.get(f.name) ?? acc();
    for (const s of got) {
      if (wantSet.has(s.ord)) r.found++;
      else if (want.length === k && f32[s.ord] >= want[k - 1].score - 1e-4) boundaryMisses++;
      r.maxErr = Math.max(r.maxErr, Math.abs(s.score - f32[s.ord]));
    }
    r.expected += want.length;
    r.rows += got.length;
    r.n++;
    relAcc.set(f.name, r);
  }
  process.stdout.write(`  query ${qi + 1}/${nQueries}\r`);
}
const plans = { ...search.plans };
const sum = (m: Map<string, Acc>) => [...m.values()].reduce((s, a) => ({ found: s.found + a.found, expected: s.expected + a.expected, maxErr: Math.max(s.maxErr, a.maxErr) }), { found: 0, expected: 0, maxErr: 0 });
const recallTime = sum(timeAcc);
const recallRel = sum(relAcc);

// ---- speed ----
const rows = stats.segmentRows + stats.deltaRows;
const int8Bytes = rows * 1024;
// At least the int8 column, and never so small that it sits in the last-level cache.
const bwBytes = Math.max(int8Bytes, 256 * 2 ** 20);
const gbps = await native.measureBandwidth(bwBytes);
const floorMs = (int8Bytes / (gbps * 1e9)) * 1e3;
const engineAll = search.filter(all);
const midWindow = windowAround(START_SEC + year / 2);
const engineWindow = search.filter({ ...midWindow, includeEdits: true, sources: null });
const cap = 10_000_000;
const q = (i: number) => queries[i % queries.length].query;
const thr = (i: number) => fullThresholds[i % fullThresholds.length];

// Warm the page cache and the code paths first.
for (let i = 0; i < 3; i++) {
  await engine.range(q(i), thr(i), engineAll, cap);
  await engine.range(q(i), thr(i), engineWindow, cap);
  await engine.topk(q(i), 50, -1, engineAll, 'scan');
  await search.topK(q(i), 50, -1, all);
}
const fullMs: number[] = [];
const windowMs: number[] = [];
const scanTopMs: number[] = [];
const plannedTopMs: number[] = [];
for (let i = 0; i < reps; i++) {
  fullMs.push(await timeIt(() => engine.range(q(i), thr(i), engineAll, cap)));
  windowMs.push(await timeIt(() => engine.range(q(i), thr(i), engineWindow, cap)));
  scanTopMs.push(await timeIt(() => engine.topk(q(i), 50, -1, engineAll, 'scan')));
  plannedTopMs.push(await timeIt(() => search.topK(q(i), 50, -1, all)));
}
const windowCount = engine.count(engineWindow);

// Batching: the same queries one at a time, then 16 in flight.
const batchN = Math.max(64, reps * 2);
const serialMs = await timeIt(async () => {
  for (let i = 0; i < batchN; i++) await engine.range(q(i), thr(i), engineAll, cap);
});
const before = { ...engine.batches };
let next = 0;
const concurrentMs = await timeIt(() =>
  Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < batchN) {
        const i = next++;
        await engine.range(q(i), thr(i), engineAll, cap);
      }
    }),
  ),
);
const perPass = (engine.batches.queries - before.queries) / Math.max(1, engine.batches.passes - before.passes);
await service.close();

const R = {
  recallTime: recallTime.found / recallTime.expected,
  recallRel: recallRel.found / recallRel.expected,
  bw: median(fullMs) / floorMs,
  window: median(windowMs) / median(fullMs),
  hnsw: median(scanTopMs) / median(plannedTopMs),
  batch: batchN / concurrentMs / (batchN / serialMs),
};

// ---- the table ----
const rowsOut: { name: string; value: string; note: string; ratio: string; goal: string }[] = [];
const line = (name: string, value: string, note: string, ratio: string, goal = '') => rowsOut.push({ name, value, note, ratio, goal });
for (const f of filters) {
  for (const n of targets) {
    const a = timeAcc.get(`${f.name}|${n}`)!;
    line(`order=time recall, ${f.name}, ~${n} rows`, `${a.found}/${a.expected}`, `${(a.rows / a.n).toFixed(0)} rows/q, +${a.extra} extra, ${a.boundary} near-thr miss, max|Δ| ${a.maxErr.toExponential(1)}`, (a.found / a.expected).toFixed(4), '≥ 0.999');
  }
}
for (const f of filters) {
  const a = relAcc.get(f.name)!;
  line(`top-50 recall (planned), ${f.name}`, `${a.found}/${a.expected}`, `max|Δ| ${a.maxErr.toExponential(1)}`, (a.found / a.expected).toFixed(4), '≥ 0.99');
}
const ms = (x: number) => `${x.toFixed(2)} ms`;
line('int8 column ÷ read bandwidth (floor)', ms(floorMs), `${(int8Bytes / 1e6).toFixed(0)} MB at ${gbps.toFixed(1)} GB/s`, '1.00');
line('range, full corpus, one at a time', ms(median(fullMs)), `÷ floor (range_bw_ratio)`, R.bw.toFixed(2), '≤ 1.5');
line('range, 10% time window', ms(median(windowMs)), `÷ full (${((windowCount / rows) * 100).toFixed(1)}% of rows; window_ratio)`, R.window.toFixed(3), '≤ 0.15');
line('top-50, exact scan, unfiltered', ms(median(scanTopMs)), 'engine.topk(…, scan)', '1.00');
line('top-50, planned, unfiltered', ms(median(plannedTopMs)), `scan ÷ planned (hnsw_speedup)`, R.hnsw.toFixed(1), '≥ 20');
line('range, one at a time (per query)', ms(serialMs / batchN), `${((batchN / serialMs) * 1000).toFixed(0)} q/s`, '1.00');
line('range, 16 in flight (per query)', ms(concurrentMs / batchN), `${((batchN / concurrentMs) * 1000).toFixed(0)} q/s, ${perPass.toFixed(1)} q/pass (batch_gain)`, R.batch.toFixed(2), '≥ 1.5');
line('f32 oracle (JS exactRange), per query', ms(oracleMs / nQueries), `${nQueries} queries`, '');

console.log(`\nsearch on ${rows} chunks, ${catalog.size} revisions (isa ${stats.isa}; ${nQueries} oracle queries, ${reps} timed repetitions, medians)`);
const w = { name: 44, value: 14, note: 62, ratio: 9, goal: 8 };
console.log(`${'measure'.padEnd(w.name)} ${'value'.padStart(w.value)}  ${'note'.padEnd(w.note)} ${'ratio'.padStart(w.ratio)}  ${'goal'}`);
for (const r of rowsOut) console.log(`${r.name.padEnd(w.name)} ${r.value.padStart(w.value)}  ${r.note.padEnd(w.note)} ${r.ratio.padStart(w.ratio)}  ${r.goal}`);
console.log(
  `planner (recall runs): ${JSON.stringify(plans)}; top-50 misses within 1e-4 of the 50th score: ${boundaryMisses}; ` +
    `max |score − f32|: range ${recallTime.maxErr.toExponential(2)}, top-k ${recallRel.maxErr.toExponential(2)} (goal 1e-4); ` +
    `corpus built in ${(info.buildMs.total / 1000).toFixed(0)} s`,
);
console.log(
  `search: recall_time=${R.recallTime.toFixed(4)} recall_relevance=${R.recallRel.toFixed(4)} range_bw_ratio=${R.bw.toFixed(2)} ` +
    `window_ratio=${R.window.toFixed(3)} hnsw_speedup=${R.hnsw.toFixed(1)} batch_gain=${R.batch.toFixed(2)}`,
);
