/**
 * The Embedder against tiny bge-m3 stand-ins (test/helpers/tiny-model.ts): determinism and
 * unit vectors, batching and padding invisible in the rows, truncation that keeps `</s>`,
 * every output layout giving one vector, 503 `embed_unavailable` on overload, timeout and a
 * dead worker, the CUDA fallback's one log line, and the query lane ahead of bulk work.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Rng } from '../../test/helpers/rng.js';
import { TINY_WORDS, writeTinyModel, type TinyModelOptions } from '../../test/helpers/tiny-model.js';
import { AppError } from '../errors.js';
import { chunkRevision } from './chunk.js';
import { Embedder, type EmbedderOptions } from './embedder.js';

const DIM = 1024;
const SEED = 7;
const root = mkdtempSync(join(tmpdir(), 'embedder-test-'));
const silent = pino({ level: 'silent' });
const open: Embedder[] = [];

afterAll(async () => {
  await Promise.allSettled(open.map((e) => e.close()));
  rmSync(root, { recursive: true, force: true });
});

const models = new Map<string, string>();
function model(name: string, o: TinyModelOptions): string {
  let dir = models.get(name);
  if (!dir) models.set(name, (dir = writeTinyModel(join(root, name), o)));
  return dir;
}

async function embedder(dir: string, o: Partial<EmbedderOptions> = {}, log: Logger = silent): Promise<Embedder> {
  const e = await Embedder.open(
    { modelDir: dir, device: 'cpu', threads: 1, maxTokens: 8192, maxBatchTokens: 16_384, queueMax: 4096, timeoutMs: 60_000, ...o },
    log,
  );
  open.push(e);
  return e;
}

/** A logger whose lines are kept, parsed. */
function capture(): { log: Logger; lines: { level: number; msg: string }[] } {
  const lines: { level: number; msg: string }[] = [];
  const log = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { log, lines };
}

const rng = new Rng(20260501);
/** `n` words the tiny tokenizer knows: n + 2 tokens with <s> and </s>. */
const words = (n: number): string => Array.from({ length: n }, () => rng.pick(TINY_WORDS)).join(' ');

function maxDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}

function expectUnit(v: Float32Array): void {
  expect(v).toBeInstanceOf(Float32Array);
  expect(v.length).toBe(DIM);
  let n = 0;
  for (const x of v) n += x * x;
  expect(Math.abs(Math.sqrt(n) - 1)).toBeLessThan(1e-5);
}

/** Awaits `p`, expecting it to reject with 503 embed_unavailable + Retry-After; returns the error. */
async function expectUnavailable(p: Promise<unknown>): Promise<AppError> {
  const e = await p.then(
    () => {
      throw new Error('expected a rejection with embed_unavailable, got a vector');
    },
    (err: unknown) => err,
  );
  expectUnavailableError(e);
  return e as AppError;
}

function expectUnavailableError(e: unknown): void {
  expect(e).toBeInstanceOf(AppError);
  const a = e as AppError;
  expect(a.code).toBe('embed_unavailable');
  expect(a.status).toBe(503);
  expect(a.headers['retry-after']).toMatch(/^\d+$/);
}

