import { describe, expect, it } from 'vitest';
import { AppError, catalogue, type ErrorName } from './errors.js';

describe('error catalogue', () => {
  it.each(Object.entries(catalogue))('%s has a snake_case code, a 4xx/5xx status and a message', (name, entry) => {
    expect(entry.code).toMatch(/^[a-z]+(_[a-z]+)*$/);
    expect(entry.status).toBeGreaterThanOrEqual(400);
    expect(entry.status).toBeLessThan(600);
    expect(entry.message.length).toBeGreaterThan(10);
    const e = new AppError(name as ErrorName);
    expect(e.toBody()).toEqual({ error: entry.code, message: entry.message, detail: entry.message });
    expect(e.status).toBe(entry.status);
  });

  it('one wire code never means two different things at one status', () => {
    const seen = new Map<string, string>();
    for (const [name, e] of Object.entries(catalogue)) {
      const key = `${e.code}@${e.status}`;
      expect(seen.get(key), `${name} duplicates ${seen.get(key)}`).toBeUndefined();
      seen.set(key, name);
    }
  });

  it('extras go into the body and a custom message into both message and detail', () => {
    const e = new AppError('too_many_matches', 'too many', { extra: { matched_at_least: 12 } });
    expect(e.toBody()).toEqual({ error: 'too_many_matches', message: 'too many', detail: 'too many', matched_at_least: 12 });
  });
});
