/** Times are whole Unix seconds inside the service and `YYYY-MM-DDTHH:MM:SSZ` on the wire. */

/**
 * Unix seconds of an RFC 3339 date-time (any offset). Stored times are whole seconds, so a
 * fractional time rounds down by default, and up for an inclusive lower bound (`since` at
 * 09:00:42.5 must not admit a row at 09:00:42). NaN if unparseable.
 */
export function parseTime(s: string, round: 'down' | 'up' = 'down'): number {
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) return NaN;
  return round === 'up' ? Math.ceil(ms / 1000) : Math.floor(ms / 1000);
}

/**
 * A `since` / `until` pair as every endpoint reads it (README, "Query"): RFC 3339 date-times
 * with an offset, or a bare YYYY-MM-DD meaning that whole UTC day, as Unix seconds;
 * `since` rounds up, `until` down. A value of another form, or `since` after `until`, is
 * `error`'s to throw (each endpoint family has its own code).
 */
export function readTimeRange(
  since: string | undefined,
  until: string | undefined,
  error: (message: string) => Error,
): { since: number | undefined; until: number | undefined } {
  const read = (name: string, v: string | undefined, round: 'up' | 'down') => {
    if (v === undefined) return undefined;
    const ok = /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2}))?$/.test(v);
    const t = ok ? parseTime(v.length === 10 ? `${v}T00:00:00Z` : v, round) : NaN;
    if (Number.isNaN(t)) throw error(`${name}: an RFC 3339 date-time (2026-05-01T00:00:00Z) or a date (2026-05-01, a whole UTC day), got ${JSON.stringify(v)}`);
    // A date is a whole UTC day: since from its first second, until through its last.
    return v.length === 10 && name === 'until' ? t + 86_399 : t;
  };
  const s = read('since', since, 'up');
  const u = read('until', until, 'down');
  if (s !== undefined && u !== undefined && s > u) throw error('since is after until');
  return { since: s, until: u };
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** 0-11 for an English month name or its abbreviation ("Sept.", "sep", "September"), by its first three letters; -1 otherwise. */
export function monthIndex(name: string): number {
  return MONTHS.indexOf(name.slice(0, 3).toLowerCase());
}

export function formatTime(seconds: number): string {
  const iso = new Date(seconds * 1000).toISOString();
  // `YYYY-MM-DDTHH:MM:SS.sssZ`: drop the milliseconds (whole seconds); years past 9999 are longer.
  return iso.length === 24 ? `${iso.slice(0, 19)}Z` : iso.replace(/\.\d{3}Z$/, 'Z');
}
