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

/** What a response shows of revision `ord`, read the slow way: its records, decoded. */
const fieldsOf = (s: Store, ord: number) => articleFields(s.revisions.get(ord)!, s.sourceNames());
const chunkOf = (s: Store, label: number) => s.chunks.get(label)!.text;
const parse = (b: Buffer | null) => (b === null ? null : JSON.parse(b.toString('utf8')));

/** `Store.rendered`, copied out of lmdb-js's read buffer before the next read reuses it. */
const renderedOf = (s: Store, ord: number, label: number | null) => {
  const r = s.rendered(ord, label);
  return r && { article: Buffer.from(r.article), chunk: r.chunk && Buffer.from(r.chunk) };
};

/** Every revision's rendered pieces against its decoded records, for every label it has and none. */
function expectRendered(s: Store): void {
  for (let ord = 0; ord < s.nextOrd(); ord++) {
    const rev = s.revisions.get(ord)!;
    const bare = renderedOf(s, ord, null)!;
    expect(parse(bare.article)).toEqual(fieldsOf(s, ord));
    // An object whose last byte is its closing brace: match.ts splices fields in before it.
    expect(bare.article[bare.article.length - 1]).toBe('}'.charCodeAt(0));
    expect(bare.chunk).toBeNull();
    for (let label = rev.labelStart; label < rev.labelStart + rev.labelCount; label++) {
      const r = renderedOf(s, ord, label)!;
      expect(parse(r.article)).toEqual(fieldsOf(s, ord));
      expect(parse(r.chunk)).toBe(chunkOf(s, label));
    }
  }
}

describe('rendered: each revision as a response shows it, rendered once when stored', () => {
  it('is the JSON of the fields and chunk texts a response shows, for every revision written or embedded later', () => {
    const s = openStore();
    s.writeRevisions([rev(0), rev(1), rev(2)]);
    s.writeRevisions([rev(1, { title: 'revised', revisedAt: 1_800_000_000 }), rev(3), rev(4, { chunks: [] })]);
    expect(s.nextOrd()).toBe(6);
    // Stored without vectors, then given chunks (text mode): labels after every label so far.
    expect(renderedOf(s, 5, null)).toBeDefined();
    s.attachChunks([{ ord: 5, chunks: [0, 1, 2].map((c) => ({ text: `late ${c} ${AWKWARD}`, vector: unit(c) })) }]);
    expect(s.revisions.get(5)!.labelStart).toBe(5);
    // Rendered again with its chunks (the fallback below would hide a stale record's cost, not its output).
    const raw = s.root.openDB({ name: 'rendered', encoding: 'binary', keyEncoding: 'uint32' });
    expect([raw.get(5)!.readUInt32LE(4), raw.get(5)!.readUInt32LE(8)]).toEqual([5, 3]);
    expectRendered(s);
    expect(parse(renderedOf(s, 3, null)!.article).title).toBe('revised');
    expect(parse(renderedOf(s, 5, 7)!.chunk)).toBe(`late 2 ${AWKWARD.replace('\ud800', '\ufffd')}`);
    // Everything carried through but the lone surrogate, stored as U+FFFD (one, at any length).
    const stored = AWKWARD.replace('\ud800', '\ufffd');
    expect(parse(renderedOf(s, 0, null)!.article).body).toBe(`b0 ${stored}`);
    expect(parse(renderedOf(s, 2, null)!.article).body).toBe(`b2 ${stored}`.repeat(801));
    // A label of another revision is read from its chunk record.
    expect(parse(renderedOf(s, 0, 2)!.chunk)).toBe(chunkOf(s, 2));
    expect(renderedOf(s, 6, null)).toBeUndefined();
  });

  it('a store written before `rendered` existed is rendered at open, once, and read the slow way until then', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-store-'));
    const old = openStore(dir);
    expect(old.renderArticles()).toBe(0);
    old.writeRevisions(Array.from({ length: 25 }, (_, i) => rev(i, { chunks: [0, 1].map((c) => ({ text: `c${i}.${c}`, vector: unit(c) })) })));
    // What an older version leaves: nothing rendered, no marker.
    await old.root.openDB({ name: 'rendered', encoding: 'binary', keyEncoding: 'uint32' }).clearAsync();
    await old.meta.remove('renderedDone');
    await old.close();
    stores.splice(stores.indexOf(old), 1);

    const s = new Store(dir);
    stores.push(s);
    // Read before the walk: rendered from the records.
    expectRendered(s);
    const heard: [number, number][] = [];
    expect(s.renderArticles((done, total) => heard.push([done, total]))).toBe(25);
    expect(heard.at(-1)).toEqual([25, 25]);
    const raw = s.root.openDB({ name: 'rendered', encoding: 'binary', keyEncoding: 'uint32' });
    expect(raw.getCount()).toBe(25);
    expectRendered(s);
    // The marker makes the next open skip the walk.
    expect(s.renderArticles()).toBe(0);
  });
});
