/**
 * Cursors: stateless keyset paging, signed and bound to every input but `limit`
 * (src/cursor/cursor.ts). Tampered, invented, foreign or re-used-with-other-input cursors are
 * 400 bad_cursor (rule 8); a cursor with relevance is 422 cursor_requires_time_order (rule 7).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Corpus } from './helpers/corpus.js';
import { makeQuery, pickMinScore, vec } from './helpers/oracle.js';
import { Rng } from './helpers/rng.js';
import { MEDIUM, SMALL, expectError, startHarness, type Harness } from './helpers/service.js';

let h: Harness;
let corpus: Corpus;
let q: Float64Array;
let q2: Float64Array;
let min: number;
/** The query body and a cursor to its second page. */
let base: Record<string, unknown>;
let cursor: string;
let noQueryCursor: string;

beforeAll(async () => {
  h = await startHarness({ corpus: MEDIUM });
  corpus = h.corpus!;
  const rng = new Rng(303);
  q = makeQuery(corpus, rng, 'topic');
  q2 = makeQuery(corpus, rng, 'topic');
  min = pickMinScore(corpus, q, { include_edits: true }, 120);
  base = { vector: vec(q), min_score: min, include_edits: true, since: '2025-01-03T00:00:00Z', until: '2025-03-01T00:00:00Z', exclude_sources: ['Wire One'] };
  const first = await h.match({ ...base, limit: 10 });
  expect(first.status, first.raw).toBe(200);
  expect(typeof first.body.next_cursor).toBe('string');
  cursor = first.body.next_cursor;
  const chrono = await h.match({ limit: 10 });
  noQueryCursor = chrono.body.next_cursor;
  expect(typeof noQueryCursor).toBe('string');
});

afterAll(async () => {
  await h?.close();
});

function flipAt(s: string, i: number): string {
  const c = s[i];
  const r = c === 'A' ? 'B' : c === 'a' ? 'b' : /[0-9]/.test(c) ? (c === '0' ? '1' : '0') : 'A';
  return s.slice(0, i) + r + s.slice(i + 1);
}

describe('cursor paging', () => {
  it('the cursor continues where the first page ended, and the limit may change', async () => {
    const all = await h.pageAll(base, 100);
    const next = await h.match({ ...base, limit: 10, cursor });
    expect(next.status, next.raw).toBe(200);
    expect(next.body.items.map((i: any) => i.id)).toEqual(all.items.slice(10, 20).map((i) => i.id));
    const bigger = await h.match({ ...base, limit: 37, cursor });
    expect(bigger.status, bigger.raw).toBe(200);
    expect(bigger.body.items.map((i: any) => i.id)).toEqual(all.items.slice(10, 47).map((i) => i.id));
  });

  it('the same cursor can be used twice (stateless) and gives the same page', async () => {
    const a = await h.match({ ...base, limit: 10, cursor });
    const b = await h.match({ ...base, limit: 10, cursor });
    expect(a.status).toBe(200);
    expect(b.body.items).toEqual(a.body.items);
  });

  it('the no-query walk pages past any match cap with cursors', async () => {
    const { items } = await h.pageAll({ include_edits: true }, 100);
    expect(items.length).toBe(corpus.revisions.length);
  });
});

