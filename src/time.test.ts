import { describe, expect, it } from 'vitest';
import { formatTime, parseTime, readTimeRange } from './time.js';

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

describe('readTimeRange', () => {
  const fail = (m: string) => new Error(m);
  it('reads a bare date as a whole UTC day: since from its first second, until through its last', () => {
    expect(readTimeRange('2026-05-01', '2026-05-02', fail)).toEqual({ since: 1_777_593_600, until: 1_777_680_000 + 86_399 });
    expect(readTimeRange('2026-05-01', '2026-05-01', fail)).toEqual({ since: 1_777_593_600, until: 1_777_593_600 + 86_399 });
  });

  it('rounds a fractional since up and until down', () => {
    expect(readTimeRange('2026-05-01T00:00:00.5Z', '2026-05-01T00:00:01.5Z', fail)).toEqual({ since: 1_777_593_601, until: 1_777_593_601 });
  });

  it("refuses other forms and since after until, in the caller's error", () => {
    expect(() => readTimeRange('2026-05-01T00:00:00', undefined, fail)).toThrow(/^since: an RFC 3339 date-time .* got "2026-05-01T00:00:00"$/);
    expect(() => readTimeRange(undefined, 'yesterday', fail)).toThrow(/^until: /);
    expect(() => readTimeRange('2026-05-02', '2026-05-01', fail)).toThrow('since is after until');
  });
});
