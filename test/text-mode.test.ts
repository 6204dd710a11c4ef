/**
 * Text mode, black box, with BGE_M3_MODEL_DIR set to a tiny bge-m3 stand-in: lines without
 * chunks are chunked and embedded on import, `text` queries rank and page like vector ones,
 * and a store filled while text mode was off is embedded later by `newsmatch embed` (resumable:
 * a second run embeds nothing) and then found by the running server.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLines } from './helpers/corpus.js';
import { Rng } from './helpers/rng.js';
import { expectError, expectItemShape, expectNewestFirst, startHarness, type Harness } from './helpers/service.js';
import { TINY_WORDS, writeTinyModel } from './helpers/tiny-model.js';
import { cli } from './helpers/cli.js';

const root = mkdtempSync(join(tmpdir(), 'text-mode-'));
const modelDir = writeTinyModel(join(root, 'model'), { seed: 11 });

/** Small chunks, so every article has a headline chunk and two or more text chunks. */
const TEXT_ENV = { BGE_M3_MODEL_DIR: modelDir, EMBED_DEVICE: 'cpu', EMBED_THREADS: '1', CHUNK_MIN_TOKENS: '8', CHUNK_MAX_TOKENS: '24' };

// ---- the import file: 12 articles (one with an edit), text but no chunks ----

const rng = new Rng(5150);
const words = (n: number) => Array.from({ length: n }, () => rng.pick(TINY_WORDS)).join(' ');
const sentence = (n: number) => {
  const w = words(n);
  return `${w[0].toUpperCase()}${w.slice(1)}.`;
};

interface Line {
  url: string;
  source: string;
  source_homepage: string;
  title: string;
  snippet: string;
  text: string;
  published_at: string;
  revised_at?: string;
}

const ARTICLES = 12;
const lines: Line[] = Array.from({ length: ARTICLES }, (_, i) => ({
  url: `https://ledger.example/2026/03/story-${i}`,
  source: i % 3 === 0 ? 'Other Desk' : 'Daily Ledger',
  source_homepage: i % 3 === 0 ? 'https://otherdesk.example/' : 'https://ledger.example/',
  title: `${words(6)} ${i}`,
  snippet: sentence(12),
  text: Array.from({ length: 4 }, () => sentence(7 + rng.int(5))).join(' '),
  published_at: `2026-03-${String(1 + i).padStart(2, '0')}T08:00:00Z`,
}));
lines.push({ ...lines[4], text: `${lines[4].text} ${sentence(9)}`, revised_at: '2026-03-05T12:00:00Z' });
const REVISIONS = lines.length;
const corpusFile = join(root, 'text-only.jsonl');
writeLines(corpusFile, lines);

const byUrl = new Map(lines.filter((l) => !l.revised_at).map((l) => [l.url, l]));
/** The article whose headline is the query. */
const target = lines[7];

/** Every item is an imported article; its best_chunk is its headline or a piece of its text. */
function checkScoredItems(items: any[]): void {
  for (const it of items) {
    expectItemShape(it, true);
    const l = byUrl.get(it.source_url);
    expect(l, `unknown item ${it.source_url}`).toBeDefined();
    expect(it.title).toBe(l!.title);
    expect(it.score).toBeGreaterThanOrEqual(-1);
    expect(it.score).toBeLessThanOrEqual(1 + 1e-3);
    expect(it.best_chunk.length).toBeGreaterThan(0);
    expect(it.best_chunk === l!.title || lines.some((x) => x.url === l!.url && x.text.includes(it.best_chunk)), it.best_chunk).toBe(true);
  }
}

/** A relevance answer reduced to what must not depend on how or when the vectors were made. */
const ranking = (items: any[]) => items.map((it) => ({ url: it.source_url, t: it.event_time, best: it.best_chunk, score: Math.round(it.score * 1e4) }));

let withModel: Harness;

