import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { articleFields, Store, type RevisionInput } from './lmdb-store.js';

const dirs: string[] = [];
const stores: Store[] = [];
const openStore = (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-store-'))) => {
  dirs.push(dir);
  const s = new Store(dir);
  stores.push(s);
  return s;
};

afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const unit = (i: number) => {
  const v = new Float32Array(1024);
  v[i % 1024] = 1;
  return v;
};
// Text JSON must escape, and text it must carry through as it is: quotes, backslashes,
// control characters, U+2028, astral characters and a lone surrogate.
const AWKWARD = 'He said "no" \\ then\n\ttabbed\u0001 \u2028 line — café 📰 \ud800 end';
const rev = (i: number, extra: Partial<RevisionInput> = {}): RevisionInput => ({
  url: `https://x.example/${i}`,
  source: i % 2 ? 'Odd "outlet"' : 'Even',
  title: `t${i} ${AWKWARD}`,
  body: `b${i} ${AWKWARD}`.repeat(1 + (i % 3) * 400),
  text: `text ${i}`,
  publishedAt: 1_700_000_000 + i,
  chunks: [{ text: `c${i}`, vector: unit(i) }],
  ...extra,
});

/** What a response shows of revision `ord`, read the slow way: its record, decoded. */
const fieldsOf = (s: Store, ord: number) => articleFields(s.revisions.get(ord)!, s.sourceNames());

describe('articleJson: each revision rendered once, when stored', () => {
  it('is the JSON of the fields a response shows, for every revision written', () => {
    const s = openStore();
    s.writeRevisions([rev(0), rev(1), rev(2)]);
    s.writeRevisions([rev(1, { title: 'revised', revisedAt: 1_800_000_000 }), rev(3)]);
    expect(s.nextOrd()).toBe(5);
    for (let ord = 0; ord < 5; ord++) {
      const bytes = s.articleJson(ord)!;
      expect(JSON.parse(bytes.toString('utf8'))).toEqual(fieldsOf(s, ord));
      // An object whose last byte is its closing brace: match.ts splices fields in before it.
      expect(bytes[bytes.length - 1]).toBe('}'.charCodeAt(0));
    }
    expect(JSON.parse(s.articleJson(3)!.toString()).title).toBe('revised');
    // Everything carried through but the lone surrogate, stored as U+FFFD (one, at any length).
    const stored = AWKWARD.replace('\ud800', '\ufffd');
    expect(JSON.parse(s.articleJson(0)!.toString()).body).toBe(`b0 ${stored}`);
    expect(JSON.parse(s.articleJson(2)!.toString()).body).toBe(`b2 ${stored}`.repeat(801));
    expect(s.articleJson(5)).toBeUndefined();
  });

  it('a store written before articleJson existed is rendered at open, once, and read the slow way until then', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-store-'));
    const old = openStore(dir);
    expect(old.renderArticles()).toBe(0);
    old.writeRevisions(Array.from({ length: 25 }, (_, i) => rev(i)));
    // What an older version leaves: no rendered JSON, no marker.
    const rendered = old.root.openDB({ name: 'articleJson', encoding: 'binary', keyEncoding: 'uint32' });
    await rendered.clearAsync();
    await old.meta.remove('articleJsonDone');
    await old.close();
    stores.splice(stores.indexOf(old), 1);

    const s = new Store(dir);
    stores.push(s);
    // Read before the walk: rendered from the record, the same bytes a stored one would be.
    for (const ord of [0, 7, 24]) expect(JSON.parse(s.articleJson(ord)!.toString())).toEqual(fieldsOf(s, ord));
    const heard: [number, number][] = [];
    expect(s.renderArticles((done, total) => heard.push([done, total]))).toBe(25);
    expect(heard.at(-1)).toEqual([25, 25]);
    const raw = s.root.openDB({ name: 'articleJson', encoding: 'binary', keyEncoding: 'uint32' });
    expect(raw.getCount()).toBe(25);
    for (let ord = 0; ord < 25; ord++) expect(JSON.parse(raw.get(ord)!.toString())).toEqual(fieldsOf(s, ord));
    // The marker makes the next open skip the walk.
    expect(s.renderArticles()).toBe(0);
  });
});
