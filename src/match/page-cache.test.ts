import { describe, expect, it } from 'vitest';
import { PageCache } from './page-cache.js';

const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ ord: i, t: 100 - i, id: `id${i}`, score: 0.5, label: i }));

describe('PageCache', () => {
  it('evicts the least recently used entry past its capacity', () => {
    const c = new PageCache(2);
    c.set('a', rows(1));
    c.set('b', rows(2));
    expect(c.get('a')).toHaveLength(1); // a is now the most recent
    c.set('c', rows(3));
    expect(c.get('b')).toBeUndefined();
    expect(c.get('a')).toHaveLength(1);
    expect(c.get('c')).toHaveLength(3);
    expect(c.size).toBe(2);
  });

  it('capacity 0 keeps nothing', () => {
    const c = new PageCache(0);
    c.set('a', rows(1));
    expect(c.get('a')).toBeUndefined();
  });
});
