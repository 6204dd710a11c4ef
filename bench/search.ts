/**
 * The search core on a large cached corpus (bench/big-corpus.ts; BENCH_CHUNKS, default 300,000;
 * the issue's size is 1,000,000), against the float32 JS oracle (bench/oracle.ts), with queries
 * drawn as users' queries are: BENCH_PER_CLASS (default 40) of each class of
 * bench/big-corpus.ts QUERY_CLASSES (story, paraphrase, topic, mixed, off-topic, random), none
 * a stored chunk. Every figure is reported per class, so an average cannot hide a failing one.
 *
 * - recall_time: order=time sets (the service's range path) against the oracle at thresholds
 *   giving ~10, ~300 and ~3,000 revisions, under five filters (none, a 10% window, two sources,
 *   first revisions only, all three). A miss within 1e-4 of the threshold is an f16 tie, counted
 *   apart; recall is over the rest and must be exactly 1.
 * - recall_relevance: top-50 planned by the service (engine.topk 'auto') against the oracle's
 *   top 50 (ties within 1e-4 at the 50th count as found), under the same filters.
 *   recall_relevance_index counts only the cells the planner answered from the index; cells
 *   answered by an exact scan (few rows allowed, or a query far from every list) are reported
 *   apart. recall_relevance_min_class is the worst class.
 * - range_bw_ratio: a full-corpus range query ÷ (int8 bytes ÷ the read bandwidth of as many
 *   threads as a pass uses, read from a buffer in huge pages, as the engine maps its columns).
 *   pass16_vs_pass1: a pass serving 16 queries ÷ a pass serving one.
 *   window_ratio: a 10% window ÷ the full corpus. index_speedup: exact-scan top-50 ÷ planned
 *   top-50 (near classes). batch_gain: range queries/s with 16 in flight ÷ one at a time.
 * - build_chunks_per_s: the index trained and every chunk filed from the segments (a copy of
 *   the engine directory without its index file), saved included.
 * - http_overhead_us: the event loop's time per /v1/match relevance request (limit 50) outside
 *   the engine, in process (Fastify inject, one request at a time): parsing 1,024 numbers,
 *   auth, metering, LMDB reads of 50 items, serialisation.
 * - The graph side-by-side (BENCH_GRAPHS=0 skips it): bench/ann/compare.cc builds usearch HNSW
 *   graphs over f16, int8 and binary codes on the same rows and queries.
 *
 * Timings are medians; only ratios are the result.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildApp, parseJsonBody } from '../src/http/index.js';
import { native } from '../src/native.js';
import type { Domain } from '../src/search/index.js';
import { openService } from '../src/service.js';
import {
  benchChunks,
  benchConfig,
  benchDataDir,
  benchQueryClasses,
  DAYS,
  ensureBigCorpus,
  NEAR_CLASSES,
  QUERY_CLASSES,
  START_SEC,
  type QueryClass,
} from './big-corpus.js';
import { envInt } from './corpus.js';
import { oracleScores } from './oracle.js';

const chunks = benchChunks();
const dir = benchDataDir(chunks);
const info = await ensureBigCorpus(chunks, dir);
const perClass = envInt('BENCH_PER_CLASS', 40);
const reps = envInt('BENCH_REPS', 20);

const rssBefore = process.memoryUsage().rss;
let t0 = performance.now();
const service = await openService(benchConfig(dir));
const openMs = performance.now() - t0;
const { store, catalog, engine, search } = service;
await service.maintenance.flush();
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
const filters: { name: string; domain: (i: number) => Domain }[] = [
  { name: 'none', domain: () => ({ includeEdits: true, sources: null }) },
  { name: '10% window', domain: (i) => ({ ...windowAround(START_SEC + ((i * 7919) % DAYS) * 86400), includeEdits: true, sources: null }) },
  { name: '2 sources', domain: () => ({ includeEdits: true, sources: twoSources }) },
  { name: 'first only', domain: () => ({ includeEdits: false, sources: null }) },
  { name: 'all three', domain: (i) => ({ ...windowAround(START_SEC + ((i * 7919) % DAYS) * 86400), includeEdits: false, sources: twoSources }) },
];
const inDomain = (ord: number, d: Domain): boolean =>
  catalog.labelCount[ord] > 0 &&
  (d.includeEdits || catalog.first[ord] === 1) &&
  (d.since === undefined || catalog.eventTime[ord] >= d.since) &&
  (d.until === undefined || catalog.eventTime[ord] <= d.until) &&
  (d.sources === null || d.sources.has(catalog.sourceId[ord]));
const targets = [10, 300, 3000];

// ---- the oracle ----
const queries = benchQueryClasses(service, perClass);
console.log(
  `f32 oracle: ${queries.length} queries (${perClass} a class) against all ${stats.nextLabel} chunks, in JS on ${os.availableParallelism()} threads…`,
);
t0 = performance.now();
let lastPrint = 0;
const truth = await oracleScores(
  service,
  queries.map((q) => q.query),
  (done, total) => {
    if (performance.now() - lastPrint > 15_000) {
      lastPrint = performance.now();
      console.log(`  ${done}/${total} chunks (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    }
  },
);
const oracleMs = performance.now() - t0;

/** Revisions in the domain, best first, with their f32 scores. */
function ranked(qi: number, d: Domain): { ord: number; score: number }[] {
  const s = truth[qi];
  const out: { ord: number; score: number }[] = [];
  for (let ord = 0; ord < s.length; ord++) if (s[ord] > -Infinity && inDomain(ord, d)) out.push({ ord, score: s[ord] });
  return out.sort((a, b) => b.score - a.score);
}

