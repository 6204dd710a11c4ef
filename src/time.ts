/** Times are whole Unix seconds inside the service and `YYYY-MM-DDTHH:MM:SSZ` on the wire. */

/** Unix seconds of an RFC 3339 date-time (any offset), truncated to the second. NaN if unparseable. */
export function parseTime(s: string): number {
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? NaN : Math.floor(ms / 1000);
}

export function formatTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
