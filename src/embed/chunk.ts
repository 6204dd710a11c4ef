/**
 * Splits a news revision into the texts that are embedded one vector each.
 *
 * A query's score for an article is its best cosine over these chunks, and the best chunk is
 * shown to users as the explanation, so chunks are whole sentences wherever that is possible:
 *
 *   chunkRevision('Port strike ends', 'Dock workers returned on Monday. Dr. Lee said …\n\nShips …', o)
 *   → ['Port strike ends', 'Dock workers returned on Monday. Dr. Lee said …', 'Ships …']
 *
 * Sentences come from ICU (Intl.Segmenter), repaired where ICU is known to split wrongly
 * (abbreviations, initials, German ordinals, CJK brackets), then packed greedily into groups
 * of minTokens..maxTokens.
 */

export interface ChunkOptions {
  /** Tokens in a text, as the embedding model's tokenizer counts them (without <s> </s>). */
  countTokens: (text: string) => number;
  minTokens: number;
  maxTokens: number;
  /**
   * Whether `countTokens(a + ' ' + b) === countTokens(a) + countTokens(b)` for texts without
   * edge spaces: true of SentencePiece Metaspace tokenizers (bge-m3's), whose pieces never span
   * a space. Groups of sentences joined by spaces are then sized by summing, not counted again.
   */
  additiveAtSpaces?: boolean;
  /** BCP 47 language tag hint for Intl.Segmenter; default undefined (the runtime's default, which segments every script). */
  locale?: string;
}

/**
 * Tokens ICU takes for a sentence end when a capital or a digit follows ("Dr. Smith", "ca. 300 Menschen",
 * "la Sra. García"). ICU never splits before a lowercase word, so only these cases need repair.
 * An entry written in lowercase matches in any case; one written with a capital ("No.", "Art.") matches
 * only as written, because its lowercase form is an ordinary word that can end a sentence ("said no.").
 * Words that usually end a sentence when a capital follows ("etc.", "usw.", "a.m.", "p.m.") are left out:
 * merging there would glue two real sentences. Single letters ("J.", "M.", "z.") are handled by rule.
 * The lists are unioned, not picked by locale: articles quote other languages and locale is only a hint.
 */
const ABBREVIATIONS: Record<string, string[]> = {
  en: [
    'mr.',
    'mrs.',
    'ms.',
    'dr.',
    'prof.',
    'sen.',
    'rep.',
    'gov.',
    'gen.',
    'col.',
    'lt.',
    'sgt.',
    'capt.',
    'cmdr.',
    'adm.',
    'maj.',
    'st.',
    'mt.',
    'ft.',
    'jr.',
    'sr.',
    'rev.',
    'hon.',
    'pres.',
    'No.',
    'Nos.',
    'inc.',
    'corp.',
    'co.',
    'ltd.',
    'vs.',
    'approx.',
    'dept.',
    'Fig.',
    'vol.',
    'e.g.',
    'i.e.',
    'u.s.',
    'u.k.',
    'u.n.',
    'e.u.',
    'jan.',
    'feb.',
    'Mar.',
    'apr.',
    'jun.',
    'jul.',
    'aug.',
    'sep.',
    'sept.',
    'oct.',
    'nov.',
    'dec.',
  ],
  de: [
    'hr.',
    'fr.',
    'prof.',
    'dipl.',
    'ing.',
    'nr.',
    'bzw.',
    'ca.',
    'z.b.',
    'd.h.',
    'u.a.',
    'evtl.',
    'ggf.',
    'inkl.',
    'zzgl.',
    'vgl.',
    'bspw.',
    'sog.',
    'mio.',
    'mrd.',
    'str.',
    'tel.',
    'Abs.',
    'Art.',
    'gem.',
    'ehem.',
    'geb.',
    'febr.',
    'okt.',
    'dez.',
  ],
  fr: [
    'mm.',
    'mme.',
    'mmes.',
    'mlle.',
    'mlles.',
    'Me.',
    'mgr.',
    'pr.',
    'ste.',
    'av.',
    'bd.',
    'boul.',
    'env.',
    'cf.',
    'janv.',
    'févr.',
    'avr.',
    'juil.',
    'déc.',
  ],
  es: [
    'sra.',
    'srta.',
    'sres.',
    'dña.',
    'dra.',
    'lic.',
    'avda.',
    'núm.',
    'nro.',
    'pág.',
    'ej.',
    'aprox.',
    'ee.',
    'ud.',
    'uds.',
    'cía.',
    'gral.',
    'pdte.',
    'ene.',
    'abr.',
    'dic.',
  ],
};
const ABBREVIATION = new Set(Object.values(ABBREVIATIONS).flat());

