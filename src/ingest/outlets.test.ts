import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../store/index.js';
import { OutletError, Outlets, parseInterval } from './outlets.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-outlets-'));
let store: Store;
let outlets: Outlets;

beforeAll(() => {
  store = new Store(path.join(dir, 'lmdb'));
  outlets = new Outlets(store);
});
afterAll(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('parseInterval', () => {
  it.each([
    ['90', 90],
    ['30s', 30],
    ['5m', 300],
    ['2h', 7200],
    [' 10 s', 10],
  ])('%j is %d seconds', (raw, want) => expect(parseInterval(raw)).toBe(want));

  it.each(['', '5d', 'm', '-5m', '1.5m', '9s'])('rejects %j', (raw) => expect(() => parseInterval(raw)).toThrow(OutletError));
});

describe('Outlets', () => {
  it('adds an outlet, due at once, with its feeds normalised and deduplicated', () => {
    const o = outlets.add({
      name: ' Daily Ledger ',
      homepage: 'https://Ledger.example',
      feeds: ['https://ledger.example/rss', 'https://LEDGER.example/rss'],
      interval: '10m',
    });
    expect(o).toMatchObject({
      name: 'Daily Ledger',
      homepage: 'https://ledger.example/',
      feeds: ['https://ledger.example/rss'],
      intervalSec: 600,
      enabled: true,
      nextPollAt: 0,
      fetchArticles: false,
    });
    expect(outlets.get('Daily Ledger')?.feeds).toEqual(['https://ledger.example/rss']);
  });

  it('refuses a duplicate name, no feed, or a URL that is not http(s)', () => {
    expect(() => outlets.add({ name: 'Daily Ledger', homepage: 'https://x.example', feeds: ['https://x.example/f'] })).toThrow(/exists already/);
    expect(() => outlets.add({ name: 'B', homepage: 'https://x.example', feeds: [] })).toThrow(/at least one --feed/);
    expect(() => outlets.add({ name: 'B', homepage: 'ftp://x.example', feeds: ['https://x.example/f'] })).toThrow(/not http/);
    expect(() => outlets.add({ name: 'B', homepage: 'https://x.example', feeds: ['nope'] })).toThrow(/not a URL/);
    expect(outlets.get('B')).toBeUndefined();
  });

  it('disables, enables and removes', () => {
    outlets.add({ name: 'Wire One', homepage: 'https://wire.example', feeds: ['https://wire.example/atom'] });
    expect(outlets.setEnabled('Wire One', false)).toBe(true);
    expect(outlets.get('Wire One')?.enabled).toBe(false);
    expect(outlets.setEnabled('Wire One', true)).toBe(true);
    expect(outlets.get('Wire One')?.enabled).toBe(true);
    expect(outlets.remove('Wire One')).toBe(true);
    expect(outlets.remove('Wire One')).toBe(false);
    expect(outlets.setEnabled('Nobody', false)).toBe(false);
  });
});
