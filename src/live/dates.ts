/**
 * Dates as public pages show them ("3 hours ago", "Posted 2 days ago", "vor 2 Tagen",
 * "Feb 20, 2026", "20.02.2026"), resolved to ISO 8601 against the time the page was read. Relative times are
 * as precise as their unit: "2 days ago" is the fetch time minus 48 hours.
 */
import { monthIndex } from '../time.js';

const UNIT_MS: Record<string, number> = {
  s: 1_000,
  sec: 1_000,
  second: 1_000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hour: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  w: 7 * 86_400_000,
  wk: 7 * 86_400_000,
  week: 7 * 86_400_000,
  mo: 30 * 86_400_000,
  month: 30 * 86_400_000,
  y: 365 * 86_400_000,
  yr: 365 * 86_400_000,
  year: 365 * 86_400_000,
};

/** German UI ("vor 2 Tagen"), as the German pages of the search engines write it. */
const GERMAN: Record<string, number> = {
  sekunde: 1_000,
  minute: 60_000,
  stunde: 3_600_000,
  tag: 86_400_000,
  woche: 7 * 86_400_000,
  monat: 30 * 86_400_000,
  jahr: 365 * 86_400_000,
};
const RELATIVE_DE = /\bvor (\d+|einer?m?) (Sekunden?|Minuten?|Stunden?|Tag(?:en)?|Wochen?|Monat(?:en)?|Jahr(?:en)?)\b/i;

const RELATIVE = /(\d+)\+?\s*(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|wks?|w|months?|mo|years?|yrs?|y)\b\.?\s*ago/i;

/** The ISO instant a shown date stands for, or null when the text holds none it can read. */
export function shownDate(text: string | null | undefined, fetchedAt: Date): string | null {
  if (!text) return null;
  const t = text.replace(/\s+/g, ' ').trim();
  const now = fetchedAt.getTime();
  if (/\b(just now|moments? ago|today)\b/i.test(t)) return new Date(now).toISOString();
  if (/\byesterday\b/i.test(t)) return new Date(now - UNIT_MS.day).toISOString();
  const rel = RELATIVE.exec(t);
  if (rel) {
    const unit = rel[2].toLowerCase().replace(/s$/, '');
    const ms = UNIT_MS[unit] ?? UNIT_MS[rel[2].toLowerCase()];
    if (ms !== undefined) return new Date(now - Number(rel[1]) * ms).toISOString();
  }
  const de = RELATIVE_DE.exec(t);
  if (de) {
    const n = /^\d+$/.test(de[1]) ? Number(de[1]) : 1;
    const unit = de[2].toLowerCase();
    const ms = Object.entries(GERMAN).find(([k]) => unit.startsWith(k.slice(0, 3)))?.[1];
    if (ms !== undefined) return new Date(now - n * ms).toISOString();
  }
  return absoluteDate(t);
}

/**
 * The ISO instant of a machine-readable timestamp (JSON-LD `datePublished`, `<time datetime>`,
 * `article:published_time`), or null. A date-time without a zone is read as UTC, not as the
 * server's local time: AP's "2024-09-03T04:03:19" is its JSON-LD "2024-09-03T04:03:19Z".
 */
export function isoInstant(v: string | null | undefined): string | null {
  const t = v?.trim();
  if (!t) return null;
  const d = new Date(/^\d{4}-\d{2}-\d{2}T[\d:.]+$/.test(t) ? `${t}Z` : t);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** The calendar day ("2026-07-08") a shown absolute date names ("July 8, 2026", "8 July 2026", "Sept. 3, 2024"), or null. */
export function shownDay(text: string | null | undefined): string | null {
  if (!text) return null;
  return absoluteDate(text.replace(/\s+/g, ' ').trim())?.slice(0, 10) ?? null;
}

/** "2026-02-20", "Feb 20, 2026", "20 Feb 2026", "20.02.2026" (day first), as midnight UTC. */
function absoluteDate(t: string): string | null {
  let m = /\b(\d{4})-(\d{2})-(\d{2})(T[\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?/.exec(t);
  if (m) {
    const d = new Date(m[4] ? m[0] : `${m[1]}-${m[2]}-${m[3]}T00:00:00Z`);
    return Number.isNaN(d.getTime()) ? null : d.toISOString();
  }
  m = /\b([A-Za-z]{3})[a-z]*\.? (\d{1,2}),? (\d{4})\b/.exec(t);
  if (m) return ymd(Number(m[3]), monthIndex(m[1]), Number(m[2]));
  m = /\b(\d{1,2}) ([A-Za-z]{3})[a-z]*\.?,? (\d{4})\b/.exec(t);
  if (m) return ymd(Number(m[3]), monthIndex(m[2]), Number(m[1]));
  m = /\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b/.exec(t);
  if (m) return ymd(Number(m[3]), Number(m[2]) - 1, Number(m[1]));
  return null;
}

function ymd(year: number, month: number, day: number): string | null {
  if (month < 0 || month > 11 || day < 1 || day > 31) return null;
  const d = new Date(Date.UTC(year, month, day));
  return d.getUTCDate() === day ? d.toISOString() : null;
}

/**
 * A numeric date ("5/03/2020"), as pages show one where they show no relative time, in the
 * page language's order, as midnight UTC: month first for US English (`en`, `en-US`), day
 * first for every other language (en-NZ, en-GB, de…). The 2021 en-NZ news capture proves the
 * day-first reading: its search asked for 1–5 March 2020 (`tbs=cdr:1,cd_min:3/1/2020,
 * cd_max:3/5/2020`) and its cards show 3/03/2020 to 5/03/2020.
 */
export function numericDate(text: string | null, lang: string | null): string | null {
  const m = text ? /\b(\d{1,2})\/(\d{1,2})\/(\d{4})\b/.exec(text) : null;
  if (!m) return null;
  const monthFirst = /^en(?:-us)?$/i.test(lang?.trim() ?? '');
  const [day, month] = monthFirst ? [Number(m[2]), Number(m[1])] : [Number(m[1]), Number(m[2])];
  const d = new Date(Date.UTC(Number(m[3]), month - 1, day));
  return month >= 1 && month <= 12 && d.getUTCDate() === day && d.getUTCMonth() === month - 1 ? d.toISOString() : null;
}
