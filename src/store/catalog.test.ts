import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.js';
import { Store, type RevisionInput } from './lmdb-store.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-catalog-'));
let store: Store;

const unit = (i: number) => {
  const v = new Float32Array(1024);
  v[i % 1024] = 1;
  return v;
};
const rev = (i: number, chunks: number, extra: Partial<RevisionInput> = {}): RevisionInput => ({
  url: `https://x.example/${i}`,
  source: i % 2 ? 'Odd' : 'Even',
  title: `t${i}`,
  body: `b${i}`,
  text: `text ${i}`,
  publishedAt: 1_700_000_000 + i,
  chunks: Array.from({ length: chunks }, (_, c) => ({ text: `c${i}.${c}`, vector: unit(i + c) })),
  ...extra,
});

/** Every column up to the catalog's size, as plain arrays. */
const columns = (c: Catalog) => ({
  size: c.size,
  labels: c.labels,
  eventTime: Array.from(c.eventTime.subarray(0, c.size)),
  sourceId: Array.from(c.sourceId.subarray(0, c.size)),
  first: Array.from(c.first.subarray(0, c.size)),
  labelStart: Array.from(c.labelStart.subarray(0, c.size)),
  labelCount: Array.from(c.labelCount.subarray(0, c.size)),
  labelOrd: Array.from(c.labelOrd.subarray(0, c.labels)),
  ids: c.ids.slice(0, c.size),
});

beforeAll(() => {
  store = new Store(path.join(dir, 'lmdb'));
});
afterAll(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('Catalog', () => {
  it('maps labels of revisions embedded after they were stored', () => {
    store.writeRevisions([rev(0, 2), rev(1, 0), rev(2, 3)]);
    const c = new Catalog();
    c.catchUp(store);
    expect(Array.from(c.labelOrd.subarray(0, 5))).toEqual([0, 0, 2, 2, 2]);
    expect(c.labelCount[1]).toBe(0);
    expect(store.attachChunks([{ ord: 1, chunks: [{ text: 'late', vector: unit(9) }] }])).toEqual([1]);
    c.catchUp(store);
    expect([c.labelStart[1], c.labelCount[1], c.labelOrd[5], c.labels]).toEqual([5, 1, 1, 6]);
    expect(store.unembeddedCount()).toBe(0);
  });

  it('a saved catalog plus catchUp equals one built from LMDB, across later writes and late embeddings', () => {
    store.writeRevisions([rev(3, 1), rev(4, 0), rev(5, 2)]);
    const saved = new Catalog();
    saved.catchUp(store);
    const file = path.join(dir, 'catalog.bin');
    saved.save(file, store);
    // After the save: new revisions, and a stored one gets its chunks.
    store.writeRevisions([rev(6, 2), rev(7, 0)]);
    store.attachChunks([
      {
        ord: 4,
        chunks: [
          { text: 'x', vector: unit(1) },
          { text: 'y', vector: unit(2) },
        ],
      },
    ]);
    const loaded = new Catalog();
    expect(loaded.load(file, store)).toBe(true);
    expect(loaded.size).toBe(6);
    loaded.catchUp(store);
    const fresh = new Catalog();
    fresh.catchUp(store);
    expect(columns(loaded)).toEqual(columns(fresh));
    expect(loaded.labelCount[4]).toBe(2);
  });

  it('a save with nothing new since the load or the last save leaves the file as it is', () => {
    store.writeRevisions([rev(8, 1), rev(9, 0)]);
    const late = store.nextOrd() - 1; // rev 9, stored without chunks
    const file = path.join(dir, 'catalog.bin');
    const c = new Catalog();
    c.catchUp(store);
    c.save(file, store);
    const loaded = new Catalog();
    expect(loaded.load(file, store)).toBe(true);
    const ino = fs.statSync(file).ino;
    loaded.catchUp(store);
    loaded.save(file, store);
    expect(fs.statSync(file).ino).toBe(ino);
    // A late embedding (labels only) or a new revision is written.
    expect(store.attachChunks([{ ord: late, chunks: [{ text: 'z', vector: unit(3) }] }])).toEqual([late]);
    loaded.catchUp(store);
    loaded.save(file, store);
    const after = fs.statSync(file).ino;
    expect(after).not.toBe(ino);
    store.writeRevisions([rev(10, 1)]);
    loaded.catchUp(store);
    loaded.save(file, store);
    expect(fs.statSync(file).ino).not.toBe(after);
    const fresh = new Catalog();
    expect(fresh.load(file, store)).toBe(true);
    expect(columns(fresh)).toEqual(columns(loaded));
  });

  it('refuses a snapshot of another store, a truncated one, or one ahead of the store', async () => {
    const file = path.join(dir, 'catalog.bin');
    const c = new Catalog();
    c.catchUp(store);
    c.save(file, store);
    const other = new Store(path.join(dir, 'other'));
    try {
      expect(new Catalog().load(file, other)).toBe(false);
    } finally {
      await other.close();
    }
    const bytes = fs.readFileSync(file);
    fs.writeFileSync(`${file}.cut`, bytes.subarray(0, bytes.length - 5));
    expect(new Catalog().load(`${file}.cut`, store)).toBe(false);
    fs.writeFileSync(`${file}.junk`, 'not a catalog');
    expect(new Catalog().load(`${file}.junk`, store)).toBe(false);
    expect(new Catalog().load(path.join(dir, 'missing.bin'), store)).toBe(false);
    // A snapshot naming a newest revision the store does not have (a restored older store).
    const ahead = new Catalog();
    ahead.catchUp(store);
    ahead.ids[ahead.size - 1] = '00000000-0000-4000-8000-000000000000';
    ahead.save(`${file}.ahead`, store);
    expect(new Catalog().load(`${file}.ahead`, store)).toBe(false);
  });
});
