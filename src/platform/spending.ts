/**
 * The spending rules, pure: each takes an account's state and the time, and records the
 * entries a change makes (numbered, added to the state, pushed to `out` for its caller to
 * commit), or throws an AppError before it records anything. Billing runs them on a working
 * state in memory (a call) or on one read from LMDB inside a transaction (the CLI).
 *
 * Spending order (README, "Accounts, keys, credits and plans"): subscription credits (soonest expiry first), then the free
 * grant, then purchased credits, which never expire.
 */
import { AppError } from '../errors.js';
import { OPERATOR, type Subscription } from './journal.js';
import { applyEntry, live, total, type AccountState, type JournalEntry, type LedgerEntry, type Lot, type LotKind, type PeriodView } from './ledger.js';
import { creditsOf, familyOf, MARKETPLACE_PLANS, MONITOR_LIMITS, PRODUCT_NAMES, type CreditPlan, type MarketplacePlan, type Product } from './products.js';

/** Credits a new account starts with (section 8.1). */
export const FREE_CREDITS = 250;

/** What a call's debit records of who made it. */
export interface CallContext {
  requestId: string;
  keyId: string;
}

/** The note on an operator's call (recorded at price 0), by product. */
const OPERATOR_NOTES = Object.fromEntries(PRODUCT_NAMES.map((p) => [p, `operator (list price ${creditsOf(p)})`])) as Record<Product, string>;

const retryAfter = (ms: number) => ({ 'retry-after': String(Math.max(1, Math.ceil(ms / 1000))) });

/** The credits the lots hold that have not expired at `now`. */
export const spendable = (lots: readonly Lot[], now: number): number => total(lots.filter((l) => live(l, now)));

/** Numbers an entry, adds it to `state` and to `out` (appended by the caller), and gives it the wallet total after it. */
export function record(account: string, state: AccountState, e: Omit<LedgerEntry, 'seq' | 'at' | 'balance'>, now: number, out: LedgerEntry[]): LedgerEntry {
  return push(state, { account, seq: state.seq + 1, at: now, ...e, balance: 0 } as JournalEntry, out);
}

/** `record` of an entry its caller wrote whole (a call's debit: one object, not a copy of one). */
function push(state: AccountState, entry: JournalEntry, out: LedgerEntry[]): LedgerEntry {
  applyEntry(state, entry);
  entry.balance = total(state.lots);
  out.push(entry);
  return entry;
}

/** Adds a lot of `credits` (a grant or a purchase), after writing off what has expired. */
export function addLot(
  account: string,
  state: AccountState,
  kind: LotKind,
  credits: number,
  expiresAt: number | null,
  now: number,
  entryKind: 'grant' | 'buy',
  out: LedgerEntry[],
  note?: string,
): LedgerEntry {
  if (!Number.isSafeInteger(credits) || credits <= 0) throw new AppError('invalid_request', `credits must be a positive integer, got ${credits}`);
  expire(account, state, now, out);
  // The lot is named by its entry's seq: never reused, so a refund finds the lot it took from.
  const id = state.seq + 1;
  return record(account, state, { kind: entryKind, credits, lots: [[id, credits]], lot: { kind, expiresAt }, note }, now, out);
}

/** Writes off every expired lot that still holds credits, an `expire` entry each. */
export function expire(account: string, state: AccountState, now: number, out: LedgerEntry[]): void {
  for (const l of state.lots) {
    if (l.credits > 0 && !live(l, now)) {
      record(account, state, { kind: 'expire', credits: -l.credits, lots: [[l.id, l.credits]] }, now, out);
      // Recorded: the lot is gone from `state.lots`, which was replaced; start over.
      return expire(account, state, now, out);
    }
  }
}

/** The operator's call: no wallet and no plan, recorded at price 0 with its list price in the note. */
export function operatorDebit(state: AccountState, product: Product, ctx: CallContext, now: number, out: LedgerEntry[]): LedgerEntry {
  const { requestId, keyId } = ctx;
  return push(
    state,
    { account: OPERATOR, seq: state.seq + 1, at: now, kind: 'debit', credits: 0, balance: 0, product, requestId, keyId, note: OPERATOR_NOTES[product] },
    out,
  );
}

/**
 * Debits one call of `product` to an account subscribed to it (`subscribed`: its subscription
 * and the period the call counts in): its price in credits, or one request of the marketplace
 * plan. Throws 429 `quota_exceeded` (with Retry-After where waiting for the next period helps)
 * when the wallet cannot pay or the plan is past its stop.
 */
