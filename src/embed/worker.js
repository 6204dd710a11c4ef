// @ts-check
/**
 * A Piscina worker: one ONNX Runtime session, created on the first task, runs padded batches
 * of token ids and returns L2-normalised 1024-d rows. Plain JavaScript so that worker threads
 * load it as it is, from `src/` under the tests and from `dist/` when installed.
 *
 * workerData: { modelPath, device: 'auto' | 'cpu' | 'cuda', intraOpThreads, padId, verbose }
 */
import { workerData, move } from 'piscina';
import * as ort from 'onnxruntime-node';

const DIMS = 1024;
/** Where an int64's low 32 bits sit among its two Int32Array words: first on little-endian CPUs. */
const LOW_WORD = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 0 : 1;
/** Outputs that already hold one pooled vector per row, as some exports name them. */
const POOLED = ['sentence_embedding', 'dense', 'dense_vecs', 'pooler_output', 'embeddings'];

/** @type {Promise<{ session: ort.InferenceSession, provider: string, note: string | null, output: string, pooled: boolean }> | null} */
let ready = null;

/**
 * Creates the session. onnxruntime-node does not fall back from a missing CUDA provider by
 * itself: try CUDA, and on failure create a CPU session and say why.
 */
async function open() {
  const { modelPath, device, intraOpThreads, verbose } = workerData;
  // ONNX Runtime prints its own errors to stderr, a missing CUDA provider among them; ours say
  // it once. Its logs come back with LOG_LEVEL=debug.
  ort.env.logLevel = verbose ? 'warning' : 'fatal';
  /** @type {ort.InferenceSession.SessionOptions} */
  // No spinning: workers share the cores, and a spinning idle pool would steal them.
  const base = {
    intraOpNumThreads: intraOpThreads,
    interOpNumThreads: 1,
    graphOptimizationLevel: /** @type {const} */ ('all'),
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  };
  let session;
  let provider = 'cpu';
  let note = null;
  if (device !== 'cpu') {
    try {
      session = await ort.InferenceSession.create(modelPath, { ...base, executionProviders: ['cuda'] });
      provider = 'cuda';
    } catch (e) {
      note = `CUDA unavailable (${firstLine(e)})`;
    }
  }
  if (!session) session = await ort.InferenceSession.create(modelPath, { ...base, executionProviders: ['cpu'] });
  const names = session.outputNames;
  const output = names.includes('last_hidden_state') ? 'last_hidden_state' : (names.find((n) => POOLED.includes(n)) ?? names[0]);
  return { session, provider, note, output, pooled: output !== 'last_hidden_state' && POOLED.includes(output) };
}

/** @param {unknown} e */
function firstLine(e) {
  return String(e instanceof Error ? e.message : e)
    .split('\n')[0]
    .slice(0, 300);
}

/**
 * @param {{ kind: 'info' } | { kind: 'run', ids: Int32Array, lengths: Int32Array, exit?: boolean }} task
 *   `ids`: each row's tokens back to back (specials included); `lengths`: tokens per row.
 */
export default async function embed(task) {
  if (!ready) ready = open();
  let s;
  try {
    s = await ready;
  } catch (e) {
    ready = null; // a later task tries again (the model file may have been fixed)
    throw e;
  }
  if (task.kind === 'info') return { provider: s.provider, note: s.note, output: s.output, inputs: s.session.inputNames };

  const { ids, lengths } = task;
  const rows = lengths.length;
  let seq = 0;
  for (let i = 0; i < rows; i++) seq = Math.max(seq, lengths[i]);
  const { inputIds, mask } = padded(ids, lengths, seq);
  // Fault injection (Embedder.simulateWorkerExit): die mid-batch, outside ONNX Runtime's run.
  if (task.exit) process.exit(1);
  /** @type {Record<string, ort.Tensor>} */
  const feeds = {
    input_ids: new ort.Tensor('int64', inputIds, [rows, seq]),
    attention_mask: new ort.Tensor('int64', mask, [rows, seq]),
  };
  // Exports that also take token_type_ids (all zeros for one segment).
  if (s.session.inputNames.includes('token_type_ids')) feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(rows * seq), [rows, seq]);
  const result = await s.session.run(feeds, [s.output]);
  const t = result[s.output];
  const dims = t.dims;
  const data = /** @type {Float32Array} */ (t.data);
  if (t.type !== 'float32' || dims[0] !== rows || dims[dims.length - 1] !== DIMS || (dims.length !== 2 && dims.length !== 3)) {
    throw new Error(`model output ${s.output} is ${t.type} [${dims.join(', ')}], expected float32 [${rows}, (seq,) ${DIMS}]`);
  }
  // The dense bge-m3 vector is the CLS row (position 0) of the last hidden state.
  const out = normalized(data, rows, dims.length === 3 ? dims[1] * DIMS : DIMS);
  for (const v of Object.values(result)) v.dispose?.();
  return move(out);
}

/**
 * The padded [rows, seq] int64 inputs. Ids and the mask are small and non-negative, so each
 * int64 is written as its low 32-bit word (the high one stays 0): no BigInt per token.
 * @param {Int32Array} ids @param {Int32Array} lengths @param {number} seq
 */
function padded(ids, lengths, seq) {
  const rows = lengths.length;
  const inputIds = new BigInt64Array(rows * seq);
  const mask = new BigInt64Array(rows * seq);
  const idWords = new Int32Array(inputIds.buffer);
  const maskWords = new Int32Array(mask.buffer);
  const pad = workerData.padId;
  for (let i = 0, at = 0; i < rows; at += lengths[i], i++) {
    const n = lengths[i];
    for (let j = 0; j < seq; j++) {
      const w = 2 * (i * seq + j) + LOW_WORD;
      idWords[w] = j < n ? ids[at + j] : pad;
      maskWords[w] = j < n ? 1 : 0;
    }
  }
  return { inputIds, mask };
}

/**
 * Each row's first DIMS floats (rows `stride` apart), scaled to unit length.
 * @param {Float32Array} data @param {number} rows @param {number} stride
 */
function normalized(data, rows, stride) {
  const out = new Float32Array(rows * DIMS);
  for (let i = 0; i < rows; i++) {
    const from = i * stride;
    let norm = 0;
    for (let d = 0; d < DIMS; d++) norm += data[from + d] * data[from + d];
    const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let d = 0; d < DIMS; d++) out[i * DIMS + d] = data[from + d] * inv;
  }
  return out;
}
