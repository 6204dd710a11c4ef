/**
 * The one tokenizer of keyword search. Documents and queries both pass through it, so what is
 * indexed and what is asked are the same tokens; FTS5 only sees its output (space-separated,
 * already folded), and the highlighter marks the original text by the offsets it keeps.
 *
 * - A token is a run of letters, digits and private-use characters (FTS5 unicode61's own rule).
 * - Folding: compatibility forms (NFKC: full-width Ａ → a), case, Latin/Greek/Cyrillic
 *   diacritics (é → e, but never a kana's dakuten), ß → ss.
 * - Han, kana and Hangul runs carry no spaces between words: they become overlapping bigrams
 *   (東京都 → 東京 京都), the usual CJK indexing, so any substring of two or more characters
 *   is found as a phrase of its bigrams without a dictionary that might cut a query and a
 *   document differently. A document's run also ends with its last character alone, so a
 *   one-character query (a prefix of the bigrams) finds it in any position.
 * - Thai, Lao, Khmer and Myanmar are cut into words with Intl.Segmenter.
 */

export interface Token {
  /** Folded form, as indexed. */
  norm: string;
  /** UTF-16 offsets of the token in the original text. */
  start: number;
  end: number;
}

export const WORD = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}ー々〆]+/gu;
const SEGMENTED = /[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const LATINISH_MARKS = /([\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}])\p{M}+/gu;

export const ASCII = /^[\u0000-\u007f]*$/;

const segmenter = new Intl.Segmenter('th', { granularity: 'word' });

/** Folds one token's text (see above). */
export function fold(s: string): string {
  // Plain ASCII (most tokens of most corpora) has nothing to normalise but case.
  if (ASCII.test(s)) return s.toLowerCase();
  let t = s.normalize('NFKC').toLowerCase();
  // Only marks on Latin-like letters are diacritics to drop; elsewhere a mark is the letter.
  if (/[^\u0000-\u007f]/.test(t)) t = t.normalize('NFD').replace(LATINISH_MARKS, '$1').normalize('NFC').replace(/ß/g, 'ss');
  return t;
}

/** The tokens of `text`, in order, with their offsets (a query's CJK runs end on a bigram). */
export function tokenize(text: string, query = false): Token[] {
  const out: Token[] = [];
  for (const m of text.matchAll(WORD)) {
    const word = m[0];
    const at = m.index!;
    if (ASCII.test(word)) {
      out.push({ norm: word.toLowerCase(), start: at, end: at + word.length });
      continue;
    }
    if (!/[^\p{M}]/u.test(word)) continue; // marks alone are no word
    if (!/[^\u0000-\u024f]/.test(word)) {
      out.push({ norm: fold(word), start: at, end: at + word.length });
      continue;
    }
    splitWord(word, at, out, query);
  }
  return out;
}

/** A word with CJK or unspaced-script parts: those parts are cut, the rest kept whole. */
function splitWord(word: string, at: number, out: Token[], query: boolean): void {
  let last = 0;
  const rest = (end: number) => {
    if (end > last) pushPlain(word.slice(last, end), at + last, out);
  };
  for (const m of word.matchAll(CJK)) {
    rest(m.index!);
    const chars = [...m[0]];
    let offset = at + m.index!;
    for (let i = 0; i + 1 < chars.length; i++) {
      const pair = chars[i] + chars[i + 1];
      out.push({ norm: fold(pair), start: offset, end: offset + pair.length });
      offset += chars[i].length;
    }
    const lastChar = chars[chars.length - 1];
    if (chars.length === 1 || !query) out.push({ norm: fold(lastChar), start: offset, end: offset + lastChar.length });
    last = m.index! + m[0].length;
  }
  rest(word.length);
}

function pushPlain(part: string, at: number, out: Token[]): void {
  if (!SEGMENTED.test(part)) {
    if (/[^\p{M}]/u.test(part)) out.push({ norm: fold(part), start: at, end: at + part.length });
    return;
  }
  for (const s of segmenter.segment(part)) {
    if (s.isWordLike) out.push({ norm: fold(s.segment), start: at + s.index, end: at + s.index + s.segment.length });
  }
}

/** A lone CJK character: as a query term it is a prefix (of the bigrams it starts). */
export const isCjkChar = (s: string): boolean => [...s].length === 1 && new RegExp(CJK.source, 'u').test(s);

/** What FTS5 indexes for `text`: its folded tokens, space-separated. */
export function indexText(text: string): string {
  return tokenize(text)
    .map((t) => t.norm)
    .join(' ');
}