/**
 * Words after a German ordinal ("am 3. Oktober", "im 19. Jahrhundert") that ICU splits before because
 * they are capitalised. A bare number before a capital is otherwise a real sentence end ("born in 1990. He").
 */
const ORDINAL_HEAD = new Set([
  'januar',
  'jänner',
  'februar',
  'märz',
  'april',
  'mai',
  'juni',
  'juli',
  'august',
  'september',
  'oktober',
  'november',
  'dezember',
  'jahrhundert',
  'jahrhunderts',
  'mal',
  'platz',
  'runde',
  'spieltag',
  'etappe',
  'klasse',
  'liga',
  'stock',
  'weltkrieg',
  'weltkriegs',
  'geburtstag',
  'jahrestag',
  'lebensjahr',
]);

/** Japanese particles that continue a sentence after a quotation: 「はい。」と述べた。 */
const QUOTE_CONTINUATION = ['と', 'って'];

const segmenters = new Map<string, Intl.Segmenter>();
function segmenter(granularity: 'sentence' | 'word' | 'grapheme', locale: string | undefined): Intl.Segmenter {
  const key = `${granularity}|${locale ?? ''}`;
  let s = segmenters.get(key);
  if (!s) segmenters.set(key, (s = new Intl.Segmenter(locale, { granularity })));
  return s;
}

/** A sentence (or a piece of one) and whether whitespace followed it in the source. */
interface Unit {
  text: string;
  spaceAfter: boolean;
  paragraphEnd: boolean;
}
type Counted = Unit & { tokens: number };

/** items[a..b) as one text: one space where the source had whitespace between them, none where it had none. */
function joined(items: { text: string; spaceAfter: boolean }[], a: number, b: number): string {
  let t = items[a].text;
  for (let k = a + 1; k < b; k++) t += (items[k - 1].spaceAfter ? ' ' : '') + items[k].text;
  return t;
}

/** Whitespace other than single spaces: most sentences have none, and need only a trim. */
const MESSY_SPACE = /\s\s|[^\S ]/;
const collapse = (s: string) => (MESSY_SPACE.test(s) ? s.replace(/\s+/g, ' ') : s).trim();
const paragraphsOf = (text: string) => text.split(/[\n\r\f\v\u0085\u2028\u2029]+/).filter((p) => p.trim() !== '');

/** Sentences of one text (exported for tests and reuse). */
export function splitSentences(text: string, locale?: string): string[] {
  return paragraphsOf(text).flatMap((p) => sentencesOf(p, locale).map((u) => u.text));
}

/** The headline as the first chunk, then the text as sentence groups. Never returns empty strings. */
export function chunkRevision(title: string, text: string, o: ChunkOptions): string[] {
  const headline = collapse(title);
  const units: Counted[] = [];
  for (const p of paragraphsOf(text)) {
    for (const s of sentencesOf(p, o.locale)) {
      const tokens = o.countTokens(s.text);
      if (tokens <= o.maxTokens) units.push(Object.assign(s, { tokens }));
      else for (const piece of splitLong(s, tokens, o)) units.push(Object.assign(piece, { tokens: o.countTokens(piece.text) }));
    }
    // A line break separates paragraphs, so the next one follows after a space even in Japanese and Chinese.
    if (units.length > 0) Object.assign(units[units.length - 1], { paragraphEnd: true, spaceAfter: true });
  }
  const chunks = groupUnits(units, o);
  return headline === '' ? chunks : [headline, ...chunks];
}

/**
 * ICU segments of one paragraph, repaired. The repairs move text between neighbouring raw segments,
 * so the raw segments always concatenate back to the paragraph; whitespace is collapsed last.
 * Checks look at the ends of segments only: an end-anchored regex would rescan every segment.
 */
