/**
 * A tiny stand-in for BAAI/bge-m3 exported to ONNX, with the real export's inputs and
 * outputs, plus a tokenizer in the layout bge-m3 ships (XLM-RoBERTa Unigram). The real
 * weights are gigabytes and cannot be downloaded here; this lets tests drive the real
 * embedding code (onnxruntime-node + @huggingface/tokenizers) in milliseconds.
 *
 * Graph (opset 17), with b = batch, s = sequence, D = 1024:
 *   h      = Gather(E, input_ids)                                   [b, s, D]
 *   m      = Unsqueeze(Cast(attention_mask, float), 2)              [b, s, 1]
 *   pooled = ReduceSum(h * m, 1) / ReduceSum(m, 1)                  [b, 1, D]
 *   x      = h + pooled            then `layers` times x = Tanh(MatMul(x, W_i))
 *   'hidden' -> last_hidden_state = x                              [b, s, D]
 *   'pooled' -> sentence_embedding = row 0 of x (layers run on row 0 only)  [b, D]
 * The masked mean makes every real token move every row and keeps padding out of them, so a
 * padded batch must give the same rows as each sequence alone: the property batching code
 * has to preserve. Outputs are not L2-normalised (the service does that).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';
import { Rng } from './rng.js';

const { onnx } = onnxProto;

const DIM = 1024;
const OPSET = 17;
/** IR version 8 (ONNX 1.10..1.12) is the newest onnx-proto 8 knows and covers opset 17. */
const IR_VERSION = 8;
/** External data offsets are page aligned so ORT can map them. */
const ALIGN = 4096;

export interface TinyModelOptions {
  /** 'hidden': output `last_hidden_state` float32 [batch, seq, 1024] (default); 'pooled': output `sentence_embedding` float32 [batch, 1024]. */
  output?: 'hidden' | 'pooled';
  /** Extra 1024x1024 MatMul+Tanh layers applied per token, to give the model a realistic cost for benchmarks (default 0). */
  layers?: number;
  /** Store the weights in an external `model.onnx_data` file (as large real exports do) instead of inside model.onnx (default false). */
  externalData?: boolean;
  seed?: number;
  /**
   * Token embedding width (default 1024). Below 1024 the tokens are embedded this wide, mixed,
   * and projected to 1024 by a MatMul: the same inputs and outputs at far less cost, for
   * benchmarks that measure everything but the model.
   */
  width?: number;
}

/** The tiny vocabulary's words (so tests can write texts the tokenizer knows). */
export const TINY_WORDS: string[] = (
  'the of and to in is was for on that with as by at from it an be this are has have had ' +
  'not but or were which their its after they will been more who new one also would year ' +
  'two first said over into than about up out last when other three could some after all ' +
  'no can there people time what while most made only week since before says market ' +
  'markets rose fell price prices stock stocks shares bank banks rate rates inflation ' +
  'economy growth trade oil gas energy power company companies business government ' +
  'minister president election vote party parliament court law police city country ' +
  'state world war peace talks deal sanctions army attack strike rail workers union ' +
  'pay jobs report data study health hospital doctors school students university ' +
  'climate weather storm flood fire heat rain snow water food farmers prices ' +
  'football match team season league cup game win won lost player coach film music ' +
  'art book news today yesterday tomorrow monday tuesday wednesday thursday friday ' +
  'saturday sunday january february march april may june july august september ' +
  'october november december percent million billion high low record against under ' +
  'between during plan plans budget tax taxes cost costs home homes house housing ' +
  'car cars road airport flight train ship port europe asia africa america china ' +
  'india russia germany france britain japan brazil central local national public'
)
  .split(' ')
  .filter((w, i, all) => all.indexOf(w) === i);

/** A few CJK characters, so multilingual text can be known as well as unknown. */
const CJK = ['中', '国', '日', '本', '新', '闻', '市', '场', '人', '年'];

const SPECIALS = ['<s>', '<pad>', '</s>', '<unk>'] as const;
const MASK = '<mask>';
const SPACE = '\u2581';

/**
 * The Unigram vocabulary as [piece, logprob] pairs. Whole words score far above single
 * characters, so Viterbi picks "▁market" over "▁m" + "a" + ...; every printable ASCII
 * character exists with and without "▁", so ASCII text never falls back to <unk>.
 */
