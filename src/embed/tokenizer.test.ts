import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { beforeAll, describe, expect, it } from 'vitest';
import { TINY_WORDS, writeTinyModel } from '../../test/helpers/tiny-model.js';
import { TextTokenizer } from './tokenizer.js';

let dir: string;
let tok: TextTokenizer;
let library: Tokenizer;

beforeAll(() => {
  dir = writeTinyModel(fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-tok-')));
  tok = TextTokenizer.load(dir, 8192);
  const read = (f: string) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
  library = new Tokenizer(read('tokenizer.json'), read('tokenizer_config.json'));
});

describe('TextTokenizer', () => {
  it('gives exactly the library ids of the whole text, through its per-word cache', () => {
    const texts = [
      'the market rose',
      '  leading and  trailing\tspaces\nand lines  ',
      'Hello, world! (quoted) "marks"; 3.5% of $12,000 - ok?',
      '東京は晴れ。 北京也是。',
      `x\u00a0y\u3000z`,
      ...Array.from({ length: 50 }, (_, i) =>
        Array.from({ length: 5 + i }, (_, j) => TINY_WORDS[(i * 13 + j * 7) % TINY_WORDS.length]).join(i % 2 ? ' ' : '  '),
      ),
    ];
    // Twice: the second pass reads every word from the cache.
    for (let pass = 0; pass < 2; pass++) {
      for (const t of texts) {
        const want = library.encode(t, { add_special_tokens: false }).ids;
        expect(Array.from(tok.encode(t)), JSON.stringify(t)).toEqual([tok.bos, ...want, tok.eos]);
        expect(tok.count(t)).toBe(want.length);
      }
    }
  });

  it('counts additively at a space, as chunking relies on', () => {
    expect(tok.additiveAtSpaces).toBe(true);
    const parts = ['Hello, world!', 'the market rose.', '東京は晴れ。', `x\u00a0y`, TINY_WORDS.slice(3, 20).join(' ')];
    for (const a of parts) {
      for (const b of parts) {
        const whole = library.encode(`${a} ${b}`, { add_special_tokens: false }).ids.length;
        expect(tok.count(a) + tok.count(b), `${a} | ${b}`).toBe(whole);
      }
    }
  });

  it('reads bos, eos and pad from the tokenizer config (pad is 1 in bge-m3)', () => {
    expect([tok.bos, tok.pad, tok.eos]).toEqual([0, 1, 2]);
  });

  it('truncates before the closing token, so </s> is always last', () => {
    const short = TextTokenizer.load(dir, 8);
    const ids = short.encode(TINY_WORDS.slice(0, 40).join(' '));
    expect(ids.length).toBe(8);
    expect(ids[0]).toBe(short.bos);
    expect(ids[7]).toBe(short.eos);
    expect(Array.from(ids.subarray(1, 7))).toEqual(library.encode(TINY_WORDS.slice(0, 40).join(' '), { add_special_tokens: false }).ids.slice(0, 6));
  });

  it('names the file when the tokenizer is missing', () => {
    expect(() => TextTokenizer.load(os.tmpdir(), 10)).toThrow(/tokenizer\.json/);
  });
});
