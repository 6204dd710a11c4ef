import { match } from '../src/match/index.js';
import { openService } from '../src/service.js';
import { benchConfig, benchQueries } from './big-corpus.js';
const service = await openService(benchConfig('/tmp/newsmatch-bench-100000'));
const qs = benchQueries(service, 64, 7);
const first = { includeEdits: false, sources: null };
const allD = { includeEdits: true, sources: null };
const t = async (name: string, f: (i: number) => Promise<unknown> | unknown, n = 200) => {
  for (let i = 0; i < 20; i++) await f(i);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await f(i);
  console.log(name.padEnd(50), ((performance.now() - t0) / n).toFixed(3), 'ms');
};
await t('topK hnsw, first only (filtered)', (i) => service.search.topK(qs[i % 64].query, 50, 0.5, first));
await t('topK hnsw, include edits (unfiltered)', (i) => service.search.topK(qs[i % 64].query, 50, 0.5, allD));
await t('engine.topk hnsw direct, firstOnly', (i) => service.engine.topk(qs[i % 64].query, 50, 0.5, { firstOnly: true }, 'hnsw'));
await t('engine.count firstOnly', () => service.engine.count({ firstOnly: true }));
await t('engine.stats', () => service.engine.stats());
const bodies = qs.map((q) => JSON.stringify({ vector: Array.from(q.query), order: 'relevance', limit: 50 }));
await t('JSON.parse body', (i) => JSON.parse(bodies[i % 64]));
await t('match() relevance (no HTTP)', (i) => match(service, JSON.parse(bodies[i % 64])));
await t('store.listSources', () => service.store.listSources());
await t('sync()', () => service.sync());
// concurrency: 16 at once
const t0 = performance.now(); let n = 0;
await Promise.all(Array.from({ length: 16 }, async () => { while (n < 800) { const i = n++; await service.search.topK(qs[i % 64].query, 50, 0.5, first); } }));
console.log('topK first-only, 16 in flight: q/s', (800 / (performance.now() - t0) * 1000).toFixed(0));
await service.close();