function vocabulary(): Array<[string, number]> {
  const seen = new Set<string>();
  const vocab: Array<[string, number]> = [];
  const add = (piece: string, score: number): void => {
    if (seen.has(piece)) return;
    seen.add(piece);
    vocab.push([piece, score]);
  };
  for (const s of SPECIALS) add(s, 0);
  TINY_WORDS.forEach((w, i) => add(SPACE + w, -4 - i * 0.001));
  TINY_WORDS.forEach((w, i) => add(w, -6 - i * 0.001));
  add(SPACE, -7);
  for (let c = 0x21; c <= 0x7e; c++) {
    const ch = String.fromCharCode(c);
    add(SPACE + ch, -9);
    add(ch, -9.5);
  }
  for (const ch of CJK) {
    add(SPACE + ch, -9);
    add(ch, -9.5);
  }
  add(MASK, 0);
  return vocab;
}

function addedToken(id: number, content: string, lstrip = false): Record<string, unknown> {
  return { id, content, single_word: false, lstrip, rstrip: false, normalized: false, special: true };
}

/** tokenizer.json in the shape bge-m3 ships, with the tiny vocabulary. */
function tokenizerJson(vocab: Array<[string, number]>): Record<string, unknown> {
  const special = (id: string) => ({ SpecialToken: { id, type_id: 0 } });
  const seq = (id: 'A' | 'B') => ({ Sequence: { id, type_id: 0 } });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [...SPECIALS.map((s, i) => addedToken(i, s)), addedToken(vocab.length - 1, MASK, true)],
    normalizer: {
      type: 'Sequence',
      normalizers: [
        // The real file carries sentencepiece's binary charsmap here; @huggingface/tokenizers
        // ignores it and applies NFKC plus control/space clean-up, so a placeholder is enough.
        { type: 'Precompiled', precompiled_charsmap: null },
        { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' },
      ],
    },
    pre_tokenizer: { type: 'Metaspace', replacement: SPACE, prepend_scheme: 'always', split: true },
    post_processor: {
      type: 'TemplateProcessing',
      single: [special('<s>'), seq('A'), special('</s>')],
      pair: [special('<s>'), seq('A'), special('</s>'), special('</s>'), seq('B'), special('</s>')],
      special_tokens: {
        '</s>': { id: '</s>', ids: [2], tokens: ['</s>'] },
        '<s>': { id: '<s>', ids: [0], tokens: ['<s>'] },
      },
    },
    decoder: { type: 'Metaspace', replacement: SPACE, prepend_scheme: 'always', split: true },
    model: { type: 'Unigram', unk_id: 3, vocab, byte_fallback: false },
  };
}

const TOKENIZER_CONFIG = {
  bos_token: '<s>',
  clean_up_tokenization_spaces: true,
  cls_token: '<s>',
  eos_token: '</s>',
  mask_token: MASK,
  model_max_length: 8192,
  pad_token: '<pad>',
  sep_token: '</s>',
  sp_model_kwargs: {},
  tokenizer_class: 'XLMRobertaTokenizer',
  unk_token: '<unk>',
};

interface Weight {
  name: string;
  dims: number[];
  data: Float32Array;
}

function bytesOf(a: Float32Array | BigInt64Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

function int64Const(name: string, values: number[], dims: number[]): InstanceType<typeof onnx.TensorProto> {
  return onnx.TensorProto.create({
    name,
    dims,
    dataType: onnx.TensorProto.DataType.INT64,
    rawData: bytesOf(BigInt64Array.from(values.map(BigInt))),
  });
}

function node(opType: string, input: string[], output: string[], attribute: Array<Record<string, unknown>> = []) {
  return onnx.NodeProto.create({ opType, input, output, name: output[0], attribute });
}

function tensorInfo(name: string, elemType: number, dims: Array<string | number>) {
  return onnx.ValueInfoProto.create({
    name,
    type: {
      tensorType: {
        elemType,
        shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) },
      },
    },
  });
}

