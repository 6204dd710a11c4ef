import { describe, expect, it } from 'vitest';
import { readFixture } from '../../../test/helpers/pages.js';
import { leaderboardPath, pacificDay } from './day.js';

const day = (iso: string) => pacificDay(new Date(iso));

describe('pacificDay', () => {
  it('winter (PST, UTC−8): the day turns at 08:00Z', () => {
    expect(day('2026-11-23T07:59:59Z')).toBe('2026-11-22');
    expect(day('2026-11-23T08:00:00Z')).toBe('2026-11-23');
  });

  it('summer (PDT, UTC−7): the day turns at 07:00Z', () => {
    expect(day('2026-07-01T06:59:59Z')).toBe('2026-06-30');
    expect(day('2026-07-01T07:00:00Z')).toBe('2026-07-01');
  });

  it('spring forward on 2026-03-08 (02:00 PST → 03:00 PDT at 10:00Z)', () => {
    // midnight of the 8th is still PST
    expect(day('2026-03-08T07:59:59Z')).toBe('2026-03-07');
    expect(day('2026-03-08T08:00:00Z')).toBe('2026-03-08');
    // the jump itself does not move the date
    expect(day('2026-03-08T09:59:59Z')).toBe('2026-03-08');
    expect(day('2026-03-08T10:00:00Z')).toBe('2026-03-08');
    // midnight of the 9th is PDT: an hour earlier in UTC than the night before
    expect(day('2026-03-09T06:59:59Z')).toBe('2026-03-08');
    expect(day('2026-03-09T07:00:00Z')).toBe('2026-03-09');
  });

  it('fall back on 2026-11-01 (02:00 PDT → 01:00 PST at 09:00Z)', () => {
    // midnight of the 1st is still PDT
    expect(day('2026-11-01T06:59:59Z')).toBe('2026-10-31');
    expect(day('2026-11-01T07:00:00Z')).toBe('2026-11-01');
    expect(day('2026-11-01T08:59:59Z')).toBe('2026-11-01');
    expect(day('2026-11-01T09:00:00Z')).toBe('2026-11-01');
    // midnight of the 2nd is PST: an hour later in UTC than the night before
    expect(day('2026-11-02T07:59:59Z')).toBe('2026-11-01');
    expect(day('2026-11-02T08:00:00Z')).toBe('2026-11-02');
  });

  it('across a year end', () => {
    expect(day('2027-01-01T07:59:59Z')).toBe('2026-12-31');
    expect(day('2027-01-01T08:00:00Z')).toBe('2027-01-01');
  });
});

describe('leaderboardPath', () => {
  it('has no zero padding', () => {
    expect(leaderboardPath('2026-11-23')).toBe('/leaderboard/daily/2026/11/23');
    expect(leaderboardPath('2026-07-01')).toBe('/leaderboard/daily/2026/7/1');
    expect(leaderboardPath(day('2026-03-09T06:59:59Z'))).toBe('/leaderboard/daily/2026/3/8');
  });

  it("is the path the real site links: the 2026-03-08 home page's yesterday section", () => {
    // launches/producthunt_homepage_2026-03-08.html, Apollo state: "title":"Yesterday's Top
    // Products",…,"hidePath":"/leaderboard/daily/2026/3/7" (its "See all" link)
    expect(readFixture('launches/producthunt_homepage_2026-03-08.html')).toContain(`"hidePath":"${leaderboardPath('2026-03-07')}"`);
  });

  it('rejects what is not a YYYY-MM-DD day', () => {
    expect(() => leaderboardPath('2026/11/23')).toThrow(RangeError);
    expect(() => leaderboardPath('2026-7-1')).toThrow(RangeError);
  });
});
