import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';
import { afterAll, describe, expect, it } from 'vitest';
import { TINY_WORDS, writeTinyModel, type TinyModelOptions } from './tiny-model.js';

const DIM = 1024;
const root = mkdtempSync(join(tmpdir(), 'tiny-model-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
function make(o: TinyModelOptions = {}): string {
  return writeTinyModel(join(root, `m${n++}`), o);
}

function loadTokenizer(dir: string): Tokenizer {
  const json = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
  const config = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8'));
  return new Tokenizer(json, config);
}

/** Right-pads `rows` with pad id 1 into int64 [b, s] tensors, the way the service batches. */
function batch(rows: number[][], padId = 1): Record<string, ort.Tensor> {
  const s = Math.max(...rows.map((r) => r.length));
  const ids = new BigInt64Array(rows.length * s).fill(BigInt(padId));
  const mask = new BigInt64Array(rows.length * s);
  rows.forEach((r, i) =>
    r.forEach((id, j) => {
      ids[i * s + j] = BigInt(id);
      mask[i * s + j] = 1n;
    }),
  );
  return {
    input_ids: new ort.Tensor('int64', ids, [rows.length, s]),
    attention_mask: new ort.Tensor('int64', mask, [rows.length, s]),
  };
}

function maxDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}

async function run(session: ort.InferenceSession, rows: number[][], padId = 1): Promise<ort.Tensor> {
  const out = await session.run(batch(rows, padId));
  return out[session.outputNames[0]];
}

describe('tiny tokenizer', () => {
  const dir = make();
  const tok = loadTokenizer(dir);

  it('has the bge-m3 special ids and <mask> last', () => {
    const json = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
    const vocab: Array<[string, number]> = json.model.vocab;
    expect(vocab.slice(0, 4).map((v) => v[0])).toEqual(['<s>', '<pad>', '</s>', '<unk>']);
    expect(json.model).toMatchObject({ type: 'Unigram', unk_id: 3 });
    expect(vocab.at(-1)?.[0]).toBe('<mask>');
    expect(json.added_tokens.map((t: { id: number; content: string }) => [t.id, t.content])).toEqual([
      [0, '<s>'],
      [1, '<pad>'],
      [2, '</s>'],
      [3, '<unk>'],
      [vocab.length - 1, '<mask>'],
    ]);
    expect(vocab.length).toBeGreaterThan(300);
    expect(vocab.length).toBeLessThan(1000);
    expect(tok.token_to_id('<pad>')).toBe(1);
    const config = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8'));
    expect(config).toMatchObject({ model_max_length: 8192, pad_token: '<pad>', tokenizer_class: 'XLMRobertaTokenizer' });
  });

  it('encodes known words to one piece each between <s> and </s>', () => {
    const enc = tok.encode('the market rose');
    expect(enc.tokens).toEqual(['<s>', '\u2581the', '\u2581market', '\u2581rose', '</s>']);
    expect(enc.ids[0]).toBe(0);
    expect(enc.ids.at(-1)).toBe(2);
    expect(enc.ids).not.toContain(3);
    expect(enc.attention_mask).toEqual([1, 1, 1, 1, 1]);
    for (const w of TINY_WORDS) expect(tok.encode(w, { add_special_tokens: false }).tokens).toEqual([`\u2581${w}`]);
  });

  it('tokenizes any printable ASCII without <unk>', () => {
    let ascii = '';
    for (let c = 0x20; c <= 0x7e; c++) ascii += String.fromCharCode(c);
    for (const text of [ascii, 'Oil PRICES fell 3.5% on Monday (Reuters) -- "record" lows?', 'x  y\tz\n42']) {
      const enc = tok.encode(text);
      expect(enc.ids).not.toContain(3);
      expect(enc.ids.length).toBe(enc.attention_mask.length);
    }
  });

  it('maps unknown non-ASCII to <unk> and knows a few CJK characters', () => {
    expect(tok.encode('привет мир').ids).toContain(3);
    expect(tok.encode('中国 新闻').ids).not.toContain(3);
  });

  it('is deterministic, across calls and across writes with one seed', () => {
    const text = 'the central bank rose rates 2 times in March, says report';
    expect(tok.encode(text)).toEqual(tok.encode(text));
    const other = loadTokenizer(make({ seed: 99 }));
    expect(other.encode(text)).toEqual(tok.encode(text));
  });
});

describe('tiny model', () => {
  const tok = loadTokenizer(make());
  const a = tok.encode('the market rose after the bank cut rates').ids;
  const b = tok.encode('oil prices fell').ids;

  it("has the real export's inputs and a last_hidden_state output", async () => {
    const session = await ort.InferenceSession.create(join(make(), 'model.onnx'));
    expect(session.inputNames).toEqual(['input_ids', 'attention_mask']);
    expect(session.outputNames).toEqual(['last_hidden_state']);
    const out = await run(session, [a, b]);
    expect(out.type).toBe('float32');
    expect(out.dims).toEqual([2, a.length, DIM]);
  });

  it('keeps padding out of every real position (hidden)', async () => {
    const session = await ort.InferenceSession.create(join(make(), 'model.onnx'));
    const alone = (await run(session, [b])).data as Float32Array;
    const padded = await run(session, [b, a]);
    const s = padded.dims[1];
    expect(s).toBeGreaterThan(b.length);
    const row0 = (padded.data as Float32Array).subarray(0, b.length * DIM);
    expect(maxDiff(row0, alone)).toBeLessThan(1e-5);
    // Which id fills the padding must not matter either.
    const otherPad = (await run(session, [b, a], 7)).data as Float32Array;
    expect(maxDiff(otherPad.subarray(0, b.length * DIM), alone)).toBeLessThan(1e-5);
  });

  it('mixes every real token into every position', async () => {
    const session = await ort.InferenceSession.create(join(make(), 'model.onnx'));
    const one = (await run(session, [b])).data as Float32Array;
    const changed = [...b.slice(0, -2), tok.token_to_id('\u2581rose')!, b.at(-1)!];
    const two = (await run(session, [changed])).data as Float32Array;
    // Position 0 (<s>) is the same token in both, yet differs through the masked mean.
    expect(maxDiff(one.subarray(0, DIM), two.subarray(0, DIM))).toBeGreaterThan(1e-3);
  });

  it('pooled: outputs sentence_embedding [batch, 1024], unmoved by padding', async () => {
    const session = await ort.InferenceSession.create(join(make({ output: 'pooled' }), 'model.onnx'));
    expect(session.outputNames).toEqual(['sentence_embedding']);
    const padded = await run(session, [b, a]);
    expect(padded.dims).toEqual([2, DIM]);
    const alone = (await run(session, [b])).data as Float32Array;
    expect(maxDiff((padded.data as Float32Array).subarray(0, DIM), alone)).toBeLessThan(1e-5);
    // Not normalised: that is the service's job.
    let norm = 0;
    for (const v of alone) norm += v * v;
    expect(Math.abs(Math.sqrt(norm) - 1)).toBeGreaterThan(0.1);
  });

  it('pooled equals position 0 of hidden for one seed', async () => {
    const hidden = await ort.InferenceSession.create(join(make({ seed: 5 }), 'model.onnx'));
    const pooled = await ort.InferenceSession.create(join(make({ seed: 5, output: 'pooled' }), 'model.onnx'));
    const h = (await run(hidden, [a])).data as Float32Array;
    const p = (await run(pooled, [a])).data as Float32Array;
    expect(maxDiff(h.subarray(0, DIM), p)).toBe(0);
  });

  it('external data: small model.onnx, weights beside it, same outputs when loaded by path', async () => {
    for (const output of ['hidden', 'pooled'] as const) {
      const inline = make({ seed: 3, output });
      const external = make({ seed: 3, output, externalData: true });
      expect(existsSync(join(inline, 'model.onnx_data'))).toBe(false);
      expect(statSync(join(external, 'model.onnx')).size).toBeLessThan(4096);
      expect(statSync(join(external, 'model.onnx_data')).size).toBeGreaterThan(1_000_000);
      const s1 = await ort.InferenceSession.create(join(inline, 'model.onnx'));
      const s2 = await ort.InferenceSession.create(join(external, 'model.onnx'));
      expect(s2.outputNames).toEqual(s1.outputNames);
      const o1 = await run(s1, [a, b]);
      const o2 = await run(s2, [a, b]);
      expect(o2.dims).toEqual(o1.dims);
      expect(maxDiff(o1.data as Float32Array, o2.data as Float32Array)).toBe(0);
    }
  });

  it('external data from bytes needs the externalData session option', async () => {
    const dir = make({ externalData: true });
    const bytes = readFileSync(join(dir, 'model.onnx'));
    await expect(ort.InferenceSession.create(bytes)).rejects.toThrow(/external data/i);
    const session = await ort.InferenceSession.create(bytes, {
      externalData: [{ path: 'model.onnx_data', data: readFileSync(join(dir, 'model.onnx_data')) }],
    });
    expect((await run(session, [a])).dims).toEqual([1, a.length, DIM]);
  });

  it('layers: 2 adds Tanh layers and keeps padding out', async () => {
    for (const output of ['hidden', 'pooled'] as const) {
      const base = await ort.InferenceSession.create(join(make({ output }), 'model.onnx'));
      const deep = await ort.InferenceSession.create(join(make({ output, layers: 2 }), 'model.onnx'));
      const alone = (await run(deep, [b])).data as Float32Array;
      const padded = await run(deep, [b, a]);
      const width = output === 'hidden' ? b.length * DIM : DIM;
      expect(maxDiff((padded.data as Float32Array).subarray(0, width), alone)).toBeLessThan(1e-5);
      expect(alone.every((v) => Math.abs(v) < 1)).toBe(true);
      expect(maxDiff(alone, (await run(base, [b])).data as Float32Array)).toBeGreaterThan(0.1);
    }
  });

  it('writes byte-identical files for one seed and different weights for another', () => {
    const x = readFileSync(join(make({ seed: 11 }), 'model.onnx'));
    const y = readFileSync(join(make({ seed: 11 }), 'model.onnx'));
    const z = readFileSync(join(make({ seed: 12 }), 'model.onnx'));
    expect(x.equals(y)).toBe(true);
    expect(x.equals(z)).toBe(false);
  });
});
