/**
 * Polled revisions per second, from parsed feed items to searchable, against the raw LMDB
 * write rate of the same records in the same process (BENCH_ITEMS, default 3,000 items of a
 * headline, a snippet and a 4–12 sentence text).
 *
 * 1. raw (baseline): `store.writeRevisions` of the same records the pipeline stores (each
 *    revision with its chunks and their vectors, taken from the pipeline's run), in feed-sized
 *    batches (BENCH_BATCH, default 50), into an empty store; and, for context, of the parsed
 *    records before chunking (no vectors).
 * 2. searchable: what a polling round does with the same records in a second store, BENCH_OUTLETS
 *    (default 4) outlets at a time as `Poller.round` polls them (text mode
 *    on, a generated tiny bge-m3 stand-in): chunk + embed, commit with chunks, append to the
 *    search engine (a query finds them from then on: the planner scans rows HNSW lacks); then,
 *    as its own row, index them in HNSW (expansion_add 256) and seal.
 *
 * Prints a table (last column: rate relative to raw) and `ingest: ...`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { chunkAndEmbed } from '../src/embed/index.js';
import { openService } from '../src/service.js';
import { Store, type RevisionInput } from '../src/store/index.js';
import { Rng } from '../test/helpers/rng.js';
import { TINY_WORDS, writeTinyModel } from '../test/helpers/tiny-model.js';
import { envInt } from './corpus.js';

const n = envInt('BENCH_ITEMS', 3000);
const batch = envInt('BENCH_BATCH', 50);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-bench-ingest-'));
// A pooled [batch, 1024] output, as exports with a sentence_embedding / dense head give: the
// tiny model's own cost is then small beside what is measured (a [batch, seq, 1024] output
// would be a 1024-float copy per token, more than this stand-in's whole computation).
const modelDir = writeTinyModel(path.join(dir, 'model'), { layers: envInt('BENCH_EMBED_LAYERS', 0), output: 'pooled', width: 32 });

const rng = new Rng(9);
const sentence = () => `${Array.from({ length: 8 + rng.int(18) }, () => TINY_WORDS[rng.int(TINY_WORDS.length)]).join(' ')}.`;
const items: RevisionInput[] = Array.from({ length: n }, (_, i) => ({
  url: `https://ledger.example/2026/article-${i}`,
  source: ['Daily Ledger', 'Wire One', 'Harbour Post'][i % 3],
  sourceHomepage: undefined,
  title: sentence().slice(0, -1),
  body: sentence(),
  text: Array.from({ length: 4 + rng.int(9) }, sentence).join(' '),
  publishedAt: 1_767_225_600 + i * 60,
  chunks: [],
}));
const batches = Array.from({ length: Math.ceil(n / batch) }, (_, i) => items.slice(i * batch, (i + 1) * batch));

/** Raw LMDB writes of records, batch by batch, into a fresh store: the baseline. */
async function rawWrite(name: string, records: RevisionInput[][]): Promise<number> {
  const raw = new Store(path.join(dir, name));
  const t = performance.now();
  for (const b of records) raw.writeRevisions(b);
  await raw.root.flushed;
  const ms = performance.now() - t;
  await raw.close();
  return ms;
}

// 1. Raw LMDB writes of the parsed records (no vectors yet).
const bareMs = await rawWrite('raw-bare', batches);
let t0: number;

// 2. To searchable, as a polling round does it.
const service = await openService(loadConfig({ DATA_DIR: path.join(dir, 'svc'), BGE_M3_MODEL_DIR: modelDir, LOG_LEVEL: 'warn' }));
const embedder = service.embedder!;
// Warm-up on other texts of the same vocabulary: JIT, the workers' sessions, the tokenizer's
// word cache, as in a poller that has been running a while.
await chunkAndEmbed(embedder, Array.from({ length: 200 }, () => ({ title: sentence(), text: Array.from({ length: 8 }, sentence).join(' ') })), service.chunking);
// HNSW indexing waits until the burst is in (as a polling round does): rows are searchable by
// exact scan as soon as they are appended, and indexed once, after.
const release = service.maintenance.hold();
t0 = performance.now();
let embedMs = 0;
let chunks = 0;
const stored: RevisionInput[][] = [];
// Outlets are polled concurrently (Poller.round): BENCH_OUTLETS lanes, each taking its feeds'
// batches one after another, so one lane's commit overlaps another's embedding.
const lanes = envInt('BENCH_OUTLETS', 4);
let next = 0;
await Promise.all(
  Array.from({ length: lanes }, async () => {
    for (let k = next++; k < batches.length; k = next++) {
      const b = batches[k];
      const e0 = performance.now();
      const embedded = await chunkAndEmbed(embedder, b.map((r) => ({ title: r.title, text: r.text })), service.chunking);
      embedMs += performance.now() - e0;
      chunks += embedded.reduce((a, c) => a + c.length, 0);
      const records = b.map((r, i) => ({ ...r, chunks: embedded[i] }));
      stored[k] = records;
      service.store.writeRevisions(records);
      service.sync();
    }
  }),
);
const writtenMs = performance.now() - t0;
const probe0 = await service.search.topK(service.store.vector(0), 1, -1, { includeEdits: true, sources: null });
release();
await service.maintenance.flush();
const searchableMs = performance.now() - t0;
const probe = await service.search.topK(service.store.vector(0), 1, -1, { includeEdits: true, sources: null });
const found = probe.length === 1 && probe[0].ord === 0;
await service.close();
// The baseline: the same records the pipeline stored (revisions with their chunks and vectors), written raw.
const rawMs = await rawWrite('raw', stored);
fs.rmSync(dir, { recursive: true, force: true });

const rate = (ms: number) => (n / ms) * 1000;
console.log(`\ningest of ${n} polled revisions (${chunks} chunks, batches of ${batch}; tiny bge-m3 stand-in; ${os.availableParallelism()} cores)`);
console.log(`${'step'.padEnd(56)} ${'ms'.padStart(9)} ${'rev/s'.padStart(9)} ${'vs raw'.padStart(8)}`);
const row = (name: string, ms: number) => console.log(`${name.padEnd(56)} ${ms.toFixed(0).padStart(9)} ${rate(ms).toFixed(0).padStart(9)} ${`${(rawMs / ms).toFixed(3)}x`.padStart(8)}`);
row('raw LMDB write of the same records (baseline)', rawMs);
row('raw LMDB write, before chunking (no vectors)', bareMs);
row('chunk + embed + commit + engine append: searchable', writtenMs);
row('... + HNSW index + seal', searchableMs);
console.log(`${lanes} outlets in flight; chunk + embed took ${embedMs.toFixed(0)} ms summed over them; a query finds the first revision before indexing: ${probe0.length === 1 && probe0[0].ord === 0}, after: ${found}`);
console.log(
  `ingest: searchable_vs_raw=${(rawMs / writtenMs).toFixed(3)} indexed_vs_raw=${(rawMs / searchableMs).toFixed(3)} ` +
    `searchable_rev_per_s=${rate(writtenMs).toFixed(0)} raw_rev_per_s=${rate(rawMs).toFixed(0)} searchable_vs_raw_without_vectors=${(bareMs / writtenMs).toFixed(3)}`,
);
