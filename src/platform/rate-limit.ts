/**
 * Sliding-window rate limits, per process (the limits are per plan; one process serves
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

/** Parties whose windows are all empty are dropped this often (admissions). */
const SWEEP_EVERY = 10_000;

/** The admission times of a pool's last `times.length` requests at most, oldest at `first`. */
interface Window {
  pool: string;
  /** A plain array (not a Float64Array, whose elements live apart from it): one cache line fewer a call. */
  times: number[];
  first: number;
  size: number;
  windowMs: number;
  /** The party's window for another pool (a party uses one pool, rarely more). */
  next: Window | null;
}

/**
 * One party's windows, one per pool it has used. The limiter keeps them by party name, or a
 * caller keeps them beside its own record of the party (billing's per-account record): then a
 * call finds them without a lookup of its own.
 */
export class RateWindows {
  head: Window | null = null;
  /** When every window is empty again (unix ms): the party can be forgotten from then on. */
  until = 0;

  idle(now: number): boolean {
    return now >= this.until;
  }
}

export class RateLimiter {
  /** Windows by party name (a gateway key, or an account no one else holds windows for). */
  readonly #parties = new Map<string, RateWindows>();
  #admissions = 0;

  constructor(readonly clock: () => number = Date.now) {}

  /** Admits one request of `party` (its name, or its windows) in its `pool` under `rate`, or says how long to wait. */
  take(party: string | RateWindows, pool: string, rate: Rate): RateDecision {
    const now = this.clock();
    let windows: RateWindows | undefined;
    if (typeof party !== 'string') windows = party;
    else if (!(windows = this.#parties.get(party))) this.#parties.set(party, (windows = new RateWindows()));
    const windowMs = rate.windowS * 1000;
    let w = windows.head;
    while (w !== null && w.pool !== pool) w = w.next;
    if (w === null) windows.head = w = { pool, times: [], first: 0, size: 0, windowMs, next: windows.head };
    if (w.windowMs !== windowMs || w.times.length !== rate.quota) resize(w, rate.quota, windowMs);
    const cap = w.times.length;
    const since = now - windowMs;
    while (w.size > 0 && w.times[w.first] <= since) {
      w.first = w.first + 1 === cap ? 0 : w.first + 1;
      w.size--;
    }
    if (w.size >= cap) return { ok: false, remaining: 0, resetS: refillS(w, now) };
    w.times[(w.first + w.size) % cap] = now;
    w.size++;
    if (now + windowMs > windows.until) windows.until = now + windowMs;
    if (++this.#admissions % SWEEP_EVERY === 0) this.#sweep(now);
    const remaining = cap - w.size;
    return { ok: true, remaining, resetS: remaining > 0 ? 0 : refillS(w, now) };
  }

  #sweep(now: number): void {
    for (const [party, windows] of this.#parties) if (windows.idle(now)) this.#parties.delete(party);
  }
}

/** Seconds until the oldest admission leaves the window. */
const refillS = (w: Window, now: number): number => Math.max(1, Math.ceil((w.times[w.first] + w.windowMs - now) / 1000));

/** Fits a window to a new plan, in place: its newest admissions carry over (a plan lowered stays exact). */
function resize(w: Window, quota: number, windowMs: number): void {
  const times = new Array<number>(quota).fill(0);
  let size = 0;
  if (w.windowMs === windowMs) {
    const keep = Math.min(w.size, quota);
    for (let i = w.size - keep; i < w.size; i++) times[size++] = w.times[(w.first + i) % w.times.length];
  }
  w.times = times;
  w.first = 0;
  w.size = size;
  w.windowMs = windowMs;
}
