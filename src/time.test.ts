import { describe, expect, it } from 'vitest';
import { formatTime, parseTime } from './time.js';

describe('formatTime', () => {
  it('writes whole seconds in UTC with a Z', () => {
    expect(formatTime(0)).toBe('1970-01-01T00:00:00Z');
    expect(formatTime(1_735_689_601)).toBe('2025-01-01T00:00:01Z');
    expect(formatTime(-1)).toBe('1969-12-31T23:59:59Z');
  });

  it('keeps years past 9999 (the extended ISO form) without milliseconds', () => {
    expect(formatTime(253_402_300_800)).toBe('+010000-01-01T00:00:00Z');
  });

  it('round-trips through parseTime', () => {
    for (const t of [0, 1_700_000_000, 1_735_689_599]) expect(parseTime(formatTime(t))).toBe(t);
  });
});