/** Writes model.onnx (+ model.onnx_data), tokenizer.json and tokenizer_config.json into `dir` (created if needed). Returns dir. */
export function writeTinyModel(dir: string, o: TinyModelOptions = {}): string {
  const output = o.output ?? 'hidden';
  const layers = o.layers ?? 0;
  const rng = new Rng(o.seed ?? 1);
  const vocab = vocabulary();
  mkdirSync(dir, { recursive: true });

  const width = o.width ?? DIM;
  const weights: Weight[] = [];
  const E = new Float32Array(vocab.length * width);
  for (let i = 0; i < E.length; i++) E[i] = rng.gauss();
  weights.push({ name: 'E', dims: [vocab.length, width], data: E });
  if (width !== DIM) {
    const P = new Float32Array(width * DIM);
    for (let i = 0; i < P.length; i++) P[i] = rng.gauss() / Math.sqrt(width);
    weights.push({ name: 'P', dims: [width, DIM], data: P });
  }
  for (let l = 0; l < layers; l++) {
    const W = new Float32Array(DIM * DIM);
    for (let i = 0; i < W.length; i++) W[i] = rng.gauss() / Math.sqrt(DIM);
    weights.push({ name: `W${l}`, dims: [DIM, DIM], data: W });
  }

  const FLOAT = onnx.TensorProto.DataType.FLOAT;
  const INT64 = onnx.TensorProto.DataType.INT64;
  const nodes = [
    node('Gather', ['E', 'input_ids'], ['h'], [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }]),
    node('Cast', ['attention_mask'], ['mask_f'], [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: FLOAT }]),
    node('Unsqueeze', ['mask_f', 'axis2'], ['m']),
    node('Mul', ['h', 'm'], ['hm']),
    node('ReduceSum', ['hm', 'axis1'], ['sum'], [{ name: 'keepdims', type: onnx.AttributeProto.AttributeType.INT, i: 1 }]),
    node('ReduceSum', ['m', 'axis1'], ['count'], [{ name: 'keepdims', type: onnx.AttributeProto.AttributeType.INT, i: 1 }]),
    node('Div', ['sum', 'count'], ['pooled']),
  ];
  // The layers act on each token alone, so a pooled model takes row 0 first and runs them on
  // that row only: the same values as the hidden model's row 0, at a fraction of the cost.
  let x = width === DIM ? 'x0' : 'xw';
  if (output === 'hidden') nodes.push(node('Add', ['h', 'pooled'], [x]));
  else {
    nodes.push(node('Gather', ['h', 'first'], ['h0'], [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 1 }]));
    nodes.push(node('Squeeze', ['pooled', 'axis1'], ['pooled0']));
    nodes.push(node('Add', ['h0', 'pooled0'], [x]));
  }
  if (width !== DIM) {
    nodes.push(node('MatMul', [x, 'P'], ['x0']));
    x = 'x0';
  }
  for (let l = 0; l < layers; l++) {
    nodes.push(node('MatMul', [x, `W${l}`], [`mm${l}`]));
    x = `x${l + 1}`;
    nodes.push(node('Tanh', [`mm${l}`], [x]));
  }
  const outName = output === 'hidden' ? 'last_hidden_state' : 'sentence_embedding';
  nodes.push(node('Identity', [x], [outName]));

  const initializer = [int64Const('axis1', [1], [1]), int64Const('axis2', [2], [1])];
  if (output === 'pooled') initializer.push(int64Const('first', [0], []));
  let offset = 0;
  const chunks: Uint8Array[] = [];
  for (const w of weights) {
    const raw = bytesOf(w.data);
    if (!o.externalData) {
      initializer.push(onnx.TensorProto.create({ name: w.name, dims: w.dims, dataType: FLOAT, rawData: raw }));
      continue;
    }
    const pad = (ALIGN - (offset % ALIGN)) % ALIGN;
    if (pad > 0) chunks.push(new Uint8Array(pad));
    offset += pad;
    initializer.push(
      onnx.TensorProto.create({
        name: w.name,
        dims: w.dims,
        dataType: FLOAT,
        dataLocation: onnx.TensorProto.DataLocation.EXTERNAL,
        externalData: [
          { key: 'location', value: 'model.onnx_data' },
          { key: 'offset', value: String(offset) },
          { key: 'length', value: String(raw.byteLength) },
        ],
      }),
    );
    chunks.push(raw);
    offset += raw.byteLength;
  }

  const model = onnx.ModelProto.create({
    irVersion: IR_VERSION,
    producerName: 'newsmatch-tiny-model',
    opsetImport: [{ domain: '', version: OPSET }],
    graph: {
      name: 'tiny-bge-m3',
      node: nodes,
      initializer,
      input: [tensorInfo('input_ids', INT64, ['batch', 'sequence']), tensorInfo('attention_mask', INT64, ['batch', 'sequence'])],
      output: [output === 'hidden' ? tensorInfo(outName, FLOAT, ['batch', 'sequence', DIM]) : tensorInfo(outName, FLOAT, ['batch', DIM])],
    },
  });

  writeFileSync(join(dir, 'model.onnx'), onnx.ModelProto.encode(model).finish());
  if (o.externalData) writeFileSync(join(dir, 'model.onnx_data'), Buffer.concat(chunks));
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tokenizerJson(vocab)));
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(TOKENIZER_CONFIG, null, 2));
  return dir;
}
