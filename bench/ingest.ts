/**
 * Polled revisions per second, from parsed feed items to searchable, against the raw LMDB
 * write rate of the same records in the same process (BENCH_ITEMS, default 3,000 items a
 * round, each a headline, a snippet and a 4–12 sentence text).
 *
 * Each of BENCH_ROUNDS rounds (default 5) runs, one after the other:
 * 1. searchable: what a polling round does, in one service that stays open across rounds (as a
 *    poller does) and sees new articles each round, BENCH_OUTLETS (default 4)
 *    outlets at a time as `Poller.round` polls them (text mode on, a generated tiny bge-m3
 *    stand-in): chunk + tokenise (the prepare worker), embed, commit with chunks, append to
 *    the search engine (a query finds them from then on: rows the index has not filed are scanned beside it).
 * 2. raw (baseline): `store.writeRevisions` of the same records the pipeline stored (each
 *    revision with its chunks and their vectors), in feed-sized batches (BENCH_BATCH, default
 *    50), into an empty store; and, for context, of the parsed records before chunking.
 * After the rounds, as its own row, every round's chunks are filed in the relevance index and sealed.
 * The ratio is the median of the rounds' ratios: this machine's neighbours are noisy, and a
 * round's two runs see the same neighbours.
 *
 * Prints a table (last column: rate relative to raw) and `ingest: ...`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
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
// Sentences as news writes them, capitalised: ICU takes a period before a lowercase word for an
// abbreviation, and the whole text would be one run cut by token counts.
const sentence = () => {
  const s = Array.from({ length: 8 + rng.int(18) }, () => TINY_WORDS[rng.int(TINY_WORDS.length)]).join(' ');
  return `${s[0].toUpperCase()}${s.slice(1)}.`;
};
/** A round's polled items: new URLs every round, as a poller sees new articles. */
const roundBatches = (round: number): RevisionInput[][] => {
  const items: RevisionInput[] = Array.from({ length: n }, (_, i) => ({
    url: `https://ledger.example/2026/r${round}/article-${i}`,
    source: ['Daily Ledger', 'Wire One', 'Harbour Post'][i % 3],
    sourceHomepage: undefined,
    title: sentence().slice(0, -1),
    body: sentence(),
    text: Array.from({ length: 4 + rng.int(9) }, sentence).join(' '),
    publishedAt: 1_767_225_600 + (round * n + i) * 60,
    chunks: [],
  }));
  return Array.from({ length: Math.ceil(n / batch) }, (_, i) => items.slice(i * batch, (i + 1) * batch));
};

/** Raw LMDB writes of records, batch by batch, into a fresh store: the baseline. */
async function rawWrite(name: string, records: RevisionInput[][]): Promise<number> {
  const raw = new Store(path.join(dir, name));
  const t = performance.now();
  for (const b of records) raw.writeRevisions(b);
  await raw.root.flushed;
  const ms = performance.now() - t;
  await raw.close();
  fs.rmSync(path.join(dir, name), { recursive: true, force: true });
  return ms;
}

const rounds = envInt('BENCH_ROUNDS', 5);
const lanes = envInt('BENCH_OUTLETS', 4);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

// One service for every round, as one poller runs for days.
const service = await openService(loadConfig({ DATA_DIR: path.join(dir, 'svc'), BGE_M3_MODEL_DIR: modelDir, LOG_LEVEL: 'warn' }));
const embedder = service.embedder!;
// Warm-up on other texts of the same vocabulary: JIT, the workers' sessions, the tokenizer's
// word cache, as in a poller that has been running a while.
await embedder.embedDocs(
  Array.from({ length: 500 }, () => ({ title: sentence(), text: Array.from({ length: 8 }, sentence).join(' ') })),
  service.chunking,
);
// Indexing waits until the bursts are in (as a polling round holds it): rows are
// searchable by exact scan as soon as they are appended, and indexed once, after.
const release = service.maintenance.hold();

/** One polling round: chunk + embed, commit with chunks, append to the engine. */
async function pipeline(batches: RevisionInput[][]) {
  const t0 = performance.now();
  let chunks = 0;
  const stored: RevisionInput[][] = [];
  // Outlets are polled concurrently (Poller.round): BENCH_OUTLETS lanes, each taking its feeds'
  // batches one after another, so one lane's commit overlaps another's embedding.
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      for (let k = next++; k < batches.length; k = next++) {
        const b = batches[k];
        const embedded = await embedder.embedDocs(
          b.map((r) => ({ title: r.title, text: r.text })),
          service.chunking,
        );
        chunks += embedded.reduce((a, c) => a + c.length, 0);
        const records = b.map((r, i) => ({ ...r, chunks: embedded[i] }));
        stored[k] = records;
        service.store.writeRevisions(records);
        service.sync();
      }
    }),
  );
  return { ms: performance.now() - t0, chunks, stored };
}

