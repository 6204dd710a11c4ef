/**
 * The metering path every metered endpoint takes, as a core the HTTP layer calls in order
 * (README, "Accounts, keys, credits and plans"):
 *
 *   authenticate (http/auth.ts) → authorise → rate limit → validate (the route schema)
 *   → admit (per-process concurrency) → charge → handler (while the debit commits) → answer
 *   once it has committed → refund on 400/422/5xx
 *
 * Gateway keys are not charged (the gateway bills its users) and reach the indexed products
 * only; Bearer keys are charged to their account, or recorded at price 0 for the operator.
 */
import { AppError } from '../errors.js';
import type { Billing, Charge } from './billing.js';
import type { Held } from './held-state.js';
import { OPERATOR } from './journal.js';
import type { KeyInfo } from './keys.js';
import { familyOf, formatRate, gatewayPolicy, rateLimitField, ratePolicy, type Product, type RatePolicy } from './products.js';
import { RateWindows, type RateLimiter } from './rate-limit.js';

export interface MeteringOptions {
  /** Products this service does not offer: 503 product_unavailable. */
  disabled: ReadonlySet<Product>;
  /** Calls of a product running at once in this process, past which 503 overloaded. */
  maxInflight: (p: Product) => number;
  /**
   * Cluster mode: the nodes serving now. Each enforces its share of a rate limit (the quota
   * divided among them, rounded up), so a gateway spreading calls over the nodes meets the
   * plan's limit in all (README, "Cluster mode"). Absent: 1.
   */
  nodes?: () => number;
}

/** A call that passed authorisation and the rate limit. */
export interface Admission {
  product: Product;
  /** The account charged, or null for a gateway key. */
  account: string | null;
  keyId: string;
  /** The account's record in billing, found once for the whole call. */
  held?: Held;
  /** The RateLimit-Policy and RateLimit field values, when a limit applies. */
  ratePolicy?: string;
  rateLimit?: string;
}

const OVERLOADED_RETRY_S = 1;

export class Metering {
  readonly #inflight = new Map<Product, number>();

  constructor(
    readonly billing: Billing,
    readonly limiter: RateLimiter,
    readonly options: MeteringOptions,
  ) {}

  /**
   * Authorises `key` for `product` and takes one request from its rate limit. Throws 503
   * product_unavailable, 403 forbidden / not_subscribed, 429 rate_limited (gateway) or
   * quota_exceeded (a plan's cap), each 429 with Retry-After and the RateLimit fields.
   */
  authorise(key: KeyInfo, product: Product): Admission {
    if (this.options.disabled.has(product)) throw new AppError('product_unavailable', `${product} is not offered by this service`);
    if (key.scopes && !key.scopes.includes(product)) throw new AppError('forbidden', `this key's scope (${key.scopes.join(', ')}) does not include ${product}`);
    if (key.scheme === 'gateway') {
      if (familyOf(product) !== 'indexed') throw new AppError('forbidden', `${product} is not offered through the gateway: use a Bearer key`);
      const admission: Admission = { product, account: null, keyId: key.id };
      return key.rate ? this.#limit(admission, key.id, gatewayPolicy(key.rate), 'rate_limited') : admission;
    }
    const account = key.account ?? OPERATOR;
    if (account === OPERATOR) return { product, account, keyId: key.id };
    const held = this.billing.held(account);
    const sub = this.billing.subscription(held, product);
    if (!sub)
      throw new AppError(
        'not_subscribed',
        `the account does not subscribe to ${product} (newsmatch subscribe --account ${account} --product ${product} --plan free)`,
      );
    return this.#limit({ product, account, keyId: key.id, held }, (held.windows ??= new RateWindows()), ratePolicy(product, sub.plan), 'quota_exceeded');
  }

  /** Takes one request from `party`'s window under `policy`: the admission with its IETF RateLimit fields, or 429. */
  #limit(a: Admission, party: string | RateWindows, policy: RatePolicy, error: 'rate_limited' | 'quota_exceeded'): Admission {
    const n = this.options.nodes?.() ?? 1;
    const rate = n > 1 ? { quota: Math.ceil(policy.rate.quota / n), windowS: policy.rate.windowS } : policy.rate;
    const d = this.limiter.take(party, policy.name, rate);
    a.ratePolicy = policy.field;
    a.rateLimit = rateLimitField(policy, d.remaining, d.resetS);
    if (!d.ok) {
      const headers = { 'ratelimit-policy': a.ratePolicy, ratelimit: a.rateLimit, 'retry-after': String(d.resetS) };
      const share = n > 1 ? ` (this node's share of ${formatRate(policy.rate)}, over ${n} nodes)` : '';
      throw new AppError(error, `rate limit of ${formatRate(rate)}${share} reached; retry in ${d.resetS} s`, { headers });
    }
    return a;
  }

  /** Takes a concurrency slot for the call (503 overloaded past MAX_INFLIGHT_<PRODUCT>); returns its release. */
  admit(product: Product): () => void {
    const n = this.#inflight.get(product) ?? 0;
    const max = this.options.maxInflight(product);
    if (n >= max) {
      throw new AppError('overloaded', `${product} is running ${n} calls, its limit on this machine`, {
        headers: { 'retry-after': String(OVERLOADED_RETRY_S) },
      });
    }
    this.#inflight.set(product, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inflight.set(product, (this.#inflight.get(product) ?? 1) - 1);
    };
  }

  /**
   * Charges an admitted call: `decided` at once, the debit as computed from the wallet in
   * memory (null for gateway keys; undefined when refused), and `landed` once it is committed,
   * with the debit that counts (Billing.chargeEarly). The caller runs the handler meanwhile and
   * answers only after `landed`. A store that cannot be written (disk full, map full) is 503
   * product_unavailable: credits could not be reached.
   */
  charge(a: Admission, requestId: string): { decided: Charge | null | undefined; landed: Promise<Charge | null> } {
    if (a.account === null) return { decided: null, landed: Promise.resolve(null) };
    const { decided, landed } = this.billing.chargeEarly(a.held ?? a.account, a.product, { requestId, keyId: a.keyId });
    return {
      decided,
      landed: landed.catch((e: unknown) => {
        if (e instanceof AppError) throw e;
        throw new AppError('product_unavailable', 'credits could not be reached', { cause: e });
      }),
    };
  }

  refund(c: Charge, reason: string): Promise<Charge> {
    return this.billing.refund(c, reason);
  }

  /** The wallet total an account has now (for X-Credits-Remaining on uncharged replies). */
  remaining(account: string): number | null {
    if (account === OPERATOR) return null;
    return this.billing.balance(account);
  }
}
