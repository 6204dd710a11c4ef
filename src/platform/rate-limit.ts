/**
 * Sliding-window rate limits, per process (the spec's limits are per plan; one process serves
 * the API). A window of `quota` requests per `windowS` seconds keeps the times of the last
 * `quota` admitted requests, so it is exact (no burst of 2× at a fixed window's edge) and
 * costs `quota` numbers per limited party. What it answers is what the IETF RateLimit fields
 * (draft-ietf-httpapi-ratelimit-headers) carry: remaining quota and seconds until it refills.
 */
import type { Rate } from './products.js';

export interface RateDecision {
  ok: boolean;
  remaining: number;
  /** Seconds until the window has room again (0 when it has room now). */
  resetS: number;
}

/** Parties whose newest request is older than their window are dropped this often (admissions). */
const SWEEP_EVERY = 10_000;

export class RateLimiter {
  readonly #windows = new Map<string, { times: number[]; windowMs: number }>();
  #admissions = 0;

  constructor(readonly clock: () => number = Date.now) {}

  /** Admits one request of `party` under `rate`, or says how long to wait. */
  take(party: string, rate: Rate): RateDecision {
    const now = this.clock();
    const windowMs = rate.windowS * 1000;
    let w = this.#windows.get(party);
    if (!w || w.windowMs !== windowMs) this.#windows.set(party, (w = { times: [], windowMs }));
    const since = now - windowMs;
    while (w.times.length > 0 && w.times[0] <= since) w.times.shift();
    while (w.times.length > rate.quota) w.times.shift(); // a plan lowered meanwhile
    if (w.times.length >= rate.quota) return { ok: false, remaining: 0, resetS: Math.max(1, Math.ceil((w.times[0] + windowMs - now) / 1000)) };
    w.times.push(now);
    if (++this.#admissions % SWEEP_EVERY === 0) this.#sweep(now);
    const remaining = rate.quota - w.times.length;
    return { ok: true, remaining, resetS: remaining > 0 ? 0 : Math.max(1, Math.ceil((w.times[0] + windowMs - now) / 1000)) };
  }

  #sweep(now: number): void {
    for (const [party, w] of this.#windows) if (w.times.length === 0 || w.times[w.times.length - 1] <= now - w.windowMs) this.#windows.delete(party);
  }
}

/** The IETF fields for one policy: `RateLimit-Policy: "free";q=10;w=60`, `RateLimit: "free";r=3;t=0`. */
export function rateLimitHeaders(policy: string, rate: Rate, d: RateDecision): Record<string, string> {
  return {
    'ratelimit-policy': `"${policy}";q=${rate.quota};w=${rate.windowS}`,
    ratelimit: `"${policy}";r=${d.remaining};t=${d.resetS}`,
  };
}
