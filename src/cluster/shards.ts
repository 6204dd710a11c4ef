/**
 * Shards (README, "Cluster mode"): a shard is a month, the month of an article's first
 * publication (UTC, `2026-11`), and holds every revision of its articles. A node serves `all`
 * or ranges of months (CLUSTER_SHARDS); the nodes serving the same ranges are one group, whose
 * members are replicas of each other (groups may overlap: router.ts). A node holds every revision's
 * text and metadata, but only its shards' chunk vectors: what sharding divides is the vectors,
 * and only a vector query needs the other groups.
 */
import { createHash } from 'node:crypto';

/** Months as numbers: year * 12 + month index. */
type Month = number;

export interface ShardSet {
  /** The setting as written, canonical: `all`, or ranges `2025-01..2025-06,2026-01..` sorted. */
  spec: string;
  /** Null: every shard. */
  ranges: [Month, Month][] | null;
}

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;
const monthOf = (s: string): Month | null => {
  const m = MONTH.exec(s);
  return m ? Number(m[1]) * 12 + Number(m[2]) - 1 : null;
};
const nameOf = (m: Month): string => `${Math.floor(m / 12)}-${String((m % 12) + 1).padStart(2, '0')}`;

/** Parses CLUSTER_SHARDS: `all`, or comma-separated months and ranges (`2025-01..2025-06`, `..2024-12`, `2026-01..`). Throws with what is wrong. */
export function parseShards(raw: string): ShardSet {
  const s = raw.trim();
  if (s === '' || s === 'all') return { spec: 'all', ranges: null };
  const ranges: [Month, Month][] = [];
  for (const part of s.split(',').map((x) => x.trim())) {
    const [lo, hi] = part.includes('..') ? part.split('..') : [part, part];
    const a = lo === '' ? Number.NEGATIVE_INFINITY : monthOf(lo);
    const b = hi === '' ? Number.POSITIVE_INFINITY : monthOf(hi);
    if (a === null || b === null || a > b || (lo === '' && hi === '')) {
      throw new Error(`"${part}" is not a month (2026-01) or a range of months (2025-01..2025-06, ..2024-12, 2026-01..)`);
    }
    ranges.push([a, b]);
  }
  ranges.sort((x, y) => x[0] - y[0]);
  const merged: [Month, Month][] = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  const text = (r: [Month, Month]) =>
    r[0] === r[1] ? nameOf(r[0]) : `${Number.isFinite(r[0]) ? nameOf(r[0]) : ''}..${Number.isFinite(r[1]) ? nameOf(r[1]) : ''}`;
  return { spec: merged.map(text).join(','), ranges: merged };
}

/** Whether `set` serves the shard named `shard` (`2026-11`). */
export function serves(set: ShardSet, shard: string): boolean {
  if (!set.ranges) return true;
  const m = monthOf(shard);
  return m !== null && set.ranges.some(([a, b]) => a <= m && m <= b);
}

/** The group of the nodes serving `set`: its queue group and subject token. */
export const groupOf = (set: ShardSet): string => (set.ranges ? `g${createHash('sha256').update(set.spec).digest('hex').slice(0, 12)}` : 'all');

/**
 * The shards among `known` that a query's window can find rows in: first revisions only, the
 * months overlapping [since, until]; with edits, every month up to `until` (an edit is stored
 * in its article's shard, however late). Unix seconds; undefined: open.
 */
export function touched(known: Iterable<string>, since: number | undefined, until: number | undefined, includeEdits: boolean): string[] {
  const toMonth = (sec: number) => {
    const d = new Date(sec * 1000);
    return d.getUTCFullYear() * 12 + d.getUTCMonth();
  };
  const lo = since === undefined || includeEdits ? Number.NEGATIVE_INFINITY : toMonth(since);
  const hi = until === undefined ? Number.POSITIVE_INFINITY : toMonth(until);
  const out: string[] = [];
  for (const k of known) {
    const m = monthOf(k);
    if (m !== null && lo <= m && m <= hi) out.push(k);
  }
  return out.sort();
}