describe('vectors (hidden-output model, one worker)', () => {
  let e: Embedder;
  beforeAll(async () => {
    e = await embedder(model('hidden', { seed: SEED }));
  });

  it('reports the output it reads and the provider', () => {
    expect(e.info).toMatchObject({ provider: 'cpu', output: 'last_hidden_state' });
  });

  it('the same text twice gives identical unit vectors of 1024', async () => {
    const text = 'the central bank rose rates after inflation fell';
    const a = await e.embedQuery(text);
    const b = await e.embedQuery(text);
    expectUnit(a);
    expectUnit(b);
    expect(Array.from(b)).toEqual(Array.from(a));
    // ...and a different text is a different vector.
    expect(maxDiff(a, await e.embedQuery('oil prices fell on monday'))).toBeGreaterThan(1e-3);
  });

  it('batching gives the vectors of one-at-a-time, and really batches', async () => {
    const texts = Array.from({ length: 24 }, (_, i) => words(6 + (i % 6)));
    const alone: Float32Array[] = [];
    for (const t of texts) alone.push(await e.embedQuery(t));
    const before = e.stats.batches;
    const many = await e.embedMany(texts);
    const batches = e.stats.batches - before;
    expect(many).toHaveLength(texts.length);
    expect(batches).toBeGreaterThan(0);
    expect(batches).toBeLessThan(texts.length);
    many.forEach((v, i) => {
      expectUnit(v);
      expect(maxDiff(v, alone[i]), `text ${i}`).toBeLessThan(1e-5);
    });
  });

  it('padding does not move a row: a short text alone and in a batch with a longer one', async () => {
    // 24, 25 and 27 tokens with <s> </s>: padding under MAX_PADDING, so they share a batch.
    const short = words(22);
    const long = words(25);
    const alone = await e.embedQuery(short);
    const longAlone = await e.embedQuery(long);
    // The first text of a bulk call may start at once on the free worker; the next two wait and
    // go together, so the short row is padded to the long one's length in either case.
    const s0 = { ...e.stats };
    const [, inBatch, longInBatch] = await e.embedMany([words(23), short, long]);
    expect(e.stats.batches - s0.batches).toBeLessThanOrEqual(2);
    const padded = e.stats.paddedTokens - s0.paddedTokens - (e.stats.tokens - s0.tokens);
    expect(padded, 'the short row was padded').toBeGreaterThanOrEqual(long.split(' ').length - short.split(' ').length);
    expect(maxDiff(inBatch, alone)).toBeLessThan(1e-5);
    expect(maxDiff(longInBatch, longAlone)).toBeLessThan(1e-5);
  });

  it('embedDocs chunks in its worker exactly as chunkRevision does, and embeds each chunk as a query would be', async () => {
    const sentence = () => `${words(6 + rng.int(12)).replace(/^./, (c) => c.toUpperCase())}.`;
    const docs = Array.from({ length: 6 }, () => ({ title: words(5), text: Array.from({ length: 3 + rng.int(8) }, sentence).join(' ') }));
    docs.push({ title: '', text: '' }, { title: 'the market rose', text: '' });
    const chunking = { minTokens: 12, maxTokens: 40 };
    const options = { countTokens: (t: string) => e.tokenizer.count(t), minTokens: 12, maxTokens: 40 };
    const got = await e.embedDocs(docs, chunking);
    expect(got.map((chunks) => chunks.map((c) => c.text))).toEqual(docs.map((d) => chunkRevision(d.title, d.text, options)));
    expect(got.flat().length).toBeGreaterThan(docs.length);
    for (const c of got.flat()) expect(maxDiff(c.vector, await e.embedQuery(c.text)), c.text).toBeLessThan(1e-5);
    expect(await e.embedDocs([], chunking)).toEqual([]);
  });
});

describe('truncation at EMBED_MAX_TOKENS keeps </s>', () => {
  let e: Embedder;
  beforeAll(async () => {
    e = await embedder(model('hidden', { seed: SEED }), { maxTokens: 16 });
  });

  it('encodes a long text to exactly maxTokens, <s> first and </s> last', () => {
    const ids = e.tokenizer.encode(words(40));
    expect(ids.length).toBe(16);
    expect(ids[0]).toBe(e.tokenizer.bos);
    expect(ids[15]).toBe(e.tokenizer.eos);
    expect(Array.from(ids.slice(1, 15))).not.toContain(e.tokenizer.eos);
    // A short text is untouched.
    expect(e.tokenizer.encode('the market rose').length).toBe(5);
  });

  it('two long texts differing only after the cut embed identically; before the cut, differently', async () => {
    const head = words(14);
    const base = `${head} ${words(20)}`;
    const a = await e.embedQuery(`${base} market rose`);
    const b = await e.embedQuery(`${base} oil fell`);
    expect(Array.from(b)).toEqual(Array.from(a));
    // It is the first 14 words, closed by </s>.
    expect(maxDiff(a, await e.embedQuery(head))).toBeLessThan(1e-6);
    const c = await e.embedQuery(`war ${base}`);
    expect(maxDiff(a, c)).toBeGreaterThan(1e-3);
  });
});

