import { describe, expect, it } from 'vitest';
import { gatewayPolicy, rateLimitField, ratePolicy } from './products.js';
import { RateLimiter, RateWindows } from './rate-limit.js';

describe('RateLimiter (sliding window)', () => {
  it('admits quota requests per window, then says when the oldest leaves it', () => {
    let now = 1_000_000;
    const rl = new RateLimiter(() => now);
    const rate = { quota: 3, windowS: 10 };
    const at = (ms: number) => {
      now = 1_000_000 + ms;
      return rl.take('a', 'p', rate);
    };
    expect(at(0)).toEqual({ ok: true, remaining: 2, resetS: 0 });
    expect(at(1_000)).toEqual({ ok: true, remaining: 1, resetS: 0 });
    expect(at(2_000)).toEqual({ ok: true, remaining: 0, resetS: 8 });
    expect(at(4_000)).toEqual({ ok: false, remaining: 0, resetS: 6 });
    // Another party has its own window.
    expect(rl.take('b', 'p', rate).ok).toBe(true);
    // No burst at a window edge: at +10 s only the first request has left the window.
    expect(at(10_000)).toEqual({ ok: true, remaining: 0, resetS: 1 });
    expect(at(10_500)).toEqual({ ok: false, remaining: 0, resetS: 1 });
    expect(at(12_000).ok).toBe(true);
  });

  it('a plan with a lower quota keeps the newest admissions: no burst at the change', () => {
    let now = 0;
    const rl = new RateLimiter(() => now);
    for (let i = 0; i < 20; i++, now += 10) expect(rl.take('a', 'p', { quota: 20, windowS: 1 }).ok).toBe(true);
    // 20 in the last 200 ms; now 5 a second: full until the 5th newest leaves the window.
    expect(rl.take('a', 'p', { quota: 5, windowS: 1 })).toEqual({ ok: false, remaining: 0, resetS: 1 });
    now = 150 + 1000; // the 5th newest (at 150 ms) has left
    expect(rl.take('a', 'p', { quota: 5, windowS: 1 }).ok).toBe(true);
    expect(rl.take('a', 'p', { quota: 5, windowS: 1 }).ok).toBe(false);
    // Back up to 20: the 5 kept carry over, the ring grows.
    expect(rl.take('a', 'p', { quota: 20, windowS: 1 })).toEqual({ ok: true, remaining: 14, resetS: 0 });
  });

  it('wraps around its ring over many windows', () => {
    let now = 0;
    const rl = new RateLimiter(() => now);
    let admitted = 0;
    for (let i = 0; i < 1000; i++, now += 100) if (rl.take('a', 'p', { quota: 3, windowS: 1 }).ok) admitted++;
    // 100 s at 10 calls a second under 3 a second: 3 admitted in each second's window.
    expect(admitted).toBe(300);
  });

  it('windows a caller holds (RateWindows) limit alike, one per pool, and say when they are empty', () => {
    let now = 0;
    const rl = new RateLimiter(() => now);
    const w = new RateWindows();
    const rate = { quota: 2, windowS: 1 };
    expect(rl.take(w, 'p', rate).ok).toBe(true);
    expect(rl.take(w, 'q', rate).ok).toBe(true);
    expect(rl.take(w, 'p', rate)).toEqual({ ok: true, remaining: 0, resetS: 1 });
    expect(rl.take(w, 'p', rate).ok).toBe(false);
    // Another pool has its own window.
    expect(rl.take(w, 'q', rate).ok).toBe(true);
    // q's plan lowered: its window is refitted in place, keeping its newest; p's stays.
    expect(rl.take(w, 'q', { quota: 1, windowS: 1 }).ok).toBe(false);
    expect(rl.take(w, 'p', rate).ok).toBe(false);
    expect(w.idle(now)).toBe(false);
    // A party of the same name kept by the limiter is another party.
    expect(rl.take('p', 'p', rate).ok).toBe(true);
    now = 1000;
    expect(w.idle(now)).toBe(true);
    expect(rl.take(w, 'p', rate)).toEqual({ ok: true, remaining: 1, resetS: 0 });
    expect(rl.take(w, 'q', { quota: 1, windowS: 1 }).ok).toBe(true);
  });

  it("writes the IETF fields: the policy's the same every call", () => {
    expect(ratePolicy('news', 'free')).toMatchObject({ name: 'credits-free', rate: { quota: 10, windowS: 60 }, field: '"credits-free";q=10;w=60' });
    expect(ratePolicy('marketplace', 'pro').field).toBe('"marketplace-pro";q=5;w=1');
    // The RateLimit value: built once for a count with room now, anew while the window is full.
    const free = ratePolicy('news', 'free');
    expect(rateLimitField(free, 3, 0)).toBe('"credits-free";r=3;t=0');
    expect(rateLimitField(free, 3, 0)).toBe(free.open[3]);
    expect(rateLimitField(free, 0, 42)).toBe('"credits-free";r=0;t=42');
    expect(rateLimitField(gatewayPolicy({ quota: 1000, windowS: 1 }), 999, 0)).toBe('"gateway";r=999;t=0');
    // A gateway rate's policy is one object whatever key carries it.
    expect(gatewayPolicy({ quota: 5, windowS: 1 })).toBe(gatewayPolicy({ quota: 5, windowS: 1 }));
    expect(gatewayPolicy({ quota: 5, windowS: 60 }).field).toBe('"gateway";q=5;w=60');
    // Credit products on one plan share the policy, so they share a window.
    expect(ratePolicy('contacts', 'mega')).toBe(ratePolicy('match', 'mega'));
  });
});