describe('bad_cursor (rule 8)', () => {
  it('a cursor with one character changed is rejected', async () => {
    for (const i of [0, Math.floor(cursor.length / 3), Math.floor(cursor.length / 2), cursor.length - 2]) {
      const res = await h.match({ ...base, cursor: flipAt(cursor, i) });
      expectError(res, 400, 'bad_cursor');
    }
  });

  it('a truncated cursor is rejected', async () => {
    expectError(await h.match({ ...base, cursor: cursor.slice(0, -4) }), 400, 'bad_cursor');
    expectError(await h.match({ ...base, cursor: cursor.slice(0, Math.floor(cursor.length / 2)) }), 400, 'bad_cursor');
    expectError(await h.match({ ...base, cursor: cursor.slice(1) }), 400, 'bad_cursor');
  });

  it('an invented cursor is rejected', async () => {
    const rng = new Rng(5);
    for (const n of [8, 32, 64, 120]) {
      expectError(await h.match({ ...base, cursor: rng.bytes(n).toString('base64url') }), 400, 'bad_cursor');
      expectError(await h.match({ ...base, cursor: rng.bytes(n).toString('base64') }), 400, 'bad_cursor');
    }
    expectError(await h.match({ ...base, cursor: 'not a cursor!' }), 400, 'bad_cursor');
    expectError(
      await h.match({ ...base, cursor: Buffer.from('{"t":"2025-01-01T00:00:00Z","id":"00000000-0000-0000-0000-000000000000"}').toString('base64url') }),
      400,
      'bad_cursor',
    );
    expectError(await h.match({ cursor: 'x'.repeat(300) }), 400, 'bad_cursor');
  });

  it('a cursor from another query is rejected', async () => {
    // A no-query cursor with a vector query, and the vector cursor with no query.
    expectError(await h.match({ ...base, cursor: noQueryCursor }), 400, 'bad_cursor');
    expectError(await h.match({ cursor }), 400, 'bad_cursor');
    expectError(await h.match({ vector: vec(q), cursor: noQueryCursor }), 400, 'bad_cursor');
  });

  it('re-use with any input but limit changed is rejected', async () => {
    const changes: Record<string, unknown>[] = [
      { min_score: min + 0.01 },
      { min_score: min - 0.01 },
      { vector: vec(q2) },
      { since: '2025-01-04T00:00:00Z' },
      { until: '2025-02-28T00:00:00Z' },
      { include_edits: false },
      { exclude_sources: ['Daily Ledger'] },
      { exclude_sources: undefined, sources: ['Daily Ledger'] },
    ];
    for (const c of changes) {
      const body: Record<string, unknown> = { ...base, ...c, limit: 10, cursor };
      for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
      expectError(await h.match(body), 400, 'bad_cursor');
    }
    // Dropping a filter is a change too.
    const { since: _s, ...noSince } = base;
    expectError(await h.match({ ...noSince, cursor }), 400, 'bad_cursor');
    // A vector one component away is a different query.
    const nudged = vec(q);
    nudged[17] += 0.01;
    expectError(await h.match({ ...base, vector: nudged, cursor }), 400, 'bad_cursor');
  });

  it('a no-query cursor re-used with other filters is rejected', async () => {
    expectError(await h.match({ include_edits: true, cursor: noQueryCursor }), 400, 'bad_cursor');
    expectError(await h.match({ sources: ['Daily Ledger'], cursor: noQueryCursor }), 400, 'bad_cursor');
    expectError(await h.match({ since: '2025-01-01T00:00:00Z', cursor: noQueryCursor }), 400, 'bad_cursor');
    const ok = await h.match({ limit: 3, cursor: noQueryCursor });
    expect(ok.status, ok.raw).toBe(200);
  });

  it('a cursor issued by another service (another data directory) is rejected', async () => {
    const other = await startHarness({ corpus: SMALL });
    try {
      const page = await other.match({ limit: 5 });
      expect(page.status, page.raw).toBe(200);
      expectError(await h.match({ limit: 5, cursor: page.body.next_cursor }), 400, 'bad_cursor');
    } finally {
      await other.close();
    }
  });

  it('a cursor that is not a string is 422 invalid_request naming the field', async () => {
    expectError(await h.match({ cursor: 12345 }), 422, 'invalid_request', { names: 'cursor' });
    expectError(await h.match({ cursor: { t: 1 } }), 422, 'invalid_request', { names: 'cursor' });
  });
});

describe('cursor_requires_time_order (rule 7)', () => {
  it('a well-formed cursor with order=relevance is 422, not bad_cursor', async () => {
    expectError(await h.match({ ...base, order: 'relevance', cursor }), 422, 'cursor_requires_time_order');
    expectError(await h.match({ vector: vec(q), order: 'relevance', cursor: noQueryCursor }), 422, 'cursor_requires_time_order');
  });
});
