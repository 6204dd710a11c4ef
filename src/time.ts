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
