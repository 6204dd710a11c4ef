import { describe, expect, it } from 'vitest';
import { RateLimiter, rateLimitHeaders } from './rate-limit.js';

describe('RateLimiter (sliding window)', () => {
  it('admits quota requests per window, then says when the oldest leaves it', () => {
    let now = 1_000_000;
    const rl = new RateLimiter(() => now);
    const rate = { quota: 3, windowS: 10 };
    const at = (ms: number) => {
      now = 1_000_000 + ms;
      return rl.take('a', rate);
    };
    expect(at(0)).toEqual({ ok: true, remaining: 2, resetS: 0 });
    expect(at(1_000)).toEqual({ ok: true, remaining: 1, resetS: 0 });
    expect(at(2_000)).toEqual({ ok: true, remaining: 0, resetS: 8 });
    expect(at(4_000)).toEqual({ ok: false, remaining: 0, resetS: 6 });
    // Another party has its own window.
    expect(rl.take('b', rate).ok).toBe(true);
    // No burst at a window edge: at +10 s only the first request has left the window.
    expect(at(10_000)).toEqual({ ok: true, remaining: 0, resetS: 1 });
    expect(at(10_500)).toEqual({ ok: false, remaining: 0, resetS: 1 });
    expect(at(12_000).ok).toBe(true);
  });

  it('writes the IETF fields', () => {
    expect(rateLimitHeaders('credits-free', { quota: 10, windowS: 60 }, { ok: true, remaining: 7, resetS: 0 })).toEqual({
      'ratelimit-policy': '"credits-free";q=10;w=60',
      ratelimit: '"credits-free";r=7;t=0',
    });
  });
});
