import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../store/index.js';
import { addOutletList, readOutletList } from './outlet-list.js';
import { OutletError, Outlets } from './outlets.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-outlet-list-'));
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

const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
};

describe('the shipped outlet list', () => {
  const list = readOutletList();

  it('has 30 or more outlets in 8 or more languages, names unique, every URL https', () => {
    expect(list.length).toBeGreaterThanOrEqual(30);
    expect(new Set(list.map((o) => o.language)).size).toBeGreaterThanOrEqual(8);
    expect(new Set(list.map((o) => o.name)).size).toBe(list.length);
    for (const o of list) {
      expect(o.country, o.name).toMatch(/^[A-Z]{2}$/);
      for (const u of [o.homepage, ...o.feeds]) expect(new URL(u).protocol, `${o.name}: ${u}`).toBe('https:');
    }
  });

  it('is added as sources add adds an outlet, every 15 minutes; a second time adds nothing and changes nothing', () => {
    outlets.add({ name: list[3].name, homepage: 'https://mine.example/', feeds: ['https://mine.example/feed.xml'] });
    const first = addOutletList(outlets, list);
    expect([first.added.length, first.present]).toEqual([list.length - 1, [list[3].name]]);
    expect(outlets.get(list[3].name)?.feeds).toEqual(['https://mine.example/feed.xml']);
    const nos = outlets.get('NOS')!;
    expect([nos.intervalSec, nos.fetchArticles, nos.language, nos.country, nos.feeds]).toEqual([
      900,
      false,
      'nl',
      'NL',
      ['https://feeds.nos.nl/nosnieuwsalgemeen'],
    ]);
    const again = addOutletList(outlets, list);
    expect([again.added, again.present.length]).toEqual([[], list.length]);
  });
});

describe('a list of ones own (QUICKSTART_OUTLETS)', () => {
  it.each([
    ['not JSON', '{', /broken\.json: /],
    ['no outlets array', '{"outlets": {}}', /an object with an "outlets" array/],
    ['an outlet without feeds', '{"outlets": [{"name": "A", "homepage": "https://a.example/"}]}', /outlet 1 needs name, homepage and feeds/],
  ])('%s is refused, naming the file and what is wrong', (_what, text, why) => {
    const p = file('broken.json', text);
    expect(() => readOutletList(p)).toThrow(OutletError);
    expect(() => readOutletList(p)).toThrow(why);
  });

  it('an outlet sources add would refuse is refused by name; the ones before it stay added', () => {
    const p = file(
      'mixed.json',
      JSON.stringify({
        outlets: [
          { name: 'Good Desk', homepage: 'https://good.example/', feeds: ['https://good.example/rss'], interval: '1h' },
          { name: 'Bad Desk', homepage: 'https://bad.example/', feeds: ['ftp://bad.example/rss'] },
        ],
      }),
    );
    expect(() => addOutletList(outlets, readOutletList(p))).toThrow('outlet "Bad Desk": --feed "ftp://bad.example/rss" is not http(s)');
    expect(outlets.get('Good Desk')?.intervalSec).toBe(3600);
    expect(outlets.get('Bad Desk')).toBeUndefined();
  });
});