function sentencesOf(paragraph: string, locale: string | undefined): Unit[] {
  const raw = Array.from(segmenter('sentence', locale).segment(paragraph), (s) => s.segment);
  for (let i = 0; i + 1 < raw.length; i++) {
    // "本当？「うん」" comes back as "本当？「" + "うん」": an opening bracket glued to a sentence end.
    let cut = raw[i].length;
    while (cut > 0 && OPENING.test(raw[i][cut - 1])) cut--;
    if (cut < raw[i].length) {
      raw[i + 1] = raw[i].slice(cut) + raw[i + 1];
      raw[i] = raw[i].slice(0, cut);
    }
    // French spacing "« Oui. » Puis" comes back as "« Oui. " + "» Puis": a closing mark after a space.
    const closing = LEADING_CLOSING.exec(raw[i + 1]);
    if (closing) {
      raw[i] += closing[0];
      raw[i + 1] = raw[i + 1].slice(closing[0].length);
    }
  }
  const merged: string[] = [];
  for (const seg of raw) {
    const last = merged.length - 1;
    if (last >= 0 && (!NON_SPACE.test(seg) || continues(merged[last], seg))) merged[last] += seg;
    else merged.push(seg);
  }
  const units: Unit[] = [];
  for (const [i, seg] of merged.entries()) {
    const text = collapse(seg);
    // The closing-mark repair can leave the separating whitespace at the start of the next segment.
    const spaceAfter = SPACE.test(seg[seg.length - 1] ?? '') || SPACE.test(merged[i + 1]?.[0] ?? '');
    if (text !== '') units.push({ text, spaceAfter, paragraphEnd: false });
  }
  return units;
}

const SPACE = /\s/;
const NON_SPACE = /\S/;
const OPENING = /\p{Ps}/u;
const CLOSING = /[\p{Pe}\p{Pf}]/u;
const LEADING_CLOSING = /^\s*[\p{Pe}\p{Pf}]+(?=\s|$)/u;

