/**
 * The bge-m3 tokenizer (XLM-RoBERTa SentencePiece Unigram), read from the model directory's
 * `tokenizer.json` + `tokenizer_config.json` by @huggingface/tokenizers (pure JS). Runs on
 * the calling thread: texts are tokenised before batching, since batches are cut by tokens.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';

/** Whitespace the normalizer turns into the word separator. */
const SPACES = /[\s\u00a0\u2000-\u200b\u3000]+/u;
const CACHE_WORDS = 200_000;
/** Longer "words" (unspaced scripts: a whole Japanese sentence) are not worth keeping. */
const MAX_CACHED_WORD = 48;

export class TextTokenizer {
  readonly #tok: Tokenizer;
  readonly #cache = new Map<string, number[]>();
  readonly bos: number;
  readonly eos: number;
  readonly pad: number;
  /** `count(a + ' ' + b) === count(a) + count(b)`: counts are per word (see #ids), so chunking may sum them. */
  readonly additiveAtSpaces = true;

  private constructor(
    tok: Tokenizer,
    config: Record<string, unknown>,
    readonly maxTokens: number,
  ) {
    this.#tok = tok;
    const id = (key: string, fallback: string): number => {
      const v = config[key];
      const name = typeof v === 'string' ? v : v && typeof v === 'object' && 'content' in v ? String((v as { content: unknown }).content) : fallback;
      const n = tok.token_to_id(name);
      if (n === undefined) throw new Error(`tokenizer.json has no ${key} "${name}"`);
      return n;
    };
    this.bos = id('bos_token', '<s>');
    this.eos = id('eos_token', '</s>');
    this.pad = id('pad_token', '<pad>');
  }

  /** Reads the two files of a model directory. Throws with the path when one is missing or malformed. */
  static load(dir: string, maxTokens: number): TextTokenizer {
    const read = (name: string): Record<string, unknown> => {
      const file = path.join(dir, name);
      try {
        return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
      } catch (e) {
        throw new Error(`${file}: ${(e as Error).message}`);
      }
    };
    const json = read('tokenizer.json');
    const config = read('tokenizer_config.json');
    return new TextTokenizer(new Tokenizer(json, config), config, maxTokens);
  }

  /**
   * `<s>` tokens `</s>`, cut to `maxTokens` in all: the text's tokens are truncated before the
   * closing token is added, so it is always there (as the model was trained).
   */
  encode(text: string): Int32Array {
    const ids = this.#ids(text);
    const n = Math.min(ids.length, this.maxTokens - 2);
    const out = new Int32Array(n + 2);
    out[0] = this.bos;
    for (let i = 0; i < n; i++) out[i + 1] = ids[i];
    out[n + 1] = this.eos;
    return out;
  }

  /** Tokens in a text, specials excluded: what chunking sizes its groups by. */
  count(text: string): number {
    // As #ids, without building the id list: chunking counts every sentence.
    const words = text.split(SPACES);
    let n = 0;
    let last = words.length - 1;
    if (last > 0 && words[last] === '') while (last >= 0 && words[last] === '') last--;
    const trailing = last < words.length - 1;
    for (let i = 0; i <= last; i++) {
      const word = words[i];
      if (word === '') continue;
      n += (trailing && i === last ? this.#encode(`${word} `) : (this.#cache.get(word) ?? this.#remember(word))).length;
    }
    return n;
  }

  /**
   * The text's token ids, word by word through a cache. XLM-RoBERTa's pieces never span a
   * space (its Metaspace pre-tokenizer splits there and marks each word with "▁"), so words
   * tokenised alone give the ids of the whole text; news repeats its words, so most are cache
   * hits, and the pure-JS Unigram lattice (about 1 ms for a 70-token sentence) runs rarely.
   */
  #ids(text: string): number[] {
    const out: number[] = [];
    const words = text.split(SPACES);
    // Trailing whitespace becomes a lone "▁" on the last word: tokenise that one as it stands.
    let trailing = -1;
    if (words.length > 1 && words[words.length - 1] === '') for (let i = words.length - 2; i >= 0 && trailing < 0; i--) if (words[i] !== '') trailing = i;
    for (let i = 0; i < words.length; i++) {
      const word = words[i];
      if (word === '') continue;
      const ids = i === trailing ? this.#encode(`${word} `) : (this.#cache.get(word) ?? this.#remember(word));
      for (const id of ids) out.push(id);
    }
    return out;
  }

  #remember(word: string): number[] {
    const ids = this.#encode(word);
    if (word.length <= MAX_CACHED_WORD) {
      if (this.#cache.size >= CACHE_WORDS) this.#cache.clear();
      this.#cache.set(word, ids);
    }
    return ids;
  }

  #encode(text: string): number[] {
    return this.#tok.encode(text, { add_special_tokens: false }).ids;
  }
}
