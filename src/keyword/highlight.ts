/**
 * The `highlight` of a keyword hit: a short passage of the stored text around the first
 * matched words, each marked with <mark>…</mark>. The rest is HTML-escaped, so the passage can
 * be shown as HTML as it is.
 */
import { tokenize } from './text.js';

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The passage of the first of `texts` that has a matched word, at most about `width`
 * characters, cut at spaces where it can be; null when none has one.
 */
export function highlight(texts: (string | (() => string))[], matches: (norm: string) => boolean, width = 240): string | null {
  for (const t of texts) {
    // A function is read only when the texts before it had no hit (the full text is large).
    const text = typeof t === 'function' ? t() : t;
    const hits = tokenize(text).filter((t) => matches(t.norm));
    if (hits.length === 0) continue;
    // Start a little before the first hit, at a word boundary.
    let start = Math.max(0, hits[0].start - Math.floor(width / 4));
    if (start > 0) {
      const space = text.indexOf(' ', start);
      start = space >= 0 && space < hits[0].start ? space + 1 : start;
    }
    let end = Math.min(text.length, start + width);
    if (end < text.length) {
      const space = text.lastIndexOf(' ', end);
      if (space > hits[0].end) end = space;
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
      out += `${escape(text.slice(at, s))}<mark>${escape(text.slice(s, e))}</mark>`;
      at = e;
    }
    out += escape(text.slice(at, end)) + (end < text.length ? '…' : '');
    return out;
  }
  return null;
}
