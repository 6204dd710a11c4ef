/**
 * Every error of POST /v1/match (README, "Errors") with its status and whole
 * body: request validation (rule 9 and the strict types), text mode off (rule 13) and
 * too_many_matches (rule 5) with MATCH_MAX_MATCHES set low.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Corpus } from './helpers/corpus.js';
import { itemKey, makeQuery, oracle, pickMinScore, recallOf, vec } from './helpers/oracle.js';
import { Rng } from './helpers/rng.js';
import { MEDIUM, expectError, startHarness, type Harness } from './helpers/service.js';

const MAX = 500;
let h: Harness;
let corpus: Corpus;
let q: Float64Array;
let v: number[];

beforeAll(async () => {
  h = await startHarness({ corpus: MEDIUM, env: { MATCH_MAX_MATCHES: String(MAX) } });
  corpus = h.corpus!;
  q = makeQuery(corpus, new Rng(404), 'topic');
  v = vec(q);
});

afterAll(async () => {
  await h?.close();
});

const zeros = (n: number) => new Array<number>(n).fill(0);
const ones = (n: number) => new Array<number>(n).fill(0.03125);

describe('422 invalid_request: validation, the message names the field', () => {
  const cases: [string, () => unknown, string | RegExp][] = [
    ['vector of 1023 numbers (rule 9)', () => ({ vector: ones(1023) }), 'vector'],
    ['vector of 1025 numbers (rule 9)', () => ({ vector: ones(1025) }), 'vector'],
    ['empty vector', () => ({ vector: [] }), 'vector'],
    ['all-zero vector', () => ({ vector: zeros(1024) }), 'vector'],
    ['vector with a string item', () => ({ vector: [...ones(1023), '0.1'] }), 'vector'],
    ['vector with a null item', () => ({ vector: [...ones(1023), null] }), 'vector'],
    ['vector that is a string', () => ({ vector: ones(1024).join(',') }), 'vector'],
    ['vector of arrays', () => ({ vector: ones(1024).map((x) => [x]) }), 'vector'],
    ['both text and vector', () => ({ text: 'port strike', vector: v }), /text|vector/],
    ['model other than bge-m3 with a vector', () => ({ model: 'text-embedding-3-small', vector: v }), 'model'],
    ['model that is not a string', () => ({ model: 3, vector: v }), 'model'],
    ['unknown field min_scor', () => ({ vector: v, min_scor: 0.4 }), 'min_scor'],
    ['unknown field Vector (case)', () => ({ Vector: v }), 'Vector'],
    ['unknown field with no query', () => ({ page: 2 }), 'page'],
    ['limit as a string (no coercion)', () => ({ limit: '10' }), 'limit'],
    ['limit 0', () => ({ limit: 0 }), 'limit'],
    ['limit 101', () => ({ limit: 101 }), 'limit'],
    ['limit 1.5', () => ({ limit: 1.5 }), 'limit'],
    ['limit -1', () => ({ limit: -1 }), 'limit'],
    ['limit null', () => ({ limit: null }), 'limit'],
    ['min_score 1.5', () => ({ vector: v, min_score: 1.5 }), 'min_score'],
    ['min_score -1.5', () => ({ vector: v, min_score: -1.5 }), 'min_score'],
    ['min_score as a string', () => ({ vector: v, min_score: '0.5' }), 'min_score'],
    ['order newest', () => ({ order: 'newest' }), 'order'],
    ['order RELEVANCE (case)', () => ({ vector: v, order: 'RELEVANCE' }), 'order'],
    ['include_edits as a string', () => ({ include_edits: 'false' }), 'include_edits'],
    ['sources as a string', () => ({ sources: 'Wire One' }), 'sources'],
    ['unknown source', () => ({ sources: ['The Daily Nothing'] }), 'The Daily Nothing'],
    ['both sources and exclude_sources', () => ({ sources: ['Wire One'], exclude_sources: ['Daily Ledger'] }), /sources/],
    ['since not a date-time', () => ({ since: '2025-01-32' }), 'since'],
    ['since a date-time without an offset', () => ({ since: '2025-01-01T00:00:00' }), 'since'],
    ['since after until', () => ({ since: '2025-02-01T00:00:00Z', until: '2025-01-01T00:00:00Z' }), /since|until/],
    ['empty text', () => ({ text: '' }), 'text'],
    ['text of 4001 characters', () => ({ text: 'a'.repeat(4001) }), 'text'],
    ['text that is not a string', () => ({ text: ['port strike'] }), 'text'],
  ];
  for (const [name, body, names] of cases) {
    it(name, async () => {
      expectError(await h.match(body()), 422, 'invalid_request', { names });
    });
  }

  it("the message says what is allowed, as a query string parameter's does", async () => {
    const cases: [unknown, string][] = [
      [{ order: 'newest' }, 'order: one of time, relevance, got "newest"'],
      [{ include_edits: 'yes' }, 'include_edits: true or false, got "yes"'],
      [{ limit: '10' }, 'limit: an integer from 1 to 100, got "10"'],
      [{ limit: 101 }, 'limit: an integer from 1 to 100, got 101'],
      [{ min_score: 1.5 }, 'min_score: a number from -1 to 1, got 1.5'],
      [{ vector: ones(1023) }, 'vector: an array of 1024 numbers, got 1023 items'],
      [{ vector: [...ones(1023), '0.1'] }, 'vector[1023]: a number, got "0.1"'],
      [{ sources: 'Wire One' }, 'sources: an array of 1 to 50 strings, got "Wire One"'],
      [{ text: '' }, 'text: a string of 1 to 4000 characters, got ""'],
      [{ text: 'a'.repeat(4001) }, 'text: a string of 1 to 4000 characters, got 4001 characters'],
      [{ cursor: { t: 1 } }, 'cursor: a string, got an object'],
      [{ min_scor: 0.4 }, 'unknown field "min_scor"'],
      ['[]', 'body: a JSON object, got an array'],
    ];
    for (const [body, message] of cases) {
      const res = await h.match(body);
      expectError(res, 422, 'invalid_request');
      expect(res.body.message).toBe(message);
    }
  });

  it('the bounds themselves are accepted: limit 1 and 100, min_score -1 and 1, a 1024 vector', async () => {
    for (const body of [
      { limit: 1 },
      { limit: 100 },
      { vector: v, min_score: 1 },
      { vector: v, min_score: 0.99, limit: 100 },
      { vector: ones(1024), min_score: 0.99 },
    ]) {
      const res = await h.match(body);
      expect(res.status, `${JSON.stringify({ ...body, vector: undefined })}: ${res.raw}`).toBe(200);
    }
  });

  it('a JSON body that is not an object is invalid_request', async () => {
    for (const raw of ['[]', '42', '"hello"', 'true']) {
      const res = await h.match(raw);
      expect([400, 422], `${raw}: ${res.raw}`).toContain(res.status);
      expectError(res, res.status, 'invalid_request');
    }
  });
});

describe('400 invalid_request: malformed JSON', () => {
  for (const raw of ['{"limit": 5', '{limit: 5}', '{"limit": 5,}', "{'limit': 5}", '{"vector": [0.1, 0.2,', '\u0000\u0001']) {
    it(JSON.stringify(raw), async () => {
      expectError(await h.match(raw), 400, 'invalid_request');
    });
  }
});

describe('503 text_mode_unavailable: text mode is off (rule 13)', () => {
  it('a valid text query answers 503 text_mode_unavailable', async () => {
    expectError(await h.match({ text: 'central bank raises rates' }), 503, 'text_mode_unavailable');
    expectError(await h.match({ text: 'central bank raises rates', order: 'relevance', limit: 10 }), 503, 'text_mode_unavailable');
    expectError(await h.match({ text: 'a'.repeat(4000) }), 503, 'text_mode_unavailable');
    expectError(await h.match({ text: 'x' }), 503, 'text_mode_unavailable');
  });

  it('model is ignored in text mode', async () => {
    expectError(await h.match({ text: 'rail strike', model: 'some-other-model' }), 503, 'text_mode_unavailable');
  });

  it('validation comes first: an empty or over-long text is 422 even with text mode off', async () => {
    expectError(await h.match({ text: '' }), 422, 'invalid_request', { names: 'text' });
    expectError(await h.match({ text: 'b'.repeat(4001), order: 'relevance' }), 422, 'invalid_request', { names: 'text' });
  });
});

describe('422 too_many_matches (rule 5), MATCH_MAX_MATCHES=500', () => {
  it('min_score -1 over the corpus is too_many_matches with an integer matched_at_least', async () => {
    expect(corpus.articles.length).toBeGreaterThan(MAX);
    const res = await h.match({ vector: v, min_score: -1 });
    expectError(res, 422, 'too_many_matches', { extra: { matched_at_least: expect.any(Number) } });
    expect(Number.isInteger(res.body.matched_at_least)).toBe(true);
    expect(res.body.matched_at_least).toBeGreaterThan(MAX);
    expect(res.body.matched_at_least).toBeLessThanOrEqual(corpus.articles.length);
  });

  it('fires with include_edits and filters too, never silently truncating a page', async () => {
    const res = await h.match({ vector: v, min_score: -1, include_edits: true, exclude_sources: ['Café Économie'], limit: 5 });
    expectError(res, 422, 'too_many_matches', { extra: { matched_at_least: expect.any(Number) } });
    expect(res.body.matched_at_least).toBeGreaterThan(MAX);
    expect(res.body.matched_at_least).toBeLessThanOrEqual(corpus.revisions.length);
    // A query matching somewhat more rows than the cap is refused too, not cut short.
    const min = pickMinScore(corpus, q, {}, 650);
    expect(oracle(corpus, q, { min_score: min }).length).toBeGreaterThan(MAX + 50);
    const r2 = await h.match({ vector: v, min_score: min, limit: 100 });
    expectError(r2, 422, 'too_many_matches', { extra: { matched_at_least: expect.any(Number) } });
  });

  it('just under the cap pages to the end', async () => {
    const min = pickMinScore(corpus, q, {}, 380);
    const n = oracle(corpus, q, { min_score: min }).length;
    expect(n).toBeLessThan(MAX);
    const { items } = await h.pageAll({ vector: v, min_score: min }, 100);
    const rec = recallOf(corpus, q, { min_score: min }, items.map(itemKey));
    expect(rec.extraneous).toEqual([]);
    expect(rec.recall).toBe(1);
  });

  it('raising min_score or narrowing since/until answers 200 (the guidance)', async () => {
    const narrow = await h.match({ vector: v, min_score: -1, since: '2025-01-10T00:00:00Z', until: '2025-01-13T00:00:00Z' });
    expect(narrow.status, narrow.raw).toBe(200);
    const raised = await h.match({ vector: v, min_score: 0.5 });
    expect(raised.status, raised.raw).toBe(200);
  });

  it('relevance order has no cap: min_score -1 answers the top limit', async () => {
    const res = await h.match({ vector: v, min_score: -1, order: 'relevance', limit: 100 });
    expect(res.status, res.raw).toBe(200);
    expect(res.body.count).toBe(100);
  });

  it('the no-query walk has no cap', async () => {
    const { items } = await h.pageAll({ include_edits: true }, 100);
    expect(items.length).toBe(corpus.revisions.length);
    expect(items.length).toBeGreaterThan(MAX);
  });
});

describe('order_requires_query and cursor_requires_time_order (rules 6 and 7)', () => {
  it('order=relevance with neither text nor vector', async () => {
    expectError(await h.match({ order: 'relevance' }), 422, 'order_requires_query');
    expectError(await h.match({ order: 'relevance', min_score: 0.3, sources: ['Wire One'] }), 422, 'order_requires_query');
  });

  it('a cursor with order=relevance', async () => {
    const page = await h.match({ limit: 2 });
    expectError(await h.match({ vector: v, order: 'relevance', cursor: page.body.next_cursor }), 422, 'cursor_requires_time_order');
  });
});
