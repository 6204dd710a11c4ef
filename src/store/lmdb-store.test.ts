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

describe('the rendered mirror: the rendered revisions kept in memory as well', () => {
  const rawOf = (s: Store) => s.root.openDB({ name: 'rendered', encoding: 'binary', keyEncoding: 'uint32' });
  /** Overwrites what LMDB holds for `ord`, so a read that still answers as before came from the mirror. */
  const scribble = (s: Store, ord: number) => {
    const raw = rawOf(s);
    const b = Buffer.from(raw.get(ord)!);
    b.write('{"id":"scribbled"}', 12 + 4 * b.readUInt32LE(8));
    b.writeUInt32LE('{"id":"scribbled"}'.length, 0);
    raw.putSync(ord, b);
  };
  const idOf = (s: Store, ord: number) => parse(renderedOf(s, ord, null)!.article).id;

  it('is filled by a thread, answers as LMDB does, copies new revisions as they are read and re-reads one given chunks', async () => {
    const s = openStore();
    s.writeRevisions([rev(0), rev(1), rev(2), rev(3, { chunks: [] }), rev(4, { chunks: [] })]);
    const ids = [0, 1, 2, 3, 4].map((ord) => idOf(s, ord));
    expect(await s.mirrorRendered(2 ** 30, 0)).toEqual({ count: 5, bytes: 4 * 2 ** 20 });
    expectRendered(s);
    for (const ord of [0, 2, 3]) scribble(s, ord);
    expect([0, 2, 3].map((ord) => idOf(s, ord))).toEqual([ids[0], ids[2], ids[3]]);
    // Written after the fill: copied at its first read.
    s.writeRevisions([rev(5)]);
    const id5 = idOf(s, 5);
    scribble(s, 5);
    expect(idOf(s, 5)).toBe(id5);
    // Given chunks here: the copy is dropped, the chunks are shown.
    s.attachChunks([{ ord: 3, chunks: [{ text: 'late 3', vector: unit(3) }] }]);
    const label3 = s.revisions.get(3)!.labelStart;
    expect(parse(renderedOf(s, 3, label3)!.chunk)).toBe('late 3');
    // Given chunks by another process (another Store of the same files: no drop reaches this
    // mirror): its stale copy has no chunks, so the asked label sends the read back to LMDB.
    const other = openStore(s.path);
    other.attachChunks([{ ord: 4, chunks: [{ text: 'late 4', vector: unit(4) }] }]);
    s.refresh();
    const label4 = s.revisions.get(4)!.labelStart;
    expect(parse(renderedOf(s, 4, label4)!.chunk)).toBe('late 4');
    expectRendered(s);
  });

  it('stops at its cap, newest first, and the rest is read from LMDB', async () => {
    const s = openStore();
    // ~56 KB each: 150 of them fill two 4 MiB arenas and more.
    s.writeRevisions(Array.from({ length: 150 }, (_, i) => rev(i, { body: `b${i} ${'x'.repeat(56_000)}` })));
    const { count, bytes } = await s.mirrorRendered(8 * 2 ** 20, 0);
    expect(bytes).toBe(8 * 2 ** 20);
    expect(count).toBeGreaterThan(100);
    expect(count).toBeLessThan(150);
    const ids = Array.from({ length: 150 }, (_, ord) => idOf(s, ord));
    for (let ord = 0; ord < 150; ord++) scribble(s, ord);
    const fromMemory = ids.map((id, ord) => idOf(s, ord) === id);
    // The newest `count` revisions were copied; the oldest, past the cap, are read (scribbled) from LMDB.
    expect(fromMemory).toEqual(Array.from({ length: 150 }, (_, ord) => ord >= 150 - count));
  });

  it('a store closed while its mirror fills closes, the fill stopped', async () => {
    const s = openStore();
    s.writeRevisions(Array.from({ length: 300 }, (_, i) => rev(i)));
    const filled = s.mirrorRendered(2 ** 30, 0);
    await s.close();
    stores.splice(stores.indexOf(s), 1);
    await expect(filled).resolves.toMatchObject({ bytes: expect.any(Number) });
  });

  it('a small store is copied only as it is read', async () => {
    const s = openStore();
    s.writeRevisions([rev(0), rev(1)]);
    expect(await s.mirrorRendered(2 ** 30)).toEqual({ count: 0, bytes: 0 });
    const id = idOf(s, 1);
    scribble(s, 1);
    expect(idOf(s, 1)).toBe(id);
  });
});
