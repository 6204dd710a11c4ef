import { describe, expect, it } from 'vitest';
import { shownDate, shownDay } from './dates.js';

const at = new Date('2026-11-23T12:00:00Z');

describe('shownDate', () => {
  it('resolves relative times against the fetch time', () => {
    expect(shownDate('3 hours ago', at)).toBe('2026-11-23T09:00:00.000Z');
    expect(shownDate('Posted 2 days ago', at)).toBe('2026-11-21T12:00:00.000Z');
    expect(shownDate('30+ days ago', at)).toBe('2026-10-24T12:00:00.000Z');
    expect(shownDate('5 mins ago', at)).toBe('2026-11-23T11:55:00.000Z');
    expect(shownDate('1 week ago', at)).toBe('2026-11-16T12:00:00.000Z');
    expect(shownDate('2w ago', at)).toBe('2026-11-09T12:00:00.000Z');
    expect(shownDate('Just now', at)).toBe('2026-11-23T12:00:00.000Z');
    expect(shownDate('Yesterday', at)).toBe('2026-11-22T12:00:00.000Z');
    expect(shownDate('vor 2 Tagen —', at)).toBe('2026-11-21T12:00:00.000Z');
    expect(shownDate('vor 3 Stunden', at)).toBe('2026-11-23T09:00:00.000Z');
    expect(shownDate('vor einer Woche', at)).toBe('2026-11-16T12:00:00.000Z');
    expect(shownDate('vor 1 Monat', at)).toBe('2026-10-24T12:00:00.000Z');
  });
  it('reads absolute dates in the common shown forms', () => {
    expect(shownDate('Feb 20, 2026', at)).toBe('2026-02-20T00:00:00.000Z');
    expect(shownDate('20 February 2026', at)).toBe('2026-02-20T00:00:00.000Z');
    expect(shownDate('20.02.2026 —', at)).toBe('2026-02-20T00:00:00.000Z');
    expect(shownDate('2024-03-07T07:55:25Z', at)).toBe('2024-03-07T07:55:25.000Z');
  });
  it('is null for text without a date it can read', () => {
    expect(shownDate('', at)).toBeNull();
    expect(shownDate('Sponsored', at)).toBeNull();
    expect(shownDate('Feb 30, 2026', at)).toBeNull();
  });
});

describe('shownDay', () => {
  it('reads the English forms a review shows and gives up on others', () => {
    expect(shownDay('July 8, 2026')).toBe('2026-07-08');
    expect(shownDay('Reviewed in the United States on July 8, 2026')).toBe('2026-07-08');
    expect(shownDay('8 July 2026')).toBe('2026-07-08');
    expect(shownDay('Sept. 3, 2024')).toBe('2024-09-03');
    expect(shownDay('8. Juli 2026')).toBeNull();
    expect(shownDay('February 30, 2026')).toBeNull();
    expect(shownDay(null)).toBeNull();
  });
});