afterAll(async () => {
  await withModel?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('import with the model: lines without chunks are embedded', () => {
  beforeAll(async () => {
    withModel = await startHarness({ corpus: null, env: TEXT_ENV });
    expect(withModel.service.embedder).not.toBeNull();
    const summary = await withModel.service.importFile(corpusFile);
    expect(summary).toMatchObject({ lines: REVISIONS, articles: ARTICLES, newRevisions: REVISIONS, rejected: 0 });
  });

  it('every revision gets chunks: its headline and its text in sentence groups', () => {
    expect(withModel.service.store.unembeddedCount()).toBe(0);
    const counts = [...withModel.service.store.revisions.getRange()].map(({ value }) => value.labelCount);
    expect(counts).toHaveLength(REVISIONS);
    for (const n of counts) expect(n).toBeGreaterThanOrEqual(3);
  });

  it('a text query with order=relevance ranks the article whose headline it is first, score ≈ 1', async () => {
    const res = await withModel.match({ text: target.title, order: 'relevance', limit: 20, min_score: -1 });
    expect(res.status, res.raw).toBe(200);
    expect(res.body.order).toBe('relevance');
    const items = res.body.items;
    expect(items).toHaveLength(ARTICLES);
    checkScoredItems(items);
    expect(items[0].source_url).toBe(target.url);
    expect(items[0].best_chunk).toBe(target.title);
    expect(Math.abs(items[0].score - 1)).toBeLessThan(2e-3);
    expect(items[1].score).toBeLessThan(items[0].score - 1e-3);
    for (let i = 1; i < items.length; i++) expect(items[i].score).toBeLessThanOrEqual(items[i - 1].score);
  });

  it('an order=time text query pages with cursors through every article, newest first', async () => {
    const body = { text: 'bank prices rose after the vote', min_score: -1 };
    const first = await withModel.match({ ...body, limit: 5 });
    expect(first.status, first.raw).toBe(200);
    expect(first.body.count).toBe(5);
    expect(typeof first.body.next_cursor).toBe('string');
    const second = await withModel.match({ ...body, limit: 5, cursor: first.body.next_cursor });
    expect(second.status, second.raw).toBe(200);
    expect(second.body.count).toBe(5);
    const firstIds = new Set(first.body.items.map((it: any) => it.id));
    for (const it of second.body.items) expect(firstIds.has(it.id)).toBe(false);
    expect(second.body.items[0].event_time < first.body.items[4].event_time).toBe(true);
    const all = await withModel.pageAll(body, 5);
    expect(all.items).toHaveLength(ARTICLES);
    expect(all.pages.map((p) => p.count)).toEqual([5, 5, 2]);
    expectNewestFirst(all.items);
    checkScoredItems(all.items);
    expect(all.items.slice(0, 5)).toEqual(first.body.items);
    expect(all.items.slice(5, 10)).toEqual(second.body.items);
  });

  it('the same text twice gives identical responses', async () => {
    for (const body of [
      { text: target.title, order: 'relevance', limit: 10, min_score: -1 },
      { text: 'storm flood rain water', min_score: -1, limit: 4 },
    ]) {
      const a = await withModel.match(body);
      const b = await withModel.match(body);
      expect(a.status, a.raw).toBe(200);
      expect(a.body.count).toBeGreaterThan(0);
      expect(b.body).toEqual(a.body);
    }
  });

  it('an invalid text is still 422 with the model on; 4000 characters is fine', async () => {
    expectError(await withModel.match({ text: '' }), 422, 'invalid_request', { names: 'text' });
    expectError(await withModel.match({ text: 'b'.repeat(4001), order: 'relevance' }), 422, 'invalid_request', { names: 'text' });
    const long = 'market '.repeat(600).slice(0, 4000);
    const ok = await withModel.match({ text: long, order: 'relevance', limit: 3, min_score: -1 });
    expect(ok.status, ok.raw).toBe(200);
    expect(ok.body.count).toBe(3);
  });
});

describe('text mode off, then `newsmatch embed`', () => {
  let h: Harness;
  const anyVector = Array.from({ length: 1024 }, (_, i) => Math.sin(i + 1));

  beforeAll(async () => {
    h = await startHarness({ corpus: null, env: { EMBED_THREADS: '1', CHUNK_MIN_TOKENS: '8', CHUNK_MAX_TOKENS: '24' } });
  });

  afterAll(async () => {
    await h?.close();
  });

  it('without a model the file imports and lists, but no vector query finds it and text is 503', async () => {
    expect(h.service.embedder).toBeNull();
    const summary = await h.service.importFile(corpusFile);
    expect(summary).toMatchObject({ lines: REVISIONS, articles: ARTICLES, newRevisions: REVISIONS, rejected: 0 });
    expect(h.service.store.unembeddedCount()).toBe(REVISIONS);
    const listing = await h.match({});
    expect(listing.status, listing.raw).toBe(200);
    expect(listing.body.items.map((it: any) => it.title).sort()).toEqual([...byUrl.values()].map((l) => l.title).sort());
    for (const body of [
      { vector: anyVector, min_score: -1 },
      { vector: anyVector, min_score: -1, order: 'relevance', limit: 100 },
    ]) {
      const res = await h.match(body);
      expect(res.status, res.raw).toBe(200);
      expect(res.body.items).toEqual([]);
    }
    expectError(await h.match({ text: target.title }), 503, 'text_mode_unavailable');
  });

  it('reopened with the model, the backlog is still there until `newsmatch embed` runs', async () => {
    Object.assign(h.env, TEXT_ENV);
    await h.reopen();
    expect(h.service.embedder).not.toBeNull();
    expect(h.service.store.unembeddedCount()).toBe(REVISIONS);
    const res = await h.match({ text: target.title, order: 'relevance', min_score: -1 });
    expect(res.status, res.raw).toBe(200);
    expect(res.body.items).toEqual([]);
  });

  it('`newsmatch embed` embeds every stored revision; the running server then finds them', async () => {
    const r = cli(['embed'], h.env);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`embedded ${REVISIONS} revisions\\b`));
    expect(r.stdout).toMatch(/\b0 left\b/);
    expect(h.service.store.unembeddedCount()).toBe(0);

    const res = await h.match({ text: target.title, order: 'relevance', limit: 20, min_score: -1 });
    expect(res.status, res.raw).toBe(200);
    expect(res.body.items).toHaveLength(ARTICLES);
    checkScoredItems(res.body.items);
    expect(res.body.items[0].source_url).toBe(target.url);
    expect(Math.abs(res.body.items[0].score - 1)).toBeLessThan(2e-3);

    // The same vectors as embedding on import: the same ranking, scores and best chunks.
    const reference = await withModel.match({ text: target.title, order: 'relevance', limit: 20, min_score: -1 });
    expect(ranking(res.body.items)).toEqual(ranking(reference.body.items));

    // Vector queries find them too.
    const v = Array.from(await h.service.embedder!.embedQuery(target.title));
    const byVector = await h.match({ vector: v, min_score: -1 });
    expect(byVector.status, byVector.raw).toBe(200);
    expect(byVector.body.items).toHaveLength(ARTICLES);
  });

  it('a second `newsmatch embed` embeds nothing', () => {
    const r = cli(['embed'], h.env);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/embedded 0 revisions\b/);
    expect(h.service.store.unembeddedCount()).toBe(0);
  });
});

describe('503 embed_unavailable over HTTP', () => {
  it('an embedding slower than EMBED_TIMEOUT_MS answers 503 embed_unavailable with Retry-After; vectors still work', async () => {
    const slowModel = writeTinyModel(join(root, 'slow-model'), { seed: 11, layers: 6 });
    const h = await startHarness({ corpus: null, env: { BGE_M3_MODEL_DIR: slowModel, EMBED_THREADS: '1', EMBED_TIMEOUT_MS: '1' } });
    try {
      const long = Array.from({ length: 400 }, (_, i) => TINY_WORDS[i % TINY_WORDS.length]).join(' ');
      const res = await h.match({ text: long, order: 'relevance', limit: 5 });
      expectError(res, 503, 'embed_unavailable');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      const vector = Array.from({ length: 1024 }, (_, i) => (i === 3 ? 1 : 0));
      expect((await h.match({ vector, order: 'relevance', limit: 5 })).status).toBe(200);
    } finally {
      await h.close();
    }
  });
});
