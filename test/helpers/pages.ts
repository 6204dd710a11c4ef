/** What the live parsers' tests share: the captured and synthetic pages, and the one way a parse fails. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { ScrapeError } from '../../src/live/page.js';

const PAGES = resolve(fileURLToPath(new URL('.', import.meta.url)), '../fixtures/pages');

/** A page under test/fixtures/pages: `readFixture('synthetic/launches-not-found.html')`. */
export function readFixture(name: string): string {
  return readFileSync(resolve(PAGES, name), 'utf8');
}

/** The ScrapeError `fn` throws; fails the test when it throws anything else or nothing. */
export function scrapeError(fn: () => unknown): ScrapeError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ScrapeError);
    return e as ScrapeError;
  }
  throw new Error('no ScrapeError thrown');
}
