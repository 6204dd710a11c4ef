/**
 * The `highlight` of a keyword hit: a short passage of the stored text around the first
 * matched words, each marked with <mark>…</mark>. The rest is HTML-escaped, so the passage can
 * be shown as HTML as it is.
 */
import type { TokenMatch } from './query.js';
import { ASCII, tokenize, WORD, type Token } from './text.js';

const isLowSurrogate = (s: string, i: number) => i > 0 && i < s.length && s.charCodeAt(i) >= 0xdc00 && s.charCodeAt(i) <= 0xdfff;

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The first matched token of `text`, found a word at a time (a long text is rarely read to its end). */
function firstHit(text: string, matches: (norm: string) => TokenMatch): Token | undefined {
  for (const m of text.matchAll(WORD)) {
    // A plain ASCII word is its own token, lower-cased; anything else goes through the tokenizer.
    if (ASCII.test(m[0])) {
      if (matches(m[0].toLowerCase()) !== null) return { norm: m[0].toLowerCase(), start: m.index!, end: m.index! + m[0].length };
      continue;
    }
    const found = tokenize(m[0]).find((t) => matches(t.norm) !== null);
    if (found) return { ...found, start: found.start + m.index!, end: found.end + m.index! };
  }
  return undefined;
}

/**
 * The passage of the first of `texts` that has a matched word, at most about `width`
 * characters, cut at spaces where it can be; null when none has one.
 */
export function highlight(texts: (string | (() => string))[], matches: (norm: string) => TokenMatch, width = 240): string | null {
  for (const t of texts) {
    // A function is read only when the texts before it had no hit (the full text is large).
    const text = typeof t === 'function' ? t() : t;
    const first = firstHit(text, matches);
    if (!first) continue;
    // Start a little before the first hit, at a word boundary.
    let start = Math.max(0, first.start - Math.floor(width / 4));
    if (start > 0) {
      const space = text.indexOf(' ', start);
      start = space >= 0 && space < first.start ? space + 1 : start;
    }
    let end = Math.min(text.length, start + width);
    if (end < text.length) {
      const space = text.lastIndexOf(' ', end);
      if (space > first.end) end = space;
    }
    // Never cut a character outside the BMP (an emoji, a rare kanji) in half.
    if (isLowSurrogate(text, start)) start--;
    if (isLowSurrogate(text, end)) end++;
    // Only the passage is tokenized in full (a token cut at its edges is left unmarked).
    const hits: { start: number; end: number }[] = [];
    for (const h of tokenize(text.slice(start, end))) {
      const m = matches(h.norm);
      if (m === null) continue;
      const at = h.start + start;
      hits.push({ start: at, end: m === 'all' ? h.end + start : at + (text.codePointAt(at)! > 0xffff ? 2 : 1) });
    }
    // Bigram hits of one CJK word overlap: merge marked spans before writing them.
    const spans: [number, number][] = [];
    for (const h of hits) {
      if (h.start >= end) break;
      const last = spans[spans.length - 1];
      if (last && h.start <= last[1]) last[1] = Math.max(last[1], h.end);
      else spans.push([h.start, Math.min(h.end, end)]);
    }
    let out = start > 0 ? '…' : '';
    let at = start;
    for (const [s, e] of spans) {
      out += `${escapeHtml(text.slice(at, s))}<mark>${escapeHtml(text.slice(s, e))}</mark>`;
      at = e;
    }
    out += escapeHtml(text.slice(at, end)) + (end < text.length ? '…' : '');
    return out;
  }
  return null;
}