describe('model layouts give one vector', () => {
  const texts = ['the market rose', 'oil prices fell after the talks on trade', words(30)];
  let reference: Float32Array[];
  beforeAll(async () => {
    const e = await embedder(model('hidden', { seed: SEED }));
    reference = [];
    for (const t of texts) reference.push(await e.embedQuery(t));
  });

  it('a pooled-output model (sentence_embedding) gives the hidden model’s vectors', async () => {
    const e = await embedder(model('pooled', { seed: SEED, output: 'pooled' }));
    expect(e.info?.output).toBe('sentence_embedding');
    for (const [i, t] of texts.entries()) {
      const v = await e.embedQuery(t);
      expectUnit(v);
      expect(maxDiff(v, reference[i])).toBeLessThan(1e-5);
    }
    const many = await e.embedMany(texts);
    many.forEach((v, i) => expect(maxDiff(v, reference[i])).toBeLessThan(1e-5));
  });

  it('an external-data model (model.onnx_data) gives the same vectors', async () => {
    const e = await embedder(model('external', { seed: SEED, externalData: true }));
    expect(e.info?.output).toBe('last_hidden_state');
    for (const [i, t] of texts.entries()) expect(maxDiff(await e.embedQuery(t), reference[i])).toBeLessThan(1e-5);
  });

  it('another seed gives other vectors (the comparisons above can fail)', async () => {
    const e = await embedder(model('other', { seed: SEED + 1 }));
    expect(maxDiff(await e.embedQuery(texts[1]), reference[1])).toBeGreaterThan(1e-3);
  });
});

describe('503 embed_unavailable (slow model)', () => {
  const slow = () => model('slow', { seed: SEED, layers: 6 });
  /** About 400 tokens through six 1024x1024 layers: a batch that takes a while on any CPU. */
  const longText = () => words(400);

  it('overload: past queueMax a query is refused with Retry-After; the rest resolve', async () => {
    const e = await embedder(slow(), { queueMax: 1 });
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => e.embedQuery(words(60))));
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    const resolved = results.filter((r): r is PromiseFulfilledResult<Float32Array> => r.status === 'fulfilled');
    expect(rejected.length).toBeGreaterThan(0);
    expect(resolved.length).toBeGreaterThan(0);
    for (const r of rejected) {
      expectUnavailableError(r.reason);
      expect((r.reason as Error).message).toMatch(/queue is full/);
    }
    for (const r of resolved) expectUnit(r.value);
    expect(e.stats.overloaded).toBe(rejected.length);
    // Room again once the queue has drained.
    expectUnit(await e.embedQuery('the market rose'));
  });

  it('timeout: a query not embedded within timeoutMs is refused', async () => {
    const e = await embedder(slow(), { timeoutMs: 1 });
    const err = await expectUnavailable(e.embedQuery(longText()));
    expect(err.message).toMatch(/longer than 1 ms/);
    expect(e.stats.timeouts).toBe(1);
    // The batch itself runs on; let it finish before the embedder is closed.
    await vi.waitFor(() => expect(e.load().running.query).toBe(0), { timeout: 30_000, interval: 20 });
  });

  it('a worker that dies mid-batch fails that batch only; Piscina replaces it and the next query succeeds', async () => {
    const { log, lines } = capture();
    const e = await embedder(model('hidden', { seed: SEED }), {}, log);
    const before = await e.embedQuery('the market rose');
    e.simulateWorkerExit();
    const err = await expectUnavailable(e.embedQuery(words(30)));
    expect(err.message).toMatch(/batch failed/);
    expect(e.stats.failedBatches).toBe(1);
    expect(lines.some((l) => l.level === 40 && /batch failed/.test(l.msg))).toBe(true);
    // The replacement worker loads the model on its first task and gives the same vector.
    const after = await e.embedQuery('the market rose');
    expect(maxDiff(before, after)).toBe(0);
  });

  it('close() lets the running batch finish, fails the waiting texts, then refuses new ones', async () => {
    const e = await embedder(slow(), { threads: 1 });
    const running = e.embedQuery(longText());
    await vi.waitFor(() => expect(e.load().running.query).toBe(1), { timeout: 30_000, interval: 5 });
    const waiting = e.embedQuery(words(20));
    expect(e.load().waiting.query).toBe(1);
    const closing = e.close();
    expect((await expectUnavailable(waiting)).message).toMatch(/shutting down/);
    expectUnit(await running); // never killed inside ONNX Runtime's run (that would abort the process)
    await closing;
    expect((await expectUnavailable(e.embedQuery('the market rose'))).message).toMatch(/shutting down/);
  });
});

