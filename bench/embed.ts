/**
 * The embedding pipeline against raw ONNX Runtime, in one process, on a generated model with
 * bge-m3's inputs and outputs and a realistic per-token cost (BENCH_EMBED_LAYERS 1024x1024
 * MatMul+Tanh layers, default 4; the real model is far heavier, which only makes the
 * pipeline's own overhead smaller in proportion).
 *
 * 1. raw (baseline): the same texts, tokenised and cut into batches by the same token budget
 *    beforehand, through `session.run` on one session using every core, one batch at a time.
 * 2. pipeline: `Embedder.embedMany` (tokenise, batch, Piscina workers, normalise) with the
 *    shipped defaults (EMBED_THREADS workers).
 * 3. query latency: BENCH_QUERIES one-at-a-time text queries alone, then while an import-sized
 *    `embedMany` runs beside them; each against a raw `session.run` of the same tokens under
 *    the same load, so "added" is the pipeline's own share (tokenise, queue, worker hop).
 *
 * Prints a table (last column: throughput relative to raw) and `embed: ...`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { MAX_PADDING } from '../src/embed/embedder.js';
import { openEmbedder } from '../src/service.js';
import { TINY_WORDS, writeTinyModel } from '../test/helpers/tiny-model.js';
import { envInt } from './corpus.js';
import { Rng } from '../test/helpers/rng.js';

const layers = envInt('BENCH_EMBED_LAYERS', 4);
const n = envInt('BENCH_TEXTS', 2000);
const queries = envInt('BENCH_QUERIES', 50);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-bench-embed-'));
const modelDir = writeTinyModel(path.join(dir, 'model'), { layers });
const config = loadConfig({ BGE_M3_MODEL_DIR: modelDir, DATA_DIR: dir });

// Chunk-like texts: 15 to 120 words, as sentence groups of CHUNK_MIN..MAX tokens are.
const rng = new Rng(5);
const sentence = (words: number) => Array.from({ length: words }, () => TINY_WORDS[rng.int(TINY_WORDS.length)]).join(' ');
const texts = Array.from({ length: n }, () => `${sentence(15 + rng.int(106))}.`);
const queryTexts = Array.from({ length: queries }, () => sentence(6 + rng.int(10)));

const embedder = (await openEmbedder(config, pino({ level: 'warn' })))!;
const tok = embedder.tokenizer;

// Raw: the same token budget and length rule, batches cut from length-sorted texts.
const encoded = texts.map((t) => tok.encode(t)).sort((a, b) => a.length - b.length);
const batches: Int32Array[][] = [];
for (let i = 0; i < encoded.length; ) {
  const batch = [encoded[i]];
  let tokens = encoded[i].length;
  let j = i + 1;
  for (; j < encoded.length; j++) {
    const padded = (batch.length + 1) * encoded[j].length;
    if (padded > config.embedMaxBatchTokens || padded > MAX_PADDING * (tokens + encoded[j].length)) break;
    batch.push(encoded[j]);
    tokens += encoded[j].length;
  }
  batches.push(batch);
  i = j;
}
// The workers' own session options: every core, no spinning.
const session = await ort.InferenceSession.create(path.join(modelDir, 'model.onnx'), {
  executionProviders: ['cpu'],
  intraOpNumThreads: os.availableParallelism(),
  interOpNumThreads: 1,
  graphOptimizationLevel: 'all',
  extra: { session: { intra_op: { allow_spinning: '0' } } },
});
const feed = (b: Int32Array[]) => {
  const seq = b[b.length - 1].length;
  const ids = new BigInt64Array(b.length * seq).fill(BigInt(tok.pad));
  const mask = new BigInt64Array(b.length * seq);
  b.forEach((row, r) =>
    row.forEach((id, c) => {
      ids[r * seq + c] = BigInt(id);
      mask[r * seq + c] = 1n;
    }),
  );
  return { input_ids: new ort.Tensor('int64', ids, [b.length, seq]), attention_mask: new ort.Tensor('int64', mask, [b.length, seq]) };
};
const feeds = batches.map(feed);
const runRaw = async () => {
  for (const f of feeds) await session.run(f);
};
await runRaw(); // warm-up
await embedder.embedMany(texts.slice(0, 200));

const timeIt = async (f: () => Promise<unknown>) => {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
};
const rawMs = Math.min(await timeIt(runRaw), await timeIt(runRaw));
const pipeMs = Math.min(await timeIt(() => embedder.embedMany(texts)), await timeIt(() => embedder.embedMany(texts)));

// Each query twice, alternating: through the pipeline, and as a raw session.run of its tokens
// under the same conditions. The difference is what the pipeline adds (tokenising, queueing,
// the hop to a worker), apart from the model's own time, which an import on the same cores
// slows for both.
const latencies = async (): Promise<{ pipe: number[]; raw: number[]; added: number[] }> => {
  const pipe: number[] = [];
  const raw: number[] = [];
  const added: number[] = [];
  for (const q of queryTexts) {
    const p = await timeIt(() => embedder.embedQuery(q));
    const f = feed([tok.encode(q)]);
    const r = await timeIt(() => session.run(f));
    pipe.push(p);
    raw.push(r);
    added.push(p - r);
  }
  for (const xs of [pipe, raw, added]) xs.sort((a, b) => a - b);
  return { pipe, raw, added };
};
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const alone = await latencies();
// An import beside the queries: the bulk lane kept full for the whole measurement.
let importing = true;
const importLoop = (async () => {
  while (importing) await embedder.embedMany(texts.slice(0, 500));
})();
await new Promise((r) => setTimeout(r, 200));
const loaded = await latencies();
importing = false;
await importLoop;

const tokens = encoded.reduce((a, e) => a + e.length, 0);
const s = embedder.stats;
await embedder.close();
await session.release();
fs.rmSync(dir, { recursive: true, force: true });

const rate = (ms: number) => (n / ms) * 1000;
console.log(
  `\nembedding ${n} texts (${tokens} tokens, ${batches.length} raw batches), model: ${layers} layers of 1024x1024, ${os.availableParallelism()} cores, ${config.embedThreads} workers`,
);
console.log(`${'run'.padEnd(52)} ${'ms'.padStart(9)} ${'texts/s'.padStart(9)} ${'vs raw'.padStart(8)}`);
console.log(
  `${'raw session.run, same batches (baseline)'.padEnd(52)} ${rawMs.toFixed(0).padStart(9)} ${rate(rawMs).toFixed(0).padStart(9)} ${'1.00x'.padStart(8)}`,
);
console.log(
  `${'pipeline: tokenise + batch + pool + normalise'.padEnd(52)} ${pipeMs.toFixed(0).padStart(9)} ${rate(pipeMs).toFixed(0).padStart(9)} ${`${(rawMs / pipeMs).toFixed(2)}x`.padStart(8)}`,
);
console.log(`pipeline batches: ${s.batches} for ${s.rows} texts, padding overhead ${((s.paddedTokens / s.tokens - 1) * 100).toFixed(1)}%`);
const line = (name: string, l: { pipe: number[]; raw: number[]; added: number[] }) =>
  console.log(
    `${name.padEnd(22)} pipeline p50 ${pct(l.pipe, 50).toFixed(2)} ms (p95 ${pct(l.pipe, 95).toFixed(2)}), raw run p50 ${pct(l.raw, 50).toFixed(2)} ms, added p50 ${pct(l.added, 50).toFixed(2)} ms (p95 ${pct(l.added, 95).toFixed(2)})`,
  );
line('query alone:', alone);
line('query under import:', loaded);
console.log(
  `embed: pipeline_vs_raw=${(rawMs / pipeMs).toFixed(3)} query_p50_ms=${pct(alone.pipe, 50).toFixed(2)} query_p50_under_import_ms=${pct(loaded.pipe, 50).toFixed(2)} ` +
    `added_query_ms=${pct(loaded.added, 50).toFixed(2)}`,
);
