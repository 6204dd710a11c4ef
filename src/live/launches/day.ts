/**
 * The launch site's calendar: a day starts at midnight in America/Los_Angeles (its launches
 * go live then), so "today" is the Pacific date, not the UTC one.
 */

const PACIFIC = new Intl.DateTimeFormat('en-US', { timeZone: 'America/Los_Angeles', year: 'numeric', month: '2-digit', day: '2-digit' });

/** The Pacific calendar day of an instant, as YYYY-MM-DD (DST-correct: the zone data decides the offset). */
export function pacificDay(now: Date): string {
  const parts = Object.fromEntries(PACIFIC.formatToParts(now).map((p) => [p.type, p.value]));
  return `${parts.year}-${parts.month}-${parts.day}`;
}

/** The daily leaderboard's path: "2026-07-01" → "/leaderboard/daily/2026/7/1" (the site does not zero-pad). */
export function leaderboardPath(day: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) throw new RangeError(`not a YYYY-MM-DD day: ${day}`);
  return `/leaderboard/daily/${Number(m[1])}/${Number(m[2])}/${Number(m[3])}`;
}
