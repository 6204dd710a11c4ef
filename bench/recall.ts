/**
 * Recall and speed of vector queries: the native engine (what the service runs) against the
 * exhaustive float32 JS scan (the oracle), in the same process, on BENCH_CHUNKS
 * chunks (default 100,000) and BENCH_QUERIES queries (default 40). Each query's min_score is
 * set so it matches between ~50 and ~3,000 articles, the range users ask for.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import type { Domain } from '../src/search/index.js';
import { exactRange, normalise } from '../src/search/index.js';
import { openService } from '../src/service.js';
import { Rng } from '../test/helpers/rng.js';
import { benchCorpus, envInt, printTable } from './corpus.js';

const target = envInt('BENCH_CHUNKS', 100_000);
const nQueries = envInt('BENCH_QUERIES', 40);
console.log(`generating and importing a corpus of about ${target} chunks…`);
const { file, dir, chunks, corpus } = benchCorpus(target, 11);
const config = loadConfig({ DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'warn', EXACT_SCAN_MAX_CHUNKS: '0', MATCH_MAX_MATCHES: '1000000' });
const oracle = (q: Float32Array, min: number, d: Domain) => exactRange(service.store, service.catalog, q, min, d);
const service = await openService(config);
await service.importFile(file);
console.log(`${chunks} chunks, ${service.catalog.size} revisions indexed`);

const rng = new Rng(99);
const domain: Domain = { includeEdits: false, sources: null };
const all = { includeEdits: true, sources: null };
let exactMs = 0,
  scanMs = 0,
  topExactMs = 0,
  topPlannedMs = 0;
let found = 0,
  expected = 0,
  worst = 1,
  topFound = 0,
  topExpected = 0;
const sizes: number[] = [];
for (let q = 0; q < nQueries; q++) {
  // A query near a real chunk: a chunk vector plus noise, as a paraphrase would be.
  const rev = corpus.revisions[Math.floor(rng.next() * corpus.revisions.length)];
  const base = rev.chunks[Math.floor(rng.next() * rev.chunks.length)].raw;
  const query = normalise(Array.from(base, (v) => v + (rng.next() - 0.5) * 0.02))!;
  const ranked = oracle(query, -1, domain).sort((a, b) => b.score - a.score);
  const want = 50 + Math.floor(rng.next() * 2950);
  // Halfway between two neighbours: a floor placed on a score measures rounding, not recall.
  const at = Math.min(want, ranked.length - 2);
  const minScore = (ranked[at].score + ranked[at + 1].score) / 2;

  let t0 = performance.now();
  const exact = oracle(query, minScore, domain);
  exactMs += performance.now() - t0;
  t0 = performance.now();
  const approx = await service.search.range(query, minScore, domain);
  scanMs += performance.now() - t0;
  const got = new Set(approx.map((s) => s.ord));
  const hit = exact.filter((s) => got.has(s.ord)).length;
  found += hit;
  expected += exact.length;
  worst = Math.min(worst, exact.length ? hit / exact.length : 1);
  sizes.push(exact.length);

  t0 = performance.now();
  const topExact = oracle(query, -1, all)
    .sort((a, b) => b.score - a.score)
    .slice(0, 10);
  topExactMs += performance.now() - t0;
  t0 = performance.now();
  const topApprox = await service.search.topK(query, 10, -1, all);
  topPlannedMs += performance.now() - t0;
  const topGot = new Set(topApprox.map((s) => s.ord));
  topFound += topExact.filter((s) => topGot.has(s.ord)).length;
  topExpected += topExact.length;
}
const plans = { ...service.search.plans };
await service.close();
sizes.sort((a, b) => a - b);
console.log(
  `\norder=time recall over ${nQueries} queries (matches per query: min ${sizes[0]}, median ${sizes[sizes.length >> 1]}, max ${sizes[sizes.length - 1]}):`,
);
console.log(`  recall ${(found / expected).toFixed(4)} (${found}/${expected} articles), worst query ${worst.toFixed(4)}`);
console.log(`  plans (order=time and top-10 together): ${JSON.stringify(plans)}`);
console.log(`order=relevance top-10 recall (include_edits): ${(topFound / topExpected).toFixed(4)}`);
printTable(`per-query time on ${chunks} chunks (mean of ${nQueries})`, [
  { name: 'order=time, exact scan (oracle, baseline)', ms: exactMs / nQueries },
  { name: 'order=time, native int8+f16 scan', ms: scanMs / nQueries },
  { name: 'top-10, exact scan', ms: topExactMs / nQueries },
  { name: 'top-10, planned (index lists read exactly, or a scan)', ms: topPlannedMs / nQueries },
]);
fs.rmSync(dir, { recursive: true, force: true });
