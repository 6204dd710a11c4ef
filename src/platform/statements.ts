/**
 * What an account is shown (GET /v1/account, `newsmatch usage`): the summary of its wallet and
 * plans, and its ledger read back from where each entry lives.
 */
import type { AccountRecord, BillingTables, LedgerView, Subscription } from './journal.js';
import { live, periodOf, total, type AccountState, type JournalEntry, type LedgerEntry, type LotKind } from './ledger.js';
import { creditsOf, familyOf, MARKETPLACE_PLANS, rateOf, type MarketplacePlan, type Plan, type Product, type Rate } from './products.js';

export interface SubscriptionView {
  product: Product;
  plan: Plan;
  period_start: string;
  period_end: string;
  used: number;
  rate_limit: Rate;
  credits_per_call: number;
  included?: number;
  overage_requests?: number;
  overage_usd?: number;
  stop?: number;
}

export interface AccountSummary {
  id: string;
  name: string | null;
  created_at: string;
  credits: { total: number; subscription: number; free: number; purchased: number; expiring: { credits: number; expires_at: string }[] };
  subscriptions: SubscriptionView[];
}

/** Unix ms as ISO 8601 in whole seconds (`2026-01-31T12:00:00Z`), as statements and the ledger show times. */
export const isoSeconds = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The summary of `account` at `now`, from its state (expired credits written off already) and its subscriptions. */
export function summaryOf(account: AccountRecord, state: AccountState, subs: Iterable<Subscription>, now: number): AccountSummary {
  const lots = state.lots.filter((l) => live(l, now));
  const sum = (kind: LotKind) => total(lots.filter((l) => l.kind === kind));
  const subscriptions: SubscriptionView[] = [];
  for (const sub of subs) {
    const period = periodOf(sub.since, now);
    const u = state.usage[sub.product];
    const used = u && u.periodStart === period.start ? u.used : 0;
    const view: SubscriptionView = {
      product: sub.product,
      plan: sub.plan,
      period_start: isoSeconds(period.start),
      period_end: isoSeconds(period.end),
      used,
      rate_limit: rateOf(sub.product, sub.plan),
      credits_per_call: creditsOf(sub.product),
    };
    if (familyOf(sub.product) === 'marketplace') {
      const plan = MARKETPLACE_PLANS[sub.plan as MarketplacePlan];
      const over = Math.max(0, used - plan.included);
      Object.assign(view, { included: plan.included, overage_requests: over, overage_usd: (over * (plan.overageMicros ?? 0)) / 1e6, stop: plan.stop });
    }
    subscriptions.push(view);
  }
  return {
    id: account.id,
    name: account.name,
    created_at: isoSeconds(account.createdAt),
    credits: {
      total: total(lots),
      subscription: sum('subscription'),
      free: sum('free'),
      purchased: sum('purchased'),
      expiring: lots.filter((l) => l.expiresAt !== null && l.credits > 0).map((l) => ({ credits: l.credits, expires_at: isoSeconds(l.expiresAt!) })),
    },
    subscriptions,
  };
}

/**
 * An account's ledger entries, oldest first, at or after `since` (unix ms) and before `until`:
 * the first layout's ledger, the entries the view has folded, then those of `tail` (the
 * account's journal entries past the fold, read when it is called).
 */
export function ledgerOf(
  t: BillingTables,
  view: LedgerView,
  account: string,
  tail: () => Iterable<{ entry: JournalEntry }>,
  since: number,
  until: number,
): LedgerEntry[] {
  const bySeq = new Map<number, LedgerEntry>();
  const strip = ({ account: _, ...e }: JournalEntry): LedgerEntry => e;
  for (const { value } of t.legacyLedger.getRange({ start: [account, 0], end: [account, Number.MAX_SAFE_INTEGER] })) bySeq.set(value.seq, value);
  // Folded entries: the view says where in the journal each is.
  const records = new Map<number, JournalEntry[]>();
  for (const { value: at } of view.entries.getRange({ start: [account, 0], end: [account, Number.MAX_SAFE_INTEGER] })) {
    for (let k = 0; k < at.length; k += 2) {
      const pos = at[k];
      const i = at[k + 1];
      let record = records.get(pos);
      if (!record) records.set(pos, (record = t.journal.get(pos) ?? []));
      if (record[i]?.account === account) bySeq.set(record[i].seq, strip(record[i]));
    }
  }
  for (const { entry } of tail()) bySeq.set(entry.seq, strip(entry));
  const all = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  // A refund names the debit it reverses; the debit shows it.
  for (const e of all) if (e.kind === 'refund' && e.refundOf !== undefined) bySeq.get(e.refundOf)!.refundedBy = e.seq;
  return all.filter((e) => e.at >= since && e.at < until);
}
