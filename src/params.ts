/**
 * Readers of the platform's GET query parameters (news, jobs, market, taxonomies). Every
 * value arrives as a string; a bad one is 400 `bad_request` naming the parameter.
 */
import { AppError } from './errors.js';
import { parseTime } from './time.js';

const bad = (message: string) => new AppError('bad_parameter', message);

/** A comma-separated list: names trimmed, empty entries refused, at most `max`. */
export function csv(name: string, value: string | undefined, max = 50): string[] | undefined {
  if (value === undefined) return undefined;
  const items = value.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw bad(`${name}: an empty name in the comma-separated list`);
  if (items.length > max) throw bad(`${name}: at most ${max} names`);
  return [...new Set(items)];
}

export function bool(name: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw bad(`${name}: must be true or false, got ${JSON.stringify(value)}`);
}

export function int(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d{1,16}$/.test(value) || Number(value) < min || Number(value) > max) throw bad(`${name}: an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return Number(value);
}

export function num(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw bad(`${name}: a number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
}

export function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw bad(`${name}: one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  return value as T;
}

/** `since` / `until`: RFC 3339 date-times (or a bare YYYY-MM-DD, midnight UTC) as Unix seconds; `since` rounds up. */
export function timeRange(since: string | undefined, until: string | undefined): { since?: number; until?: number } {
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

/** Required string parameter, at most `max` characters. */
export function text(name: string, value: string | undefined, max: number, required: true): string;
export function text(name: string, value: string | undefined, max: number, required?: false): string | undefined;
export function text(name: string, value: string | undefined, max: number, required = false): string | undefined {
  if (value === undefined) {
    if (required) throw bad(`${name} is required`);
    return undefined;
  }
  if (value.length > max) throw bad(`${name}: at most ${max} characters`);
  return value;
}
