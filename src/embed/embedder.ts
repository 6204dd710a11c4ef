/**
 * bge-m3 embedding with dynamic batching over a Piscina pool of ONNX Runtime workers.
 *
 * Query texts are tokenised here; revisions are chunked and tokenised in a worker of their own
 * (prepare-worker.ts). Token ids are queued in two lanes (queries ahead of bulk chunk work) and cut
 * into batches by a token budget (rows × longest row, as text-embeddings-inference's
 * `max_batch_tokens`), rows of similar length together so padding adds at most 8%. With two or
 * more workers, one serves queries only and the bulk workers run at a lower OS priority, so a
 * query never waits behind an import, nor shares the cores with it on equal terms. Each lane holds at most `queueMax` texts: a query past that, or one not embedded
 * within `timeoutMs`, fails with 503 `embed_unavailable` + Retry-After; bulk work waits for
 * room instead. A worker that dies fails only its own batch; Piscina starts another. A slow
 * batch is never killed (ONNX Runtime cannot be interrupted mid-run): its texts get 503 and its
 * result is dropped.
 */
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import { DIMS } from '../dims.js';
import { workerFile } from '../worker-file.js';
import { checkModelDir } from './model-dir.js';
import type { Prepared, PrepareTask } from './prepare-worker.js';
import { TextTokenizer } from './tokenizer.js';

/** Chunk sizes in tokens (CHUNK_MIN_TOKENS, CHUNK_MAX_TOKENS). */
export interface ChunkSettings {
  minTokens: number;
  maxTokens: number;
}

export interface EmbedderOptions {
  modelDir: string;
  device: 'auto' | 'cpu' | 'cuda';
  threads: number;
  maxTokens: number;
  maxBatchTokens: number;
  queueMax: number;
  timeoutMs: number;
}

type Lane = 'query' | 'bulk';

interface Item {
  ids: Int32Array;
  resolve: (v: Float32Array) => void;
  reject: (e: Error) => void;
  done: boolean;
  timer?: NodeJS.Timeout;
}

interface WorkerInfo {
  provider: string;
  note: string | null;
  output: string;
}

/** Waiting texts considered when a batch is cut: enough to find similar lengths, cheap to sort. */
const WINDOW = 512;
const RETRY_AFTER_S = 1;
/** Padded tokens ÷ real tokens of a batch at most: rows of similar length go together. */
export const MAX_PADDING = 1.08;
const WORKER = fileURLToPath(new URL('./worker.js', import.meta.url));

const unavailable = (message: string, cause?: unknown): AppError =>
  new AppError('embed_unavailable', message, { cause, headers: { 'retry-after': String(RETRY_AFTER_S) } });

/** A Piscina pool and the lanes it serves, in the order it prefers them. */
interface Pool {
  piscina: Piscina;
  size: number;
  running: number;
  serves: Lane[];
}

/** Bulk workers run this much nicer (Linux thread priority), so a query's run gets the cores. */
const BULK_NICE = 10;

export class Embedder {
  /** One pool for EMBED_THREADS=1; else one query worker + (threads-1) nicer bulk workers. */
  readonly #pools: Pool[];
  /** Chunks and tokenises revisions for the bulk lane: one thread, as nice as bulk embedding. */
  readonly #prepare: Piscina;
  readonly #lanes: Record<Lane, Item[]> = { query: [], bulk: [] };
  readonly #running: Record<Lane, number> = { query: 0, bulk: 0 };
  #roomWaiters: (() => void)[] = [];
  readonly #inFlight = new Set<Promise<unknown>>();
  #closed = false;
  #exitNext = false;
  /** What the workers reported at start: the execution provider and the output used. */
  info: WorkerInfo | null = null;
  readonly stats = { batches: 0, rows: 0, tokens: 0, paddedTokens: 0, failedBatches: 0, overloaded: 0, timeouts: 0 };

