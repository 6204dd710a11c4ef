/**
 * Time to import BENCH_CHUNKS (default 100,000) chunks through the shipped import path,
 * beside its baseline in the same process: reading and validating the same file without
 * writing. Phases: validate only (baseline) → LMDB write → indexing (segments, relevance index) → re-import (no-op).
 */
import type { ImportSummary } from '../src/ingest/index.js';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { loadConfig } from '../src/config.js';
import { parseImportLine } from '../src/ingest/index.js';
import { openService } from '../src/service.js';
import { benchCorpus, envInt, printTable } from './corpus.js';

const target = envInt('BENCH_CHUNKS', 100_000);
console.log(`generating a corpus of about ${target} chunks…`);
const { file, dir, chunks, corpus } = benchCorpus(target);
const mb = fs.statSync(file).size / 1e6;
console.log(`${corpus.revisions.length} revisions, ${chunks} chunks, ${mb.toFixed(0)} MB of JSONL`);

const time = async (f: () => Promise<unknown>): Promise<number> => {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
};

const parseMs = await time(async () => {
  const rl = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  for await (const line of rl) if (!parseImportLine(line).ok) throw new Error('bench corpus has a bad line');
});

const config = loadConfig({ DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'warn' });
const service = await openService(config);
const rssBefore = process.memoryUsage().rss;
let summary: ImportSummary | undefined;
// The shipped path writes LMDB while streaming, then indexes; time the two apart.
const { importFile } = await import('../src/ingest/index.js');
// Peak JS heap + buffers while streaming shows memory stays flat (RSS also counts LMDB's mapped pages).
global.gc?.();
const heapOf = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
const heapBase = heapOf();
let peakHeap = heapBase;
const sampler = setInterval(() => {
  peakHeap = Math.max(peakHeap, heapOf());
}, 50);
const writeMs = await time(async () => {
  summary = await importFile(service.store, file);
});
clearInterval(sampler);
const indexMs = await time(async () => {
  service.sync();
  await service.maintenance.flush();
});
const reimportMs = await time(() => service.importFile(file));
const rssAfter = process.memoryUsage().rss;
await service.close();

console.log(`imported: ${JSON.stringify({ ...summary!, rejections: undefined })}`);
printTable(`import of ${chunks} chunks (${mb.toFixed(0)} MB)`, [
  { name: 'read + validate only (baseline)', ms: parseMs, note: `${((chunks / parseMs) * 1000).toFixed(0)} chunks/s` },
  { name: 'read + validate + LMDB write', ms: writeMs, note: `${((chunks / writeMs) * 1000).toFixed(0)} chunks/s` },
  { name: 'engine: segments + relevance index + save', ms: indexMs, note: `${((chunks / indexMs) * 1000).toFixed(0)} chunks/s` },
  { name: 'total import (write + index)', ms: writeMs + indexMs, note: `${((chunks / (writeMs + indexMs)) * 1000).toFixed(0)} chunks/s` },
  { name: 're-import of the same file (no-op)', ms: reimportMs, note: 'all unchanged' },
]);
console.log(`JS heap + buffers grew at most ${((peakHeap - heapBase) / 1e6).toFixed(0)} MB while streaming the ${mb.toFixed(0)} MB file into LMDB`);
console.log(`RSS grew ${((rssAfter - rssBefore) / 1e6).toFixed(0)} MB while importing ${mb.toFixed(0)} MB (index included)`);
fs.rmSync(dir, { recursive: true, force: true });
