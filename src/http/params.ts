/**
 * What a route's schema checks but cannot type: comma-separated lists and time ranges, read
 * into the values the core takes (400 bad_request naming the parameter), and the defaults of
 * a JSON body (bodies are validated as sent, without Ajv filling them in: validation.ts).
 */
import { AppError } from '../errors.js';
import { parseTime } from '../time.js';

const bad = (message: string) => new AppError('bad_parameter', message);

/** A comma-separated list: names trimmed, empty entries refused, at most `max`, repeats dropped. */
export function csv(name: string, value: string | undefined, max = 50): string[] | undefined {
  if (value === undefined) return undefined;
  const items = value.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw bad(`${name}: an empty name in the comma-separated list`);
  if (items.length > max) throw bad(`${name}: at most ${max} names`);
  return [...new Set(items)];
}

/**
 * `since` / `until`: RFC 3339 date-times (or a bare YYYY-MM-DD, midnight UTC) as Unix seconds;
 * `since` rounds up, `until` down. `since` after `until` is refused.
 */
export function timeRange(since: string | undefined, until: string | undefined): { since: number | undefined; until: number | undefined } {
  const read = (name: string, v: string | undefined, round: 'up' | 'down') => {
    if (v === undefined) return undefined;
    const ok = /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2}))?$/.test(v);
    const t = ok ? parseTime(v.length === 10 ? `${v}T00:00:00Z` : v, round) : NaN;
    if (Number.isNaN(t)) throw bad(`${name}: not an RFC 3339 date-time (e.g. 2026-05-01T00:00:00Z), got ${JSON.stringify(v)}`);
    return t;
  };
  const s = read('since', since, 'up');
  const u = read('until', until, 'down');
  if (s !== undefined && u !== undefined && s > u) throw bad('since is after until');
  return { since: s, until: u };
}

/** A checked JSON body with the `default`s its schema declares for unsent top-level fields. */
export function withDefaults<T extends object>(schema: { properties: Record<string, object> }, body: T): T {
  const out: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const [name, p] of Object.entries(schema.properties)) {
    const given = (p as { default?: unknown }).default;
    if (out[name] === undefined && given !== undefined) out[name] = given;
  }
  return out as T;
}