/** Whether ICU's break between `before` and `after` falls inside a sentence. */
function continues(before: string, after: string): boolean {
  const next = after.trimStart();
  if (/^\p{Ll}/u.test(next)) return true; // "Yahoo! said", "« Non ! » a-t-il crié": never a sentence start
  const prev = before.trimEnd();
  if (QUOTE_CONTINUATION.some((p) => next.startsWith(p)) && CLOSING.test(prev[prev.length - 1] ?? '')) return true;
  // Every abbreviation, initial and ordinal ends in a period and is short; CJK sentences have no spaces to stop at.
  if (!prev.endsWith('.')) return false;
  let from = prev.length;
  while (from > 0 && from > prev.length - 24 && !SPACE.test(prev[from - 1])) from--;
  // "(Dr." and French elision "l'av." still end in the abbreviation.
  const token = prev
    .slice(from)
    .replace(/^[\p{Ps}\p{Pi}\p{Pf}"'¿¡]+/u, '')
    .replace(/^\p{L}+['’](?=\p{L})/u, '');
  if (ABBREVIATION.has(token) || ABBREVIATION.has(token.toLowerCase())) return true;
  if (/^\p{L}\.$/u.test(token)) return true; // initials "J. K. Rowling", "M. Dupont", "z. B."
  if (/^\d{1,3}\.$/.test(token)) {
    const word = /^\p{L}+/u.exec(next);
    return word !== null && ORDINAL_HEAD.has(word[0].toLowerCase());
  }
  return false;
}

/** An indivisible run of text while packing an over-long sentence: a spaced word, an ICU word, or a grapheme. */
interface Atom {
  text: string;
  spaceAfter: boolean;
  level: 0 | 1 | 2;
}

/**
 * Pieces of ≤ maxTokens of one over-long sentence: cut at spaces, or at ICU word boundaries where a run
 * without spaces (Japanese, Chinese, a long URL) is itself too long, or at graphemes as a last resort.
 * Each piece is the longest run of atoms that fits, found by exact counts: a guess from the sentence's
 * characters per token, a gallop away from the guess, then bisection (a few calls a piece, not one an atom).
 */
function splitLong(s: Unit, tokens: number, o: ChunkOptions): Unit[] {
  const words = s.text.split(' ');
  const atoms: Atom[] = words.map((w, i) => ({ text: w, spaceAfter: i < words.length - 1 || s.spaceAfter, level: 0 }));
  const join = (a: number, b: number) => joined(atoms, a, b);
  const budget = (o.maxTokens * s.text.length) / tokens;
  const pieces: Unit[] = [];
  for (let i = 0; i < atoms.length; ) {
    const fits = (k: number) => o.countTokens(join(i, i + k)) <= o.maxTokens;
    let guess = 1;
    for (let chars = atoms[i].text.length; i + guess < atoms.length; guess++) {
      chars += atoms[i + guess].text.length + 1;
      if (chars > budget) break;
    }
    let lo = 0; // fits(lo)
    let hi = atoms.length - i + 1; // !fits(hi)
    if (fits(guess)) {
      lo = guess;
      for (let step = 1; lo + step < hi; step *= 2) {
        if (!fits(lo + step)) hi = lo + step;
        else lo += step;
      }
    } else {
      hi = guess;
      for (let step = 1; hi - step > lo; step *= 2) {
        if (fits(hi - step)) lo = hi - step;
        else hi -= step;
      }
    }
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (fits(mid)) lo = mid;
      else hi = mid;
    }
    if (lo > 0) {
      pieces.push({ text: join(i, i + lo), spaceAfter: atoms[i + lo - 1].spaceAfter, paragraphEnd: false });
      i += lo;
      continue;
    }
    const finer = subdivide(atoms[i], o.locale);
    if (finer.length > 1) {
      atoms.splice(i, 1, ...finer);
    } else {
      pieces.push({ text: atoms[i].text, spaceAfter: atoms[i].spaceAfter, paragraphEnd: false });
      i++;
    }
  }
  return pieces;
}

function subdivide(atom: Atom, locale: string | undefined): Atom[] {
  if (atom.level === 2) return [atom];
  const parts: string[] = [];
  let level: 1 | 2 = 2;
  if (atom.level === 0) {
    // Punctuation stays with its word: a closing mark with the word before, an opening mark with the word after.
    let pendingOpen = '';
    for (const { segment, isWordLike } of segmenter('word', locale).segment(atom.text)) {
      if (!isWordLike && /^[\p{Ps}\p{Pi}]+$/u.test(segment)) pendingOpen += segment;
      else if (!isWordLike && parts.length > 0 && pendingOpen === '') parts[parts.length - 1] += segment;
      else {
        parts.push(pendingOpen + segment);
        pendingOpen = '';
      }
    }
    if (pendingOpen !== '') parts.push(pendingOpen);
    if (parts.length > 1) level = 1;
  }
  if (level === 2) {
    parts.length = 0;
    for (const { segment } of segmenter('grapheme', locale).segment(atom.text)) parts.push(segment);
  }
  return parts.map((text, k) => ({ text, spaceAfter: k === parts.length - 1 && atom.spaceAfter, level }));
}

/**
 * Greedy grouping: a group takes sentences while it stays ≤ maxTokens and closes at a paragraph break once it
 * has minTokens. A group under minTokens then joins a neighbour when the two fit in maxTokens. Sums of
 * sentence counts steer the greedy pass; every group's size is exact before it is kept: the sum where the
 * tokenizer is additive at spaces and the sentences join at spaces, else a count of the group's text
 * (no tokenizer need be additive where sentences join without a space, as in Japanese).
 */
function groupUnits(units: Counted[], o: ChunkOptions): string[] {
  const n = units.length;
  const counts = units.map((u) => u.tokens);
  const join = (a: number, b: number) => joined(units, a, b);
  // Exact without counting when every join in a..b is a space and counts add there.
  const spaced = (a: number, b: number) => {
    for (let k = a; k < b - 1; k++) if (!units[k].spaceAfter) return false;
    return true;
  };
  const count = (a: number, b: number, sum: number) => (o.additiveAtSpaces && spaced(a, b) ? sum : o.countTokens(join(a, b)));
  const groups: { a: number; b: number; tokens: number }[] = [];
  for (let a = 0; a < n; ) {
    let sum = counts[a];
    let b = a + 1;
    while (b < n && !(units[b - 1].paragraphEnd && sum >= o.minTokens) && sum + counts[b] <= o.maxTokens) sum += counts[b++];
    let tokens = count(a, b, sum);
    while (tokens > o.maxTokens && b - a > 1) {
      b--;
      sum -= counts[b];
      tokens = count(a, b, sum);
    }
    groups.push({ a, b, tokens });
    a = b;
  }
  const kept: typeof groups = [];
  for (const g of groups) {
    const last = kept[kept.length - 1];
    if (last && (g.tokens < o.minTokens || last.tokens < o.minTokens)) {
      const tokens = count(last.a, g.b, last.tokens + g.tokens);
      if (tokens <= o.maxTokens) {
        last.b = g.b;
        last.tokens = tokens;
        continue;
      }
    }
    kept.push({ ...g });
  }
  return kept.map((g) => join(g.a, g.b));
}