describe('EMBED_DEVICE and the provider log line', () => {
  const startLines = (lines: { level: number; msg: string }[]) => lines.filter((l) => /text mode on/.test(l.msg));

  it("'cuda' without CUDA: still embeds on CPU, with exactly one warning naming CPU and CUDA", async () => {
    const { log, lines } = capture();
    const e = await embedder(model('hidden', { seed: SEED }), { device: 'cuda' }, log);
    expect(e.info?.provider).toBe('cpu');
    expectUnit(await e.embedQuery('the market rose'));
    const mentions = lines.filter((l) => /CPU/.test(l.msg) && /CUDA/.test(l.msg));
    expect(mentions, JSON.stringify(lines)).toHaveLength(1);
    expect(mentions[0].level).toBe(40);
    expect(startLines(lines)).toHaveLength(1);
    expect(lines.filter((l) => l.level >= 40)).toHaveLength(1);
  });

  it("'auto' without CUDA: one info line, on CPU", async () => {
    const { log, lines } = capture();
    const e = await embedder(model('hidden', { seed: SEED }), { device: 'auto' }, log);
    expect(e.info?.provider).toBe('cpu');
    expectUnit(await e.embedQuery('the market rose'));
    const start = startLines(lines);
    expect(start, JSON.stringify(lines)).toHaveLength(1);
    expect(start[0].level).toBe(30);
    expect(start[0].msg).toMatch(/CPU/);
    expect(lines.filter((l) => l.level >= 40)).toHaveLength(0);
  });
});

describe('the query lane goes ahead of bulk work', () => {
  it('with one worker, a query sent after a large embedMany resolves first', async () => {
    // A small token budget cuts the bulk texts into many batches.
    const e = await embedder(model('hidden', { seed: SEED }), { maxBatchTokens: 64 });
    const texts = Array.from({ length: 300 }, () => words(8));
    let bulkDone = false;
    const bulk = e.embedMany(texts).then((v) => {
      bulkDone = true;
      return v;
    });
    const q = await e.embedQuery('the market rose');
    expect(bulkDone).toBe(false);
    expect(e.load().waiting.bulk).toBeGreaterThan(0);
    expectUnit(q);
    const vectors = await bulk;
    expect(vectors).toHaveLength(texts.length);
    expect(e.stats.batches).toBeGreaterThan(10);
  });

  it('with two workers, a query runs while a bulk batch is still running (its own worker)', async () => {
    const e = await embedder(model('slow', { seed: SEED, layers: 6 }), { threads: 2 });
    const bulk = e.embedMany(Array.from({ length: 8 }, () => words(400)));
    await vi.waitFor(() => expect(e.load().running.bulk).toBe(1), { timeout: 30_000, interval: 5 });
    expectUnit(await e.embedQuery('the market rose'));
    // The bulk lane never had more than the one bulk worker, and it was busy all along.
    expect(e.load().running.bulk).toBe(1);
    await bulk;
  });
});
