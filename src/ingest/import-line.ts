/**
 * One line of an import file, validated into a RevisionInput or a reason to reject it.
 *
 * Example line (vectors shortened):
 *   {"url":"https://ledger.example/a1","source":"Daily Ledger","source_homepage":"https://ledger.example",
 *    "title":"Port strike ends","snippet":"Dock workers return…","text":"…","published_at":"2026-05-01T08:00:00Z",
 *    "chunks":[{"text":"Port strike ends","vector":[0.01,…]},{"text":"Dock workers…","vector_b64":"AACAPw…"}]}
 */
import { DIMS } from '../dims.js';
import { canonicalUrl, type RevisionInput } from '../store/index.js';
import { decodeVectorB64, normalise } from '../search/index.js';
import { parseTime } from '../time.js';

const FIELDS = new Set(['url', 'source', 'source_homepage', 'title', 'snippet', 'text', 'published_at', 'revised_at', 'chunks']);
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export type ParsedLine = { ok: true; input: RevisionInput } | { ok: false; reason: string };

const fail = (reason: string): ParsedLine => ({ ok: false, reason });

export function parseImportLine(line: string): ParsedLine {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (e) {
    return fail(`invalid JSON (${(e as Error).message})`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return fail('not a JSON object');
  const o = raw as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => !FIELDS.has(k));
  if (unknown.length > 0) return fail(`unknown field ${unknown.map((k) => `"${k}"`).join(', ')}`);

  if (typeof o.url !== 'string') return fail('url: required string');
  const url = canonicalUrl(o.url);
  if (!url) return fail('url: not an absolute http(s) URL');
  if (typeof o.source !== 'string' || o.source.trim() === '') return fail('source: required non-empty string');
  if (o.source.length > 200) return fail('source: longer than 200 characters');
  let sourceHomepage: string | undefined;
  if (o.source_homepage !== undefined) {
    if (typeof o.source_homepage !== 'string' || !canonicalUrl(o.source_homepage)) return fail('source_homepage: not an absolute http(s) URL');
    sourceHomepage = o.source_homepage;
  }
  if (typeof o.title !== 'string' || o.title.trim() === '') return fail('title: required non-empty string');
  if (typeof o.snippet !== 'string') return fail('snippet: required string');
  if (o.text !== undefined && typeof o.text !== 'string') return fail('text: must be a string');
  const publishedAt = time(o.published_at);
  if (publishedAt === undefined) return fail('published_at: required RFC 3339 date-time');
  let revisedAt: number | undefined;
  if (o.revised_at !== undefined) {
    revisedAt = time(o.revised_at);
    if (revisedAt === undefined) return fail('revised_at: not an RFC 3339 date-time');
  }
  // No chunks: the service chunks and embeds the revision (text mode), or stores it to embed later.
  if (o.chunks !== undefined && !Array.isArray(o.chunks)) return fail('chunks: must be an array');

  const chunks: RevisionInput['chunks'] = [];
  for (const [i, c] of (o.chunks ?? []).entries()) {
    const at = `chunks[${i}]`;
    if (typeof c !== 'object' || c === null || Array.isArray(c)) return fail(`${at}: not an object`);
    const extra = Object.keys(c).filter((k) => k !== 'text' && k !== 'vector' && k !== 'vector_b64');
    if (extra.length > 0) return fail(`${at}: unknown field "${extra[0]}"`);
    if (typeof c.text !== 'string' || c.text.trim() === '') return fail(`${at}.text: required non-empty string`);
    if ((c.vector === undefined) === (c.vector_b64 === undefined)) return fail(`${at}: give exactly one of vector, vector_b64`);
    let values: ArrayLike<number>;
    if (c.vector !== undefined) {
      if (!Array.isArray(c.vector) || c.vector.length !== DIMS || !allNumbers(c.vector)) {
        return fail(`${at}.vector: must be ${DIMS} numbers`);
      }
      values = c.vector;
    } else {
      const decoded = typeof c.vector_b64 === 'string' ? decodeVectorB64(c.vector_b64) : null;
      if (!decoded) return fail(`${at}.vector_b64: must be base64 of ${DIMS} little-endian float32`);
      values = decoded;
    }
    const vector = normalise(values);
    if (!vector) return fail(`${at}: vector is zero or has a non-finite component`);
    chunks.push({ text: c.text, vector });
  }
  return {
    ok: true,
    input: { url, source: o.source, sourceHomepage, title: o.title, body: o.snippet, text: o.text ?? '', publishedAt, revisedAt, chunks },
  };
}

function time(v: unknown): number | undefined {
  if (typeof v !== 'string' || !RFC3339.test(v)) return undefined;
  const t = parseTime(v);
  return Number.isNaN(t) ? undefined : t;
}

function allNumbers(a: unknown[]): boolean {
  for (let i = 0; i < a.length; i++) if (typeof a[i] !== 'number') return false;
  return true;
}
