/**
 * What the usage page and its CSV show, computed from the account's ledger (the same entries
 * `newsmatch usage` prints): billed requests and credits spent per product per UTC day, and the
 * ledger as CSV.
 *
 * Requests count as the plan's `used` does (ledger.ts, `applyEntry`): a debit adds its units
 * (1 unless it says), a refund takes them back; credits spent are the debits' credits less
 * what refunds returned.
 */
import { isoSeconds, type LedgerEntry, type Product } from '../platform/index.js';

export interface DayCell {
  requests: number;
  credits: number;
}

export interface DailyUsage {
  /** The UTC days, oldest first: `YYYY-MM-DD`. */
  days: string[];
  /** Products with any use in the window, in name order. */
  products: Product[];
  /** By day, then by product. */
  cells: Map<string, Map<Product, DayCell>>;
}

const DAY_MS = 86_400_000;
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The first instant of the window of `days` UTC days that ends with the day of `now`. */
export const windowStart = (now: number, days: number): number => Math.floor(now / DAY_MS) * DAY_MS - (days - 1) * DAY_MS;

/** Requests and credits per product per UTC day over the `days` days ending today, from `entries`. */
export function dailyUsage(entries: Iterable<LedgerEntry>, now: number, days = 30): DailyUsage {
  const start = windowStart(now, days);
  const dayList = Array.from({ length: days }, (_, i) => utcDay(start + i * DAY_MS));
  const cells = new Map<string, Map<Product, DayCell>>(dayList.map((d) => [d, new Map()]));
  const products = new Set<Product>();
  for (const e of entries) {
    if ((e.kind !== 'debit' && e.kind !== 'refund') || e.product === undefined || e.at < start) continue;
    const row = cells.get(utcDay(e.at));
    if (!row) continue;
    let cell = row.get(e.product);
    if (!cell) row.set(e.product, (cell = { requests: 0, credits: 0 }));
    const n = e.units === undefined ? 1 : Math.abs(e.units);
    cell.requests += e.kind === 'debit' ? n : -n;
    cell.credits -= e.credits;
    products.add(e.product);
  }
  return { days: dayList, products: [...products].sort(), cells };
}

/** Totals of a product (or of all, `undefined`) over the window. */
export function totals(u: DailyUsage, product?: Product): DayCell {
  const t = { requests: 0, credits: 0 };
  for (const row of u.cells.values()) {
    for (const [p, c] of row) {
      if (product !== undefined && p !== product) continue;
      t.requests += c.requests;
      t.credits += c.credits;
    }
  }
  return t;
}

export const CSV_HEADER = [
  'seq',
  'time',
  'kind',
  'credits',
  'balance',
  'product',
  'plan',
  'request_id',
  'key_id',
  'units',
  'overage_usd',
  'refund_of',
  'refunded_by',
  'note',
];

/**
 * A CSV field: quoted when it holds a comma, quote or line break; text a spreadsheet would run
 * as a formula (`=`, `+`, `-`, `@`, tab, CR first) is given a leading `'`. Numbers are written as numbers.
 */
function field(v: string | number | undefined): string {
  if (v === undefined) return '';
  if (typeof v === 'number') return String(v);
  const text = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The ledger as CSV (RFC 4180, CRLF line ends), oldest first, a header line first. */
export function ledgerCsv(entries: Iterable<LedgerEntry>): string {
  const lines = [CSV_HEADER.join(',')];
  for (const e of entries) {
    lines.push(
      [
        e.seq,
        isoSeconds(e.at),
        e.kind,
        e.credits,
        e.balance,
        e.product,
        e.plan,
        e.requestId,
        e.keyId,
        e.units,
        e.overageMicros === undefined ? undefined : e.overageMicros / 1e6,
        e.refundOf,
        e.refundedBy,
        e.note,
      ]
        .map(field)
        .join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}
