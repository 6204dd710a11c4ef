/**
 * What a route's schema checks but cannot type: comma-separated lists and time ranges, read
 * into the values the core takes (400 bad_request naming the parameter), and the defaults of
 * a JSON body (bodies are validated as sent, without Ajv filling them in: validation.ts).
 */
import { AppError } from '../errors.js';
import { readTimeRange } from '../time.js';

const bad = (message: string) => new AppError('bad_parameter', message);

/** A comma-separated list: names trimmed, empty entries refused, at most `max`, repeats dropped. */
export function csv(name: string, value: string | undefined, max = 50): string[] | undefined {
  if (value === undefined) return undefined;
  const items = value.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw bad(`${name}: an empty name in the comma-separated list`);
  if (items.length > max) throw bad(`${name}: at most ${max} names`);
  return [...new Set(items)];
}

/** `since` / `until` as every endpoint reads them (time.ts `readTimeRange`), refused as 400 bad_request. */
export function timeRange(since: string | undefined, until: string | undefined): { since: number | undefined; until: number | undefined } {
  return readTimeRange(since, until, bad);
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
