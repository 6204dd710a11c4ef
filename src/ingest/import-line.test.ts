import { describe, expect, it } from 'vitest';
import { parseImportLine } from './import-line.js';

const vec = (f: (i: number) => number) => Array.from({ length: 1024 }, (_, i) => f(i));
const good = {
  url: 'https://Example.com/a?utm_source=rss',
  source: 'Daily Ledger',
  title: 'Port strike ends',
  snippet: 'Dock workers return to work after a week.',
  published_at: '2026-05-01T08:00:00+02:00',
  chunks: [{ text: 'Port strike ends', vector: vec((i) => (i === 0 ? 3 : 0)) }],
};
const reason = (o: unknown) => {
  const r = parseImportLine(typeof o === 'string' ? o : JSON.stringify(o));
  return r.ok ? 'ok' : r.reason;
};

describe('parseImportLine', () => {
  it('canonicalises the URL, normalises vectors and reads times to the second in UTC', () => {
    const r = parseImportLine(JSON.stringify(good));
    if (!r.ok) throw new Error(r.reason);
    expect(r.input.url).toBe('https://example.com/a');
    expect(r.input.publishedAt).toBe(Date.UTC(2026, 4, 1, 6) / 1000);
    expect(r.input.chunks[0].vector[0]).toBeCloseTo(1, 6);
    expect(r.input.text).toBe('');
  });

  it('accepts vector_b64 (little-endian float32)', () => {
    const f = new Float32Array(1024).fill(0.5);
    const r = parseImportLine(JSON.stringify({ ...good, chunks: [{ text: 'x', vector_b64: Buffer.from(f.buffer).toString('base64') }] }));
    expect(r.ok && r.input.chunks[0].vector[5]).toBeCloseTo(1 / 32, 6);
  });

  it('accepts a line without chunks: the service embeds it, or stores it to embed later', () => {
    const { chunks: _, ...bare } = good;
    const r = parseImportLine(JSON.stringify(bare));
    expect(r.ok && r.input.chunks).toEqual([]);
  });

  it.each([
    ['{nope', /invalid JSON/],
    [[1, 2], /not a JSON object/],
    [{ ...good, url: 'nope' }, /url/],
    [{ ...good, title: '' }, /title/],
    [{ ...good, snippet: undefined }, /snippet/],
    [{ ...good, published_at: '2026-05-01' }, /published_at/],
    [{ ...good, revised_at: 'yesterday' }, /revised_at/],
    [{ ...good, chunks: [{ text: 'x', vector: vec(() => 0) }] }, /chunks\[0\]: vector is zero/],
    [{ ...good, chunks: [{ text: 'x', vector: vec(() => 1).slice(1) }] }, /chunks\[0\]\.vector: must be 1024/],
    [{ ...good, chunks: [{ text: 'x', vector_b64: 'AAAA' }] }, /vector_b64/],
    [{ ...good, chunks: [{ text: 'x' }] }, /exactly one of vector, vector_b64/],
    [{ ...good, publised_at: good.published_at }, /unknown field "publised_at"/],
    [{ ...good, chunks: 'Port strike ends' }, /chunks: must be an array/],
  ])('rejects %j', (line, want) => {
    expect(reason(line)).toMatch(want);
  });
});