// Each round runs the pipeline and the baseline back to back, so a noisy neighbour slows both,
// not one; which goes first alternates, so neither always meets the other's disk writeback.
const runs: { raw: number; bare: number; written: number; ratio: number; chunks: number }[] = [];
for (let r = 0; r < rounds; r++) {
  const batches = roundBatches(r);
  // The baseline writes the same records the pipeline stores (revisions with their chunks and
  // vectors): an odd round first embeds them apart (untimed), to write them before the pipeline.
  const baseline = async (stored: RevisionInput[][]) => ({ raw: await rawWrite(`raw-${r}`, stored), bare: await rawWrite(`raw-bare-${r}`, batches) });
  let run: Awaited<ReturnType<typeof pipeline>>;
  let base: { raw: number; bare: number };
  if (r % 2 === 1) {
    const stored = await Promise.all(batches.map(async (b) => (await embedder.embedDocs(b, service.chunking)).map((chunks, i) => ({ ...b[i], chunks }))));
    base = await baseline(stored);
    run = await pipeline(batches);
  } else {
    run = await pipeline(batches);
    await service.store.root.flushed;
    base = await baseline(run.stored);
  }
  const { raw, bare } = base;
  runs.push({ raw, bare, written: run.ms, ratio: raw / run.ms, chunks: run.chunks });
  console.log(`round ${r + 1}/${rounds}: raw ${raw.toFixed(0)} ms, searchable ${run.ms.toFixed(0)} ms, ratio ${(raw / run.ms).toFixed(3)}`);
}
const query = () => service.search.topK(service.store.vector(0), 1, -1, { includeEdits: true, sources: null });
const finds = (hits: { ord: number }[]) => hits.length === 1 && hits[0].ord === 0;
const foundBefore = finds(await query());
const i0 = performance.now();
release();
await service.maintenance.flush();
const indexMs = performance.now() - i0;
const foundAfter = finds(await query());
await service.close();
fs.rmSync(dir, { recursive: true, force: true });

const rawMs = median(runs.map((x) => x.raw));
const bareMs = median(runs.map((x) => x.bare));
const writtenMs = median(runs.map((x) => x.written));
const ratio = median(runs.map((x) => x.ratio));
const rate = (ms: number, revisions = n) => (revisions / ms) * 1000;
const total = n * rounds;
const indexedRate = rate(runs.reduce((a, x) => a + x.written, 0) + indexMs, total);
console.log(
  `\ningest of ${n} polled revisions a round (${runs[0].chunks} chunks, batches of ${batch}; tiny bge-m3 stand-in; ${os.availableParallelism()} cores; medians of ${rounds} rounds)`,
);
console.log(`${'step'.padEnd(56)} ${'ms'.padStart(9)} ${'rev/s'.padStart(9)} ${'vs raw'.padStart(8)}`);
const row = (name: string, ms: number, revisions = n) =>
  console.log(
    `${name.padEnd(56)} ${ms.toFixed(0).padStart(9)} ${rate(ms, revisions).toFixed(0).padStart(9)} ${`${(rate(ms, revisions) / rate(rawMs)).toFixed(3)}x`.padStart(8)}`,
  );
row('raw LMDB write of the same records (baseline)', rawMs);
row('raw LMDB write, before chunking (no vectors)', bareMs);
row('chunk + embed + commit + engine append: searchable', writtenMs);
row(`index + seal of all ${total} revisions, after`, indexMs, total);
console.log(`${lanes} outlets in flight; a query finds the first revision before indexing: ${foundBefore}, after: ${foundAfter}`);
console.log(
  `ingest: searchable_vs_raw=${ratio.toFixed(3)} (rounds ${runs.map((x) => x.ratio.toFixed(3)).join(' ')}) indexed_vs_raw=${(indexedRate / rate(rawMs)).toFixed(3)} ` +
    `searchable_rev_per_s=${rate(writtenMs).toFixed(0)} raw_rev_per_s=${rate(rawMs).toFixed(0)} searchable_vs_raw_without_vectors=${(bareMs / writtenMs).toFixed(3)}`,
);
