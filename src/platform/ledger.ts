/**
 * The ledger's arithmetic, pure: an account's state (its credit lots, its calls this period) is
 * what its ledger entries add up to, and `applyEntry` is the one function that adds one. The
 * request path, the background fold and a process reading the store after a crash all compute
 * a state with it, so they cannot disagree.
 *
 * A debit of 1 credit from lot 7, billed to the period that started at 2026-05-01T00:00Z:
 *
 *   { seq: 42, at: 1746100000000, kind: 'debit', credits: -1, balance: 249, product: 'news',
 *     plan: 'free', lots: [[7, 1]], period: 1746057600000, requestId: 'req-1', keyId: 'key_…' }
 */
import type { Plan, Product } from './products.js';

export type LotKind = 'subscription' | 'free' | 'purchased';
export interface Lot {
  /** The seq of the grant or purchase that added it (never reused, unlike a count of lots). */
  id: number;
  kind: LotKind;
  credits: number;
  granted: number;
  /** Unix ms, or null: never. */
  expiresAt: number | null;
}

/** Everything a charge reads: the lots in spending order, the ledger's length, usage by product. */
export interface AccountState {
  lots: Lot[];
  /** Ledger entries so far (the seq of the newest). */
  seq: number;
  /** Billed calls per product in the period that started at `periodStart`. */
  usage: Partial<Record<Product, { periodStart: number; used: number }>>;
}

export type LedgerKind = 'grant' | 'buy' | 'debit' | 'refund' | 'expire' | 'subscribe';
export interface LedgerEntry {
  seq: number;
  at: number;
  kind: LedgerKind;
  /** Signed change of the wallet: + grant, buy, refund; − debit, expire. */
  credits: number;
  /** Wallet total after this entry. */
  balance: number;
  product?: Product;
  plan?: Plan;
  requestId?: string;
  keyId?: string;
  /** Credits taken from (or returned to, or added as, or expired from) each lot: [lot id, credits]. */
  lots?: [number, number][];
  /** Debits and refunds of a product: the start of the plan period the call counts in (unix ms). */
  period?: number;
  /** Grants and purchases: the kind and expiry of the lot they add. */
  lot?: { kind: LotKind; expiresAt: number | null };
  /** Marketplace: billed requests (+1 a call, −1 a refund) and the overage price they cost. */
  units?: number;
  overageMicros?: number;
  /** A debit's refund (shown when read, never stored), and the debit a refund reverses. */
  refundedBy?: number;
  refundOf?: number;
  note?: string;
}

/** A ledger entry as the journal holds it: with its account (a record holds many accounts' entries). */
export interface JournalEntry extends LedgerEntry {
  account: string;
}

export const emptyState = (): AccountState => ({ lots: [], seq: 0, usage: {} });
export const total = (lots: readonly Lot[]): number => lots.reduce((a, l) => a + l.credits, 0);
export const live = (l: Lot, now: number): boolean => l.expiresAt === null || l.expiresAt > now;

const KIND_ORDER: Record<LotKind, number> = { subscription: 0, free: 1, purchased: 2 };
/** Subscription credits first (soonest expiry first), then the free grant, then purchased. */
export const spendOrder = (lots: Lot[]): Lot[] =>
  [...lots].sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || (a.expiresAt ?? Infinity) - (b.expiresAt ?? Infinity) || a.id - b.id);

/** Adds one entry to `state`, in place. Entries must come in seq order. */
export function applyEntry(state: AccountState, e: LedgerEntry): void {
  state.seq = e.seq;
  switch (e.kind) {
    case 'grant':
    case 'buy': {
      const [[id, credits]] = e.lots!;
      state.lots = spendOrder([...state.lots, { id, kind: e.lot!.kind, credits, granted: credits, expiresAt: e.lot!.expiresAt }]);
      break;
    }
    case 'expire': {
      const gone = new Set(e.lots!.map(([id]) => id));
      state.lots = state.lots.filter((l) => !gone.has(l.id));
      break;
    }
    case 'subscribe':
      // A new plan starts a new period with nothing used.
      delete state.usage[e.product!];
      break;
    case 'debit':
    case 'refund': {
      const sign = e.kind === 'debit' ? -1 : 1;
      for (const [id, credits] of e.lots ?? []) {
        // Loops, not find/some with a closure: every call of every account comes here.
        for (const lot of state.lots) {
          if (lot.id === id) {
            lot.credits += sign * credits;
            break;
          }
        }
      }
      if (e.product === undefined || e.period === undefined) break;
      // Counted in place: a state outlives many calls, and a new object a call is garbage for each.
      // A debit counts its units (a monitor's delivery: one a match), a refund gives them back.
      const n = e.units === undefined ? 1 : Math.abs(e.units);
      const u = state.usage[e.product];
      if (u?.periodStart !== e.period) {
        if (e.kind === 'debit') state.usage[e.product] = { periodStart: e.period, used: n };
      } else if (e.kind === 'debit') u.used += n;
      else u.used = Math.max(0, u.used - n);
      break;
    }
  }
  // Spent subscription lots past their expiry hold nothing to write off: they just go.
  for (const l of state.lots) {
    if (l.credits === 0 && !live(l, e.at)) {
      state.lots = state.lots.filter((k) => k.credits !== 0 || live(k, e.at));
      break;
    }
  }
}

export interface PeriodView {
  start: number;
  end: number;
}

/** [start, end) of the month-long period containing `now`, months counted from `anchor` (UTC). */
export function periodOf(anchor: number, now: number): PeriodView {
  const a = new Date(anchor);
  const at = (k: number): number => {
    const y = a.getUTCFullYear();
    const m = a.getUTCMonth() + k;
    // The anchor's day, clamped to the month's last day (Jan 31 → Feb 28 → Mar 31).
    const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
    return Date.UTC(y, m, Math.min(a.getUTCDate(), last), a.getUTCHours(), a.getUTCMinutes(), a.getUTCSeconds(), a.getUTCMilliseconds());
  };
  const n = new Date(now);
  let k = (n.getUTCFullYear() - a.getUTCFullYear()) * 12 + (n.getUTCMonth() - a.getUTCMonth());
  if (at(k) > now) k--;
  k = Math.max(0, k);
  return { start: at(k), end: at(k + 1) };
}
