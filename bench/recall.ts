/**
 * Recall and speed of vector queries: the HNSW planner path (what the service runs on a broad
 * query) against the exhaustive exact scan (the oracle), in the same process, on BENCH_CHUNKS
 * chunks (default 100,000) and BENCH_QUERIES queries (default 40). Each query's min_score is
 * set so it matches between ~50 and ~3,000 articles, like the spec's guidance table.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import type { Domain } from '../src/search/index.js';
import { normalise } from '../src/search/index.js';
import { openService } from '../src/service.js';
import { Rng } from '../test/helpers/rng.js';
import { benchCorpus, envInt, printTable } from './corpus.js';

const target = envInt('BENCH_CHUNKS', 100_000);
const nQueries = envInt('BENCH_QUERIES', 40);
console.log(`generating and importing a corpus of about ${target} chunks…`);
const { file, dir, chunks, corpus } = benchCorpus(target, 11);
const config = loadConfig({ DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'warn', EXACT_SCAN_MAX_CHUNKS: '0', MATCH_MAX_MATCHES: '1000000' });
const service = await openService(config);
await service.importFile(file);
console.log(`${chunks} chunks, ${service.catalog.size} revisions indexed`);

const rng = new Rng(99);
const domain: Domain = { includeEdits: false, sources: null };
const all = { includeEdits: true, sources: null };
let exactMs = 0, hnswMs = 0, topExactMs = 0, topHnswMs = 0;
let found = 0, expected = 0, worst = 1, topFound = 0, topExpected = 0;
const sizes: number[] = [];
for (let q = 0; q < nQueries; q++) {
  // A query near a real chunk: a chunk vector plus noise, as a paraphrase would be.
  const rev = corpus.revisions[Math.floor(rng.next() * corpus.revisions.length)];
  const base = rev.chunks[Math.floor(rng.next() * rev.chunks.length)].raw;
  const query = normalise(Array.from(base, (v) => v + (rng.next() - 0.5) * 0.02))!;
  const ranked = service.search.exactRange(query, -1, domain, Infinity).sort((a, b) => b.score - a.score);
  const want = 50 + Math.floor(rng.next() * 2950);
  const minScore = ranked[Math.min(want, ranked.length - 1)].score;

  let t0 = performance.now();
  const exact = service.search.exactRange(query, minScore, domain);
  exactMs += performance.now() - t0;
  t0 = performance.now();
  const approx = service.search.range(query, minScore, domain);
  hnswMs += performance.now() - t0;
  const got = new Set(approx.map((s) => s.ord));
  const hit = exact.filter((s) => got.has(s.ord)).length;
  found += hit;
  expected += exact.length;
  worst = Math.min(worst, exact.length ? hit / exact.length : 1);
  sizes.push(exact.length);

  t0 = performance.now();
  const topExact = service.search.exactRange(query, -1, all, Infinity).sort((a, b) => b.score - a.score).slice(0, 10);
  topExactMs += performance.now() - t0;
  t0 = performance.now();
  const topApprox = service.search.topK(query, 10, -1, all);
  topHnswMs += performance.now() - t0;
  const topGot = new Set(topApprox.map((s) => s.ord));
  topFound += topExact.filter((s) => topGot.has(s.ord)).length;
  topExpected += topExact.length;
}
const plans = { ...service.search.plans };
await service.close();
sizes.sort((a, b) => a - b);
console.log(`\norder=time recall over ${nQueries} queries (matches per query: min ${sizes[0]}, median ${sizes[sizes.length >> 1]}, max ${sizes[sizes.length - 1]}):`);
console.log(`  recall ${(found / expected).toFixed(4)} (${found}/${expected} articles), worst query ${worst.toFixed(4)}`);
console.log(`  plans (order=time and top-10 together): ${JSON.stringify(plans)}`);
console.log(`order=relevance top-10 recall (include_edits): ${(topFound / topExpected).toFixed(4)}`);
printTable(`per-query time on ${chunks} chunks (mean of ${nQueries})`, [
  { name: 'order=time, exact scan (oracle, baseline)', ms: exactMs / nQueries },
  { name: 'order=time, HNSW range + exact rescore', ms: hnswMs / nQueries },
  { name: 'top-10, exact scan', ms: topExactMs / nQueries },
  { name: 'top-10, HNSW + exact rescore', ms: topHnswMs / nQueries },
]);
fs.rmSync(dir, { recursive: true, force: true });
