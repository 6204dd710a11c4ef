/**
 * The playground's pure helpers: no DOM, so the tests run them in Node as well as the page in
 * the browser (test/playground.test.ts).
 */

/** A piece of a highlight: plain text, marked or not. */
export interface Segment {
  text: string;
  mark: boolean;
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Decodes the entities an escaper writes (`&amp;`, `&lt;`, `&#39;`, `&#x27;`…); anything else stays as written. */
export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] !== '#') return NAMED[name.toLowerCase()] ?? whole;
    const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
    return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : whole;
  });
}

/**
 * A `/v1/news` highlight ("… the port <mark>strike</mark> …", the rest HTML-escaped, README
 * "Keyword search") as text segments. Only `<mark>` and `</mark>` are read as markup; every
 * other character becomes text (shown with `textContent`), so a tag that slipped through
 * unescaped is displayed, never parsed.
 */
export function highlightSegments(html: string): Segment[] {
  const out: Segment[] = [];
  let mark = false;
  for (const part of html.split(/(<\/?mark>)/i)) {
    const tag = part.toLowerCase();
    if (tag === '<mark>' || tag === '</mark>') {
      mark = tag === '<mark>';
      continue;
    }
    if (part !== '') out.push({ text: decodeEntities(part), mark });
  }
  return out;
}

/** Matches per UTC day, oldest first: `{ day: '2026-05-01', count }`. */
export interface DayCount {
  day: string;
  count: number;
}

const DAY_MS = 86_400_000;
/** Past this many days the empty days are left out, so the chart stays a few hundred bars at most. */
const MAX_FILLED_DAYS = 366;

/**
 * Counts rows per UTC day of their `event_time` (RFC 3339, as the API writes it). Days
 * between the first and the last with no row are filled with zeros when the span is at most
 * a year; rows with an unreadable time are skipped.
 */
export function countByDay(rows: { event_time: string }[]): DayCount[] {
  const counts = new Map<number, number>();
  for (const r of rows) {
    const t = Date.parse(r.event_time);
    if (!Number.isFinite(t)) continue;
    const day = Math.floor(t / DAY_MS);
    counts.set(day, (counts.get(day) ?? 0) + 1);
  }
  if (counts.size === 0) return [];
  const days = [...counts.keys()].sort((a, b) => a - b);
  const first = days[0];
  const last = days[days.length - 1];
  const span = last - first + 1;
  const wanted = span <= MAX_FILLED_DAYS ? Array.from({ length: span }, (_, i) => first + i) : days;
  return wanted.map((d) => ({ day: new Date(d * DAY_MS).toISOString().slice(0, 10), count: counts.get(d) ?? 0 }));
}

/**
 * A vector typed or pasted: a JSON array or numbers separated by commas or white space.
 * Returns the numbers, or a message saying what is wrong (the API checks the length and
 * answers 422 otherwise; checking here too would only duplicate its rule).
 */
export function parseVector(text: string): number[] | string {
  const t = text.trim();
  if (t === '') return 'the vector is empty';
  const body = t.startsWith('[') && t.endsWith(']') ? t.slice(1, -1) : t;
  const parts = body.split(/[\s,]+/).filter((p) => p !== '');
  const nums = parts.map(Number);
  const bad = parts.findIndex((p, i) => !Number.isFinite(nums[i]) || p.trim() === '');
  if (bad >= 0) return `element ${bad + 1} of the vector is not a number: ${JSON.stringify(parts[bad].slice(0, 40))}`;
  return nums;
}

/**
 * A `datetime-local` value ("2026-05-01T08:00" or with seconds), read as UTC, in the API's
 * RFC 3339 form; '' stays undefined (no bound).
 */
export function utcTime(local: string): string | undefined {
  if (local === '') return undefined;
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(local) ? `${local}:00Z` : `${local}Z`;
}

/** Whether a URL may be a link's target: http or https only (a `javascript:` URL would run). */
export function safeHref(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
