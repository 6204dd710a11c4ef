/**
 * Sliding-window rate limits, per process (the spec's limits are per plan; one process serves
 * the API). A window of `quota` requests per `windowS` seconds keeps the times of the last
 * `quota` admitted requests, so it is exact (no burst of 2× at a fixed window's edge) and
 * costs `quota` numbers per limited party, in a ring. What it answers is what the IETF
 * RateLimit fields (draft-ietf-httpapi-ratelimit-headers) carry: remaining quota and seconds
 * until it refills (metering.ts writes them: `RateLimit-Policy: "credits-free";q=10;w=60`,
 * `RateLimit: "credits-free";r=3;t=0`).
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

/** The admission times of a party's last `times.length` requests at most, oldest at `first`. */
interface Window {
  times: Float64Array;
  first: number;
  size: number;
  windowMs: number;
}

export class RateLimiter {
  /** Windows by party (an account, a gateway key), then by pool (a policy): no key is built a call. */
  readonly #windows = new Map<string, Map<string, Window>>();
  #admissions = 0;

  constructor(readonly clock: () => number = Date.now) {}

  /** Admits one request of `party` in its `pool` under `rate`, or says how long to wait. */
  take(party: string, pool: string, rate: Rate): RateDecision {
    const now = this.clock();
    const windowMs = rate.windowS * 1000;
    let pools = this.#windows.get(party);
    if (!pools) this.#windows.set(party, (pools = new Map()));
    let w = pools.get(pool);
    if (!w || w.windowMs !== windowMs || w.times.length !== rate.quota) pools.set(pool, (w = resized(w, rate.quota, windowMs)));
    const cap = w.times.length;
    const since = now - windowMs;
    while (w.size > 0 && w.times[w.first] <= since) {
      w.first = (w.first + 1) % cap;
      w.size--;
    }
    if (w.size >= cap) return { ok: false, remaining: 0, resetS: refillS(w, now) };
    w.times[(w.first + w.size) % cap] = now;
    w.size++;
    if (++this.#admissions % SWEEP_EVERY === 0) this.#sweep(now);
    const remaining = cap - w.size;
    return { ok: true, remaining, resetS: remaining > 0 ? 0 : refillS(w, now) };
  }

  #sweep(now: number): void {
    for (const [party, pools] of this.#windows) {
      for (const [pool, w] of pools) if (w.size === 0 || w.times[(w.first + w.size - 1) % w.times.length] <= now - w.windowMs) pools.delete(pool);
      if (pools.size === 0) this.#windows.delete(party);
    }
  }
}

/** Seconds until the oldest admission leaves the window. */
const refillS = (w: Window, now: number): number => Math.max(1, Math.ceil((w.times[w.first] + w.windowMs - now) / 1000));

/** A window for a new plan: a party's newest admissions carry over (a plan lowered stays exact). */
function resized(old: Window | undefined, quota: number, windowMs: number): Window {
  const w: Window = { times: new Float64Array(quota), first: 0, size: 0, windowMs };
  if (!old || old.windowMs !== windowMs) return w;
  const keep = Math.min(old.size, quota);
  for (let i = old.size - keep; i < old.size; i++) w.times[w.size++] = old.times[(old.first + i) % old.times.length];
  return w;
}