// ---- recall ----
interface Acc {
  found: number;
  expected: number;
  extra: number;
  edge: number;
  cells: number;
}
const acc = (): Acc => ({ found: 0, expected: 0, extra: 0, edge: 0, cells: 0 });
const timeBy = new Map<QueryClass, Acc>();
const relBy = new Map<string, Acc>(); // `${class}|${plan}` and `${class}|${filter}`
const add = (m: Map<string, Acc>, key: string, a: Partial<Acc>) => {
  const x = m.get(key) ?? acc();
  for (const k of Object.keys(a) as (keyof Acc)[]) x[k] += a[k]!;
  m.set(key, x);
};
const probeBy = new Map<QueryClass, { rows: number; rescored: number; n: number }>();
let maxErr = 0;
t0 = performance.now();
for (const [qi, { cls, query }] of queries.entries()) {
  const ranges: Promise<void>[] = [];
  for (const f of filters) {
    const d = f.domain(qi);
    const inD = ranked(qi, d);
    for (const n of targets) {
      // Midway between the n-th score and the next lower distinct one: a floor on a score
      // measures rounding, not recall. Equal scores (an edit shares unchanged chunks) stay together.
      let m = Math.min(n, inD.length);
      while (m < inD.length && inD[m - 1].score - inD[m].score < 1e-7) m++;
      if (m === 0) continue;
      const thr = m < inD.length ? (inD[m - 1].score + inD[m].score) / 2 : inD[inD.length - 1].score - 1e-3;
      const want = new Map(inD.slice(0, m).map((s) => [s.ord, s.score]));
      ranges.push(
        search.range(query, thr, d).then((got) => {
          const a = acc();
          const gotSet = new Set(got.map((s) => s.ord));
          for (const s of got) {
            if (want.has(s.ord)) a.found++;
            else a.extra++;
            maxErr = Math.max(maxErr, Math.abs(s.score - truth[qi][s.ord]));
          }
          for (const [o, sc] of want) if (!gotSet.has(o) && Math.abs(sc - thr) < 1e-4) a.edge++;
          // A tie the scan left out is not a miss: expected is the rest.
          a.expected = want.size - a.edge;
          a.cells = 1;
          add(timeBy as Map<string, Acc>, cls, a);
        }),
      );
    }
    // Relevance: the planned top-50.
    const k = 50;
    const top = inD.slice(0, k);
    const r = await engine.topk(query, k, -1, search.filter(d), 'auto', search.options.topk);
    const kth = top.length === k ? top[k - 1].score : -Infinity;
    const topSet = new Set(top.map((s) => s.ord));
    let found = 0;
    for (let i = 0; i < r.ords.length; i++) {
      if (topSet.has(r.ords[i]) || r.scores[i] >= kth - 1e-4) found++;
      maxErr = Math.max(maxErr, Math.abs(r.scores[i] - truth[qi][r.ords[i]]));
    }
    const cell = { found: Math.min(found, top.length), expected: top.length, cells: 1 };
    add(relBy, `${cls}|${r.plan}`, cell);
    add(relBy, `${cls}|${f.name}`, cell);
    add(relBy, `all|${r.plan}`, cell);
    if (r.plan === 'index') {
      const p = probeBy.get(cls) ?? { rows: 0, rescored: 0, n: 0 };
      p.rows += r.probe.rows;
      p.rescored += r.probe.rescored;
      p.n++;
      probeBy.set(cls, p);
    }
  }
  await Promise.all(ranges);
  if ((qi + 1) % 40 === 0) console.log(`  recall: ${qi + 1}/${queries.length} queries (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
}
const plans = ['scan', 'scan-far', 'index', 'index-then-scan'];
const relOf = (cls: string, keys: string[]) =>
  keys.reduce((s, k) => ({ found: s.found + (relBy.get(`${cls}|${k}`)?.found ?? 0), expected: s.expected + (relBy.get(`${cls}|${k}`)?.expected ?? 0) }), {
    found: 0,
    expected: 0,
  });
const ratio = (x: { found: number; expected: number }) => (x.expected ? x.found / x.expected : 1);

// ---- speed ----
const rows = stats.segmentRows + stats.deltaRows;
const int8Bytes = rows * 1024;
const bwBytes = Math.max(int8Bytes, 256 * 2 ** 20);
const gbps1 = await native.measureBandwidth(bwBytes, 1);
const gbpsAll = await native.measureBandwidth(bwBytes, stats.threads);
const floorMs = (int8Bytes / (gbpsAll * 1e9)) * 1e3;
const all: Domain = { includeEdits: true, sources: null };
const engineAll = search.filter(all);
const engineWindow = search.filter({ ...windowAround(START_SEC + year / 2), includeEdits: true, sources: null });
const cap = 10_000_000;
const near = queries.filter((q) => NEAR_CLASSES.includes(q.cls));
const q = (i: number) => near[i % near.length].query;
// ~300 matches over the whole corpus for each near query.
const thr300 = near.map((_, i) => {
  const r = ranked(queries.indexOf(near[i]), all);
  return r.length > 300 ? (r[299].score + r[300].score) / 2 : -1;
});
const thr = (i: number) => thr300[i % thr300.length];
for (let i = 0; i < 3; i++) {
  await engine.range(q(i), thr(i), engineAll, cap);
  await engine.range(q(i), thr(i), engineWindow, cap);
  await engine.topk(q(i), 50, -1, engineAll, 'scan');
  await engine.topk(q(i), 50, -1, engineAll, 'auto', search.options.topk);
}
const fullMs: number[] = [];
const windowMs: number[] = [];
const scanTopMs: number[] = [];
const plannedTopMs: number[] = [];
const pass16Ms: number[] = [];
for (let i = 0; i < reps; i++) {
  fullMs.push(await timeIt(() => engine.range(q(i), thr(i), engineAll, cap)));
  windowMs.push(await timeIt(() => engine.range(q(i), thr(i), engineWindow, cap)));
  scanTopMs.push(await timeIt(() => engine.topk(q(i), 50, -1, engineAll, 'scan')));
  plannedTopMs.push(await timeIt(() => engine.topk(q(i), 50, -1, engineAll, 'auto', search.options.topk)));
  // 16 range queries at once: they share one pass.
  const before = engine.batches.passes;
  pass16Ms.push(await timeIt(() => Promise.all(Array.from({ length: 16 }, (_, j) => engine.range(q(i * 16 + j), thr(i * 16 + j), engineAll, cap)))));
  if (engine.batches.passes - before !== 1) console.log(`  note: 16 queries took ${engine.batches.passes - before} passes`);
}
const windowCount = engine.count(engineWindow);
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

// ---- the index built from the segments ----
const buildDir = fs.mkdtempSync(path.join(path.dirname(dir), 'nm-bench-build-'));
const engineDir = path.join(dir, 'engine');
for (const f of fs.readdirSync(engineDir)) if (/^seg-\d+\.nms$/.test(f) || f === 'manifest') fs.linkSync(path.join(engineDir, f), path.join(buildDir, f));
const built = new native.Engine({ dir: buildDir, threads: stats.threads, indexMinRows: service.config.indexMinChunks, lists: service.config.indexLists });
t0 = performance.now();
while ((await built.indexPending(1e12)) > 0);
const fileMs = performance.now() - t0;
await built.saveIndex();
const buildMs = performance.now() - t0;
const builtStats = built.stats();
built.close();
fs.rmSync(buildDir, { recursive: true, force: true });

// ---- the HTTP path outside the engine ----
const app = await buildApp(service);
await app.ready();
const { secret } = service.keys.create({ scheme: 'bearer', name: 'bench-search' });
const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
const bodies = near.map(({ query }) => JSON.stringify({ vector: Array.from(query), order: 'relevance', limit: 50 }));
let engineTime = 0;
const inject = async (n: number) => {
  engineTime = 0;
  const topk = engine.topk.bind(engine);
  engine.topk = (async (...a: Parameters<typeof topk>) => {
    const t = performance.now();
    try {
      return await topk(...a);
    } finally {
      engineTime += performance.now() - t;
    }
  }) as typeof topk;
  const e0 = performance.eventLoopUtilization();
  const t = performance.now();
  for (let i = 0; i < n; i++) {
    const r = await app.inject({ method: 'POST', url: '/v1/match', headers, payload: bodies[i % bodies.length] });
    if (r.statusCode !== 200) throw new Error(r.body);
  }
  const wall = performance.now() - t;
  engine.topk = topk;
  return { wall: wall / n, loop: (performance.eventLoopUtilization(e0).utilization * wall) / n, engine: engineTime / n };
};
await inject(300);
const http = await inject(envInt('BENCH_HTTP_REQUESTS', 2000));
// Of which, the body's 1,024 numbers parsed.
t0 = performance.now();
for (let i = 0; i < 2000; i++) JSON.parse(bodies[i % bodies.length]);
const parseMs = (performance.now() - t0) / 2000;
// As the server reads it (src/http/json-body.ts).
const bodyBytes = bodies.map((b) => Buffer.from(b));
t0 = performance.now();
for (let i = 0; i < 2000; i++) parseJsonBody(bodyBytes[i % bodyBytes.length]);
const bodyMs = (performance.now() - t0) / 2000;
await app.close();
await service.close();

// ---- the graphs, side by side (a native tool over the same rows and queries) ----
let graphs = '';
if (process.env.BENCH_GRAPHS !== '0') graphs = runGraphs();

const byClass = QUERY_CLASSES.map((cls) => ({ cls, r: ratio(relOf(cls, plans)) }));
const indexRel = ratio(relOf('all', ['index']));
const R = {
  recallTime:
    [...timeBy.values()].reduce((s, a) => s + a.found, 0) /
    Math.max(
      1,
      [...timeBy.values()].reduce((s, a) => s + a.expected, 0),
    ),
  recallRel: ratio(relOf('all', plans)),
  recallIndex: indexRel,
  minClass: Math.min(...byClass.map((c) => c.r)),
  bw: median(fullMs) / floorMs,
  pass16: median(pass16Ms) / median(fullMs),
  window: median(windowMs) / median(fullMs),
  speedup: median(scanTopMs) / median(plannedTopMs),
  batch: batchN / concurrentMs / (batchN / serialMs),
  build: rows / (buildMs / 1000),
  http: http.loop * 1000,
};

// ---- the tables ----
const pad = (s: string, n: number) => s.padEnd(n);
console.log(
  `\nsearch on ${rows} chunks, ${catalog.size} revisions (isa ${stats.isa}, ${stats.threads} threads; ${queries.length} queries, ${perClass} a class; oracle ${(oracleMs / 1000).toFixed(0)} s)`,
);
console.log(`\norder=time recall by class (5 filters x 3 thresholds a query; f16 ties within 1e-4 of the threshold counted apart)`);
console.log(`${pad('class', 12)} ${'found/expected'.padStart(18)} ${'recall'.padStart(8)} ${'extra'.padStart(6)} ${'ties'.padStart(6)}`);
for (const cls of QUERY_CLASSES) {
  const a = timeBy.get(cls) ?? acc();
  console.log(
    `${pad(cls, 12)} ${`${a.found}/${a.expected}`.padStart(18)} ${(a.expected ? a.found / a.expected : 1).toFixed(4).padStart(8)} ${String(a.extra).padStart(6)} ${String(a.edge).padStart(6)}`,
  );
}
console.log(`\norder=relevance top-50 recall by class and filter (planned; ties within 1e-4 of the 50th count as found)`);
console.log(
  `${pad('class', 12)} ${filters.map((f) => f.name.padStart(11)).join(' ')} ${'all'.padStart(8)}   plans (cells)                      rows read / rescored (index cells)`,
);
for (const cls of QUERY_CLASSES) {
  const cells = filters
    .map((f) =>
      ratio(relBy.get(`${cls}|${f.name}`) ?? { found: 0, expected: 0 })
        .toFixed(4)
        .padStart(11),
    )
    .join(' ');
  const pl = plans.map((p) => `${p} ${relBy.get(`${cls}|${p}`)?.cells ?? 0}`).join(', ');
  const pr = probeBy.get(cls);
  console.log(
    `${pad(cls, 12)} ${cells} ${ratio(relOf(cls, plans)).toFixed(4).padStart(8)}   ${pad(pl, 52)} ${pr ? `${(pr.rows / pr.n).toFixed(0)} / ${(pr.rescored / pr.n).toFixed(0)}` : '-'}`,
  );
}
for (const p of plans) {
  const a = relBy.get(`all|${p}`);
  if (a) console.log(`  cells planned ${p}: ${a.cells}, recall ${ratio(a).toFixed(4)}`);
}
const ms = (x: number) => `${x.toFixed(2)} ms`;
const rowsOut: [string, string, string, string, string][] = [
  [
    'int8 column ÷ read bandwidth (floor)',
    ms(floorMs),
    `${(int8Bytes / 1e6).toFixed(0)} MB at ${gbpsAll.toFixed(1)} GB/s on ${stats.threads} threads (${gbps1.toFixed(1)} on one)`,
    '1.00',
    '',
  ],
  ['range, full corpus, one query a pass', ms(median(fullMs)), '÷ floor (range_bw_ratio)', R.bw.toFixed(2), '≤ 1.5'],
  ['range, 16 queries in one pass', ms(median(pass16Ms)), '÷ one query a pass (pass16_vs_pass1)', R.pass16.toFixed(2), '≤ 1.5'],
  ['range, 10% time window', ms(median(windowMs)), `÷ full (${((windowCount / rows) * 100).toFixed(1)}% of rows; window_ratio)`, R.window.toFixed(3), '≤ 0.15'],
  ['top-50, exact scan, unfiltered', ms(median(scanTopMs)), 'engine.topk(…, scan)', '1.00', ''],
  ['top-50, planned, unfiltered (near classes)', ms(median(plannedTopMs)), 'scan ÷ planned (index_speedup)', R.speedup.toFixed(1), '≥ 20'],
  ['range, one at a time (per query)', ms(serialMs / batchN), `${((batchN / serialMs) * 1000).toFixed(0)} q/s`, '1.00', ''],
  [
    'range, 16 in flight (per query)',
    ms(concurrentMs / batchN),
    `${((batchN / concurrentMs) * 1000).toFixed(0)} q/s, ${perPass.toFixed(1)} q/pass (batch_gain)`,
    R.batch.toFixed(2),
    '≥ 1.5',
  ],
  ['index build: train + file every chunk', ms(fileMs), `${builtStats.indexLists} lists, ${(rows / (fileMs / 1000)).toFixed(0)} chunks/s`, '', ''],
  ['index build + save (build_chunks_per_s)', ms(buildMs), `${R.build.toFixed(0)} chunks/s`, '', '≥ 5000'],
  [
    '/v1/match relevance, event loop (in process)',
    `${(http.loop * 1000).toFixed(0)} µs`,
    `wall ${(http.wall * 1000).toFixed(0)} µs, engine ${(http.engine * 1000).toFixed(0)} µs; the body read ${(bodyMs * 1000).toFixed(0)} µs (JSON.parse alone ${(parseMs * 1000).toFixed(0)} µs)`,
    '',
    '',
  ],
  ['f32 oracle (JS), per query', ms(oracleMs / queries.length), `${queries.length} queries`, '', ''],
];
console.log(`\n${pad('measure', 44)} ${'value'.padStart(12)}  ${pad('note', 70)} ${'ratio'.padStart(7)}  goal`);
for (const [a, b, c, d, e] of rowsOut) console.log(`${pad(a, 44)} ${b.padStart(12)}  ${pad(c, 70)} ${d.padStart(7)}  ${e}`);
if (graphs) console.log(`\n${graphs}`);
console.log(`max |score − f32| ${maxErr.toExponential(2)} (goal 1e-4); corpus built in ${(info.buildMs.total / 1000).toFixed(0)} s`);
console.log(
  `search: recall_time=${R.recallTime.toFixed(4)} recall_relevance=${R.recallRel.toFixed(4)} recall_relevance_index=${R.recallIndex.toFixed(4)} ` +
    `recall_relevance_min_class=${R.minClass.toFixed(4)} range_bw_ratio=${R.bw.toFixed(2)} pass16_vs_pass1=${R.pass16.toFixed(2)} ` +
    `window_ratio=${R.window.toFixed(3)} index_speedup=${R.speedup.toFixed(1)} batch_gain=${R.batch.toFixed(2)} ` +
    `build_chunks_per_s=${R.build.toFixed(0)} http_overhead_us=${R.http.toFixed(0)}`,
);

/** Writes the rows' ords, the queries and the oracle's top 50 for bench/ann/compare.cc, builds it and runs it. */
function runGraphs(): string {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'nm-ann-'));
  try {
    const nq = queries.length;
    const qbuf = new Float32Array(nq * 1024);
    queries.forEach((x, i) => qbuf.set(x.query, i * 1024));
    fs.writeFileSync(path.join(work, 'queries.f32'), Buffer.from(qbuf.buffer));
    fs.writeFileSync(path.join(work, 'classes.txt'), queries.map((x) => x.cls).join('\n'));
    // The oracle's top 50 (first revisions and edits alike) and the 50th score.
    const top = new Float64Array(nq * 51);
    queries.forEach((_, qi) => {
      const r = ranked(qi, all).slice(0, 50);
      r.forEach((s, j) => (top[qi * 51 + j] = s.ord));
      top[qi * 51 + 50] = r[49].score;
    });
    fs.writeFileSync(path.join(work, 'truth.f64'), Buffer.from(top.buffer));
    const bin = path.join(work, 'compare');
    const src = path.resolve('bench/ann/compare.cc');
    const cc = spawnSync(
      'g++',
      [
        '-O3',
        '-std=c++17',
        '-pthread',
        '-Inative/core',
        '-Inode_modules/usearch/include',
        '-DUSEARCH_USE_NUMKONG=0',
        '-DUSEARCH_USE_OPENMP=0',
        src,
        ...['kernels', 'segment', 'scan', 'pool', 'ivf', 'engine'].map((f) => `native/core/${f}.cc`),
        '-o',
        bin,
      ],
      { encoding: 'utf8' },
    );
    if (cc.status !== 0) return `graphs: the comparison tool did not build:\n${cc.stderr}`;
    const r = spawnSync(bin, [path.join(dir, 'engine'), work, String(stats.threads)], {
      encoding: 'utf8',
      maxBuffer: 1 << 24,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    return r.status === 0 ? r.stdout : `graphs: the comparison tool failed (${r.status})\n${r.stdout}`;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