  private constructor(
    readonly options: EmbedderOptions,
    readonly tokenizer: TextTokenizer,
    readonly log: Logger,
  ) {
    const { modelPath } = checkModelDir(options.modelDir);
    const pool = (size: number, niceIncrement: number, serves: Lane[]): Pool => {
      const piscina = new Piscina({
        filename: WORKER,
        minThreads: size,
        maxThreads: size,
        idleTimeout: Number.POSITIVE_INFINITY,
        concurrentTasksPerWorker: 1,
        niceIncrement,
        workerData: {
          modelPath,
          device: options.device,
          // Every worker may use every core: bulk work alone then runs as fast as one session
          // could, and a query beside it shares the cores (ahead of it: bulk is nicer).
          intraOpThreads: os.availableParallelism(),
          padId: tokenizer.pad,
          verbose: log.isLevelEnabled('debug'),
        },
      });
      // A worker that dies is replaced by Piscina; its batch's promise rejects (handled in #run).
      piscina.on('error', (e) => log.error({ err: e }, 'embedding worker failed'));
      return { piscina, size, running: 0, serves };
    };
    // Queries have a worker of their own, and may borrow an idle bulk one.
    this.#pools = options.threads === 1 ? [pool(1, 0, ['query', 'bulk'])] : [pool(1, 0, ['query']), pool(options.threads - 1, BULK_NICE, ['query', 'bulk'])];
    this.#prepare = new Piscina({
      ...workerFile(import.meta.url, 'prepare-worker'),
      minThreads: 1,
      maxThreads: 1,
      idleTimeout: Number.POSITIVE_INFINITY,
      niceIncrement: BULK_NICE,
      workerData: { modelDir: options.modelDir, maxTokens: options.maxTokens },
    });
    this.#prepare.on('error', (e) => log.error({ err: e }, 'chunking worker failed'));
  }

  /**
   * Checks the model directory, starts the workers and loads a session in each (in parallel).
   * Throws when the directory lacks a file; a session that fails to load is logged, and text
   * queries then answer 503 `embed_unavailable` until it loads.
   */
  static async open(options: EmbedderOptions, log: Logger): Promise<Embedder> {
    checkModelDir(options.modelDir);
    const e = new Embedder(options, TextTokenizer.load(options.modelDir, options.maxTokens), log);
    await e.#warm();
    return e;
  }

  async #warm(): Promise<void> {
    const t0 = performance.now();
    const prepared = this.#prepare.run({ docs: [], minTokens: 1, maxTokens: 1 } satisfies PrepareTask).catch((e: unknown) => {
      this.log.error({ err: e }, 'the chunking worker failed to start: revisions cannot be embedded');
    });
    const results = await Promise.allSettled(
      this.#pools.flatMap((p) => Array.from({ length: p.size }, () => p.piscina.run({ kind: 'info' }) as Promise<WorkerInfo>)),
    );
    await prepared;
    const ok = results.find((r): r is PromiseFulfilledResult<WorkerInfo> => r.status === 'fulfilled');
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (!ok) {
      this.log.error({ err: failed?.reason }, `bge-m3 model in ${this.options.modelDir} failed to load: text queries answer 503 embed_unavailable`);
      return;
    }
    this.info = ok.value;
    const { provider, note } = ok.value;
    const where = provider === 'cuda' ? 'CUDA' : 'CPU';
    const line = `text mode on: bge-m3 on ${where}${note ? ` (${note})` : ''}, ${this.options.threads} worker(s), loaded in ${Math.round(performance.now() - t0)} ms`;
    // One line says which provider we got; asking for CUDA and not getting it is a warning.
    if (this.options.device === 'cuda' && provider !== 'cuda') this.log.warn(line);
    else this.log.info(line);
  }

  /** One query text → its unit vector. Fails fast with 503 when the query lane is full or too slow. */
  embedQuery(text: string): Promise<Float32Array> {
    if (this.#closed) return Promise.reject(unavailable('the embedder is shutting down'));
    if (this.#lanes.query.length >= this.options.queueMax) {
      this.stats.overloaded++;
      return Promise.reject(unavailable(`the embedding queue is full (${this.options.queueMax} texts waiting)`));
    }
    const ids = this.tokenizer.encode(text);
    return new Promise((resolve, reject) => {
      const item: Item = { ids, resolve, reject, done: false };
      item.timer = setTimeout(() => {
        if (item.done) return;
        this.stats.timeouts++;
        const waiting = this.#lanes.query.indexOf(item);
        if (waiting >= 0) this.#lanes.query.splice(waiting, 1);
        settle(item, unavailable(`embedding took longer than ${this.options.timeoutMs} ms`));
      }, this.options.timeoutMs);
      this.#lanes.query.push(item);
      this.#pump();
    });
  }

  /**
   * Revisions → their chunks (headline first, then sentence groups of the text) with vectors,
   * through the bulk lane: chunked and tokenised in the prepare worker, then batched as
   * `embedMany`. A failure rejects with 503 `embed_unavailable`.
   */
  async embedDocs(docs: { title: string; text: string }[], chunking: ChunkSettings): Promise<{ text: string; vector: Float32Array }[][]> {
    if (this.#closed) throw unavailable('the embedder is shutting down');
    if (docs.length === 0) return [];
    const task = this.#prepare.run({ docs, minTokens: chunking.minTokens, maxTokens: chunking.maxTokens } satisfies PrepareTask) as Promise<Prepared>;
    this.#inFlight.add(task);
    let prepared: Prepared;
    try {
      prepared = await task;
    } catch (e) {
      throw unavailable(`chunking failed: ${(e as Error).message?.split('\n')[0] ?? e}`, e);
    } finally {
      this.#inFlight.delete(task);
    }
    const ids: Int32Array[] = [];
    for (let i = 0, at = 0; i < prepared.lengths.length; at += prepared.lengths[i], i++) ids.push(prepared.ids.subarray(at, at + prepared.lengths[i]));
    const vectors = await this.#bulk(ids);
    let k = 0;
    return prepared.chunks.map((texts) => texts.map((text) => ({ text, vector: vectors[k++] })));
  }

  /**
   * Many texts → their vectors, in order, through the bulk lane. Waits for room when the lane
   * is full; a failed batch rejects with 503 `embed_unavailable`.
   */
  embedMany(texts: string[]): Promise<Float32Array[]> {
    return this.#bulk(texts.map((t) => this.tokenizer.encode(t)));
  }

  async #bulk(all: Int32Array[]): Promise<Float32Array[]> {
    const out: Promise<Float32Array>[] = [];
    for (let i = 0; i < all.length; ) {
      if (this.#lanes.bulk.length >= this.options.queueMax) {
        // Full: let the workers drain it. Enqueue everything that fits first, so the
        // batcher sees many texts at once and cuts full batches, not one text at a time.
        this.#pump();
        await new Promise<void>((r) => this.#roomWaiters.push(r));
      }
      if (this.#closed) throw unavailable('the embedder is shutting down');
      for (; i < all.length && this.#lanes.bulk.length < this.options.queueMax; i++) {
        const ids = all[i];
        out.push(new Promise((resolve, reject) => this.#lanes.bulk.push({ ids, resolve, reject, done: false })));
      }
    }
    this.#pump();
    return Promise.all(out);
  }

  /** Texts waiting and batches running, per lane. */
  load(): { waiting: Record<Lane, number>; running: Record<Lane, number> } {
    return { waiting: { query: this.#lanes.query.length, bulk: this.#lanes.bulk.length }, running: { ...this.#running } };
  }

  /**
   * Fault injection (tests, drills): the worker that takes the next batch exits in the middle
   * of it, after building its inputs, as a crashed worker would.
   */
  simulateWorkerExit(): void {
    this.#exitNext = true;
  }

  /**
   * Stops: waiting texts fail with 503, running batches finish (ONNX Runtime cannot be
   * interrupted: stopping a worker thread inside `run` aborts the process), then the workers go.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const lane of Object.values(this.#lanes)) for (const item of lane.splice(0)) settle(item, unavailable('the embedder is shutting down'));
    for (const wake of this.#roomWaiters.splice(0)) wake();
    await Promise.allSettled(this.#inFlight);
    await Promise.all([...this.#pools.map((p) => p.piscina.destroy()), this.#prepare.destroy()]);
  }

  /** Starts batches while workers are free: every waiting query first, then bulk work. */
  #pump(): void {
    for (const lane of ['query', 'bulk'] as const) {
      while (!this.#closed && this.#lanes[lane].length > 0) {
        const pool = this.#pools.find((p) => p.serves.includes(lane) && p.running < p.size);
        if (!pool) break;
        this.#run(lane, pool, this.#take(this.#lanes[lane]));
      }
    }
  }

  /**
   * Cuts one batch from a lane: its oldest text (so none starves) plus the waiting texts
   * closest to it in length, while rows × longest row stays within the token budget.
   */
  #take(queue: Item[]): Item[] {
    const budget = this.options.maxBatchTokens;
    const anchor = queue[0];
    const batch = [anchor];
    let longest = anchor.ids.length;
    let tokens = longest;
    if (queue.length > 1) {
      const near = queue.slice(1, WINDOW).sort((a, b) => Math.abs(a.ids.length - anchor.ids.length) - Math.abs(b.ids.length - anchor.ids.length));
      for (const item of near) {
        const l = Math.max(longest, item.ids.length);
        const padded = (batch.length + 1) * l;
        if (padded > budget || padded > MAX_PADDING * (tokens + item.ids.length)) continue;
        batch.push(item);
        longest = l;
        tokens += item.ids.length;
      }
    }
    const taken = new Set(batch);
    const rest = queue.filter((i) => !taken.has(i));
    queue.length = 0;
    queue.push(...rest);
    if (this.#roomWaiters.length > 0) for (const wake of this.#roomWaiters.splice(0)) wake();
    return batch;
  }

  #run(lane: Lane, pool: Pool, batch: Item[]): void {
    const lengths = new Int32Array(batch.length);
    let total = 0;
    let longest = 0;
    batch.forEach((item, i) => {
      lengths[i] = item.ids.length;
      total += item.ids.length;
      longest = Math.max(longest, item.ids.length);
    });
    const ids = new Int32Array(total);
    for (let i = 0, at = 0; i < batch.length; at += lengths[i], i++) ids.set(batch[i].ids, at);
    this.stats.batches++;
    this.stats.rows += batch.length;
    this.stats.tokens += total;
    this.stats.paddedTokens += longest * batch.length;
    this.#running[lane]++;
    pool.running++;
    // Bulk batches have no per-text deadline, but a batch stuck longer than the timeout fails.
    const stuck =
      lane === 'bulk'
        ? setTimeout(
            () => batch.forEach((item) => settle(item, unavailable(`an embedding batch took longer than ${this.options.timeoutMs} ms`))),
            this.options.timeoutMs,
          )
        : undefined;
    const exit = this.#exitNext;
    this.#exitNext = false;
    const task = (pool.piscina.run({ kind: 'run', ids, lengths, exit }, { transferList: [ids.buffer, lengths.buffer] }) as Promise<Float32Array>)
      .then((out) => {
        if (out.length !== batch.length * DIMS) throw new Error(`worker returned ${out.length} floats for ${batch.length} rows`);
        batch.forEach((item, i) => settle(item, out.subarray(i * DIMS, (i + 1) * DIMS)));
      })
      .catch((e: unknown) => {
        this.stats.failedBatches++;
        this.log.warn({ err: e, rows: batch.length }, 'embedding batch failed');
        batch.forEach((item) => settle(item, unavailable(`the embedding batch failed: ${(e as Error).message?.split('\n')[0] ?? e}`, e)));
      })
      .finally(() => {
        clearTimeout(stuck);
        this.#running[lane]--;
        pool.running--;
        this.#inFlight.delete(task);
        this.#pump();
      });
    this.#inFlight.add(task);
  }
}

function settle(item: Item, result: Float32Array | Error): void {
  if (item.done) return;
  item.done = true;
  clearTimeout(item.timer);
  if (result instanceof Error) item.reject(result);
  else item.resolve(result);
}
