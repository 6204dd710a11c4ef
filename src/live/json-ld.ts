/**
 * schema.org JSON-LD as the live parsers read it: the page's blocks flattened to their object
 * nodes, and small readers that take a loosely typed value and give a typed one or null
 * (pages put strings where numbers belong, arrays where one value does, and so on).
 */

export type Json = Record<string, unknown>;

/** Deep enough for any real page (they nest 3 levels); a bound on the recursion for hostile ones. */
const MAX_DEPTH = 8;

/** The parsed value of every `script[type="application/ld+json"]` block, in page order. */
export function ldBlocks(doc: Document): unknown[] {
  const out: unknown[] = [];
  for (const s of doc.querySelectorAll('script[type="application/ld+json"]')) {
    try {
      out.push(JSON.parse(s.textContent ?? ''));
    } catch {
      // A broken block is skipped (sites ship trailing commas and raw newlines): the markup still stands.
    }
  }
  return out;
}

/** The object nodes of one JSON-LD value: itself, or its items if an array, each followed by the nodes of its `@graph`. */
export function ldNodes(v: unknown, depth = 0): Json[] {
  if (depth > MAX_DEPTH) return [];
  if (Array.isArray(v)) return v.flatMap((x) => ldNodes(x, depth + 1));
  if (!isObj(v)) return [];
  return v['@graph'] === undefined ? [v] : [v, ...ldNodes(v['@graph'], depth + 1)];
}

/** Every object node of every JSON-LD block on the page, arrays and `@graph`s flattened, in page order. */
export function jsonLd(doc: Document): Json[] {
  return ldBlocks(doc).flatMap((b) => ldNodes(b));
}

/** A node's types, prefixes dropped: "https://schema.org/NewsArticle" → "NewsArticle". */
export function ldTypes(o: Json): string[] {
  const t = o['@type'];
  return (Array.isArray(t) ? t : [t]).filter((x): x is string => typeof x === 'string').map((x) => x.replace(/^.*[/:]/, ''));
}

export function hasType(o: Json, type: string): boolean {
  return ldTypes(o).includes(type);
}

export function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function obj(v: unknown): Json | undefined {
  return isObj(v) ? v : undefined;
}

/** The objects of a one-or-many value. */
export function list(v: unknown): Json[] {
  return (Array.isArray(v) ? v : [v]).filter(isObj);
}

/** A string, trimmed; null for anything else or a blank one. */
export function str(v: unknown): string | null {
  return typeof v === 'string' && v.trim() ? v.trim() : null;
}

/** `str` for a field schema.org lets be one or many (`sameAs`, `articleSection`): the first non-blank string. */
export function first(v: unknown): string | null {
  if (!Array.isArray(v)) return str(v);
  for (const x of v) {
    const s = first(x);
    if (s) return s;
  }
  return null;
}

/** A string with its whitespace collapsed; null for anything else or a blank one. */
export function clean(v: unknown): string | null {
  const c = typeof v === 'string' ? v.replace(/\s+/g, ' ').trim() : '';
  return c ? c : null;
}

/** A number, or a string that is one ("4.5"); null otherwise. */
export function num(v: unknown): number | null {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() ? Number(v.trim()) : NaN;
  return Number.isFinite(n) ? n : null;
}
