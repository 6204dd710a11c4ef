/**
 * What the platform sells (README, "Accounts, keys, credits and plans"): what a call to each product costs,
 * and the plans that set rate limits and, for the marketplace product, the monthly request
 * quota. A pure table: billing and the HTTP layer read it. The products and their families are
 * src/products.ts, which config reads too; they are exported from here as well.
 */
import { familyOf, PRODUCTS, type Family, type Product } from '../products.js';

export { familyOf, isProduct, PRODUCT_NAMES, PRODUCTS, type Family, type Product } from '../products.js';

/** A rate limit: `quota` requests per `windowS` seconds (a sliding window). */
export interface Rate {
  quota: number;
  windowS: number;
}

/** Credits per call by family (section 8.1); the marketplace is metered by its plan instead. */
export const FAMILY_CREDITS: Record<Family, number> = { indexed: 1, live_search: 5, live_page: 8, contacts: 10, marketplace: 0 };

export const creditsOf = (p: Product): number => FAMILY_CREDITS[PRODUCTS[p]];

/**
 * Plans of the credit-metered products: the wallet pays, the plan sets the rate limit. Every
 * credit product of an account on one plan shares its window (section 8.1: a new account has
 * "a cap of 10 requests per minute").
 */
export const CREDIT_PLANS = {
  free: { rate: { quota: 10, windowS: 60 } },
  pro: { rate: { quota: 5, windowS: 1 } },
  ultra: { rate: { quota: 10, windowS: 1 } },
  mega: { rate: { quota: 20, windowS: 1 } },
} as const satisfies Record<string, { rate: Rate }>;

/**
 * The marketplace plans of section 8.2. Money is in micro-dollars (integers: no rounding drift
 * over a month of overage). `included` requests a period, then `overageMicros` each up to
 * `stop`; a plan with no overage price stops hard at `included`.
 */
export const MARKETPLACE_PLANS = {
  free: { priceMicros: 0, included: 200, overageMicros: null, rate: { quota: 10, windowS: 60 }, stop: 200 },
  pro: { priceMicros: 49_990_000, included: 3_700, overageMicros: 13_400, rate: { quota: 5, windowS: 1 }, stop: 18_500 },
  ultra: { priceMicros: 149_000_000, included: 14_800, overageMicros: 10_100, rate: { quota: 10, windowS: 1 }, stop: 44_400 },
  mega: { priceMicros: 399_000_000, included: 49_600, overageMicros: 8_100, rate: { quota: 20, windowS: 1 }, stop: 124_000 },
  payg: { priceMicros: 0, included: 0, overageMicros: 20_100, rate: { quota: 5, windowS: 1 }, stop: 18_500 },
} as const satisfies Record<string, { priceMicros: number; included: number; overageMicros: number | null; rate: Rate; stop: number }>;

/**
 * What each credit plan allows of monitors (README, "Monitors"): monitors standing at once, and
 * matches delivered a period (each a credit of the monitors product, one `units` a match).
 */
export const MONITOR_LIMITS = {
  free: { monitors: 3, deliveries: 1_000 },
  pro: { monitors: 100, deliveries: 100_000 },
  ultra: { monitors: 1_000, deliveries: 1_000_000 },
  mega: { monitors: 10_000, deliveries: 10_000_000 },
} as const satisfies Record<keyof typeof CREDIT_PLANS, { monitors: number; deliveries: number }>;

export type CreditPlan = keyof typeof CREDIT_PLANS;
export type MarketplacePlan = keyof typeof MARKETPLACE_PLANS;
export type Plan = CreditPlan | MarketplacePlan;

/** The plans a product can be subscribed to. */
export const plansFor = (p: Product): readonly Plan[] =>
  familyOf(p) === 'marketplace' ? (Object.keys(MARKETPLACE_PLANS) as MarketplacePlan[]) : (Object.keys(CREDIT_PLANS) as CreditPlan[]);

/** The rate limit a plan of this product sets. */
export function rateOf(p: Product, plan: Plan): Rate {
  if (familyOf(p) === 'marketplace') return MARKETPLACE_PLANS[plan as MarketplacePlan].rate;
  return CREDIT_PLANS[plan as CreditPlan].rate;
}

/**
 * The rate-limit policy a plan of a product puts its calls under: credit products on one plan
 * share a window (the free plan's 10/min is the account's, as section 8.1 puts it); the
 * marketplace plan has its own. `field` is its RateLimit-Policy header, the same every call.
 */
export interface RatePolicy {
  name: string;
  rate: Rate;
  field: string;
  /** RateLimit values with room now (t=0), by remaining quota below OPEN_FIELDS: built once each, not every call. */
  readonly open: string[];
}

const policy = (name: string, rate: Rate): RatePolicy => ({ name, rate, field: `"${name}";q=${rate.quota};w=${rate.windowS}`, open: [] });

const OPEN_FIELDS = 128;

/** The RateLimit field (draft-ietf-httpapi-ratelimit-headers) of a policy with `remaining` left, refilling in `resetS` s. */
export function rateLimitField(p: RatePolicy, remaining: number, resetS: number): string {
  if (resetS !== 0 || remaining >= OPEN_FIELDS) return `"${p.name}";r=${remaining};t=${resetS}`;
  return (p.open[remaining] ??= `"${p.name}";r=${remaining};t=0`);
}

const RATE_POLICIES = {
  credits: Object.fromEntries(Object.entries(CREDIT_PLANS).map(([plan, p]) => [plan, policy(`credits-${plan}`, p.rate)])),
  marketplace: Object.fromEntries(Object.entries(MARKETPLACE_PLANS).map(([plan, p]) => [plan, policy(`marketplace-${plan}`, p.rate)])),
} as Record<'credits' | 'marketplace', Record<string, RatePolicy>>;

export const ratePolicy = (p: Product, plan: Plan): RatePolicy => RATE_POLICIES[familyOf(p) === 'marketplace' ? 'marketplace' : 'credits'][plan];

const GATEWAY_POLICIES = new Map<string, RatePolicy>();

/** A gateway key's policy (its `--rate`): one object for each rate keys use, so its RateLimit values are built once too. */
export function gatewayPolicy(rate: Rate): RatePolicy {
  const at = `${rate.quota}/${rate.windowS}`;
  let p = GATEWAY_POLICIES.get(at);
  if (!p) GATEWAY_POLICIES.set(at, (p = policy('gateway', rate)));
  return p;
}

/** "10/min", "5/s". */
export const formatRate = (r: Rate): string => `${r.quota}/${r.windowS === 1 ? 's' : r.windowS === 60 ? 'min' : `${r.windowS}s`}`;

/** Parses "5/s", "10/min", "100/h" (a gateway key's `--rate`). */
export function parseRate(s: string): Rate | null {
  const m = /^(\d+)\s*\/\s*(s|sec|second|m|min|minute|h|hour)$/i.exec(s.trim());
  if (!m) return null;
  const quota = Number(m[1]);
  if (quota < 1 || quota > 1_000_000) return null;
  const unit = m[2].toLowerCase()[0];
  return { quota, windowS: unit === 's' ? 1 : unit === 'm' ? 60 : 3600 };
}