export function debitCall(
  account: string,
  state: AccountState,
  product: Product,
  subscribed: PeriodView & { sub: Subscription },
  ctx: CallContext,
  now: number,
  out: LedgerEntry[],
  units = 1,
): LedgerEntry {
  const { requestId, keyId } = ctx;
  const usage = state.usage[product];
  const used = usage !== undefined && usage.periodStart === subscribed.start ? usage.used : 0;
  if (familyOf(product) === 'marketplace') {
    const plan = MARKETPLACE_PLANS[subscribed.sub.plan as MarketplacePlan];
    if (used >= plan.stop) {
      throw new AppError(
        'quota_exceeded',
        `the ${subscribed.sub.plan} plan of ${product} stops at ${plan.stop} requests this period; it renews at ${new Date(subscribed.end).toISOString()}`,
        {
          headers: retryAfter(subscribed.end - now),
        },
      );
    }
    const overageMicros = used + 1 > plan.included ? (plan.overageMicros ?? 0) : 0;
    return push(
      state,
      {
        account,
        seq: state.seq + 1,
        at: now,
        kind: 'debit',
        credits: 0,
        balance: 0,
        product,
        plan: subscribed.sub.plan,
        requestId,
        keyId,
        period: subscribed.start,
        units: 1,
        overageMicros,
      },
      out,
    );
  }
  if (product === 'monitors') {
    const cap = MONITOR_LIMITS[subscribed.sub.plan as CreditPlan].deliveries;
    if (used + units > cap) {
      throw new AppError(
        'quota_exceeded',
        `the ${subscribed.sub.plan} plan of monitors delivers ${cap} matches a period and ${used} are used; it renews at ${new Date(subscribed.end).toISOString()}`,
        { headers: retryAfter(subscribed.end - now) },
      );
    }
  }
  const cost = creditsOf(product) * units;
  let held = 0;
  for (const l of state.lots) if (live(l, now)) held += l.credits;
  // Refused before anything is recorded: the state is left as it was.
  if (held < cost) throw new AppError('quota_exceeded', `the wallet holds ${held} credits and ${product} costs ${cost}: buy or grant credits`);
  expire(account, state, now, out);
  const taken: [number, number][] = [];
  let due = cost;
  for (const lot of state.lots) {
    const take = Math.min(due, lot.credits);
    if (take === 0) continue;
    due -= take;
    taken.push([lot.id, take]);
    if (due === 0) break;
  }
  return push(
    state,
    {
      account,
      seq: state.seq + 1,
      at: now,
      kind: 'debit',
      credits: -cost,
      balance: 0,
      product,
      plan: subscribed.sub.plan,
      requestId,
      keyId,
      period: subscribed.start,
      lots: taken,
      ...(units !== 1 && { units }),
    },
    out,
  );
}

/**
 * Reverses the debit `d`: its credits go back to the lots they came from, except to a lot that
 * has expired since (those stay expired), and a marketplace request is given back.
 */
export function refundDebit(account: string, state: AccountState, d: LedgerEntry, reason: string, now: number, out: LedgerEntry[]): void {
  const returned: [number, number][] = [];
  let lost = 0;
  for (const [lotId, credits] of d.lots ?? []) {
    const lot = state.lots.find((l) => l.id === lotId);
    // A lot that expired since stays expired: its credits are not returned.
    if (lot && live(lot, now)) returned.push([lotId, credits]);
    else lost += credits;
  }
  const units = d.units ? { units: -d.units, ...(d.overageMicros !== undefined && { overageMicros: -d.overageMicros }) } : {};
  record(
    account,
    state,
    {
      kind: 'refund',
      credits: -d.credits - lost,
      product: d.product,
      requestId: d.requestId,
      period: d.period,
      lots: returned,
      refundOf: d.seq,
      note: reason,
      ...units,
    },
    now,
    out,
  );
}

/**
 * Gives back part of the debit `d`: `credits` of it (no more than it took less what was given
 * back before, `returnedBefore`), to the lots it took them from, the last taken first (a lot
 * that has expired since keeps none), and `units` of its period's use. A monitor's window is
 * one debit for all of an account's matches; a webhook event given up gives back its own.
 */
export function refundPart(
  account: string,
  state: AccountState,
  d: LedgerEntry,
  part: { credits: number; units: number; returnedBefore: number },
  reason: string,
  now: number,
  out: LedgerEntry[],
): LedgerEntry | null {
  let due = Math.min(part.credits, -d.credits - part.returnedBefore);
  if (due <= 0) return null;
  const returned: [number, number][] = [];
  let lost = 0;
  for (const [lotId, taken] of [...(d.lots ?? [])].reverse()) {
    const give = Math.min(due, taken);
    if (give === 0) break;
    due -= give;
    const lot = state.lots.find((l) => l.id === lotId);
    if (lot && live(lot, now)) returned.push([lotId, give]);
    else lost += give;
  }
  const credits = returned.reduce((n, [, c]) => n + c, 0);
  return record(
    account,
    state,
    {
      kind: 'refund',
      credits,
      product: d.product,
      requestId: d.requestId,
      period: d.period,
      lots: returned,
      refundOf: d.seq,
      note: lost > 0 ? `${reason} (${lost} credits from lots expired since)` : reason,
      units: -part.units,
    },
    now,
    out,
  );
}
