import { describe, expect, it } from 'vitest';
import { Limit, OnePerKey } from './limit.js';

/** A task that records when it starts and finishes, and ends when `release` is called. */
function gate(log: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return {
    release: () => release(),
    run: async () => {
      log.push(`start ${name}`);
      await done;
      log.push(`end ${name}`);
      return name;
    },
  };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('Limit', () => {
  it('runs at most `max` at once, the rest in order of arrival', async () => {
    const log: string[] = [];
    const limit = new Limit(2);
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((n) => gate(log, n));
    const all = Promise.all([a, b, c, d].map((g) => limit.run(g.run)));
    await tick();
    expect(log).toEqual(['start a', 'start b']);
    b.release();
    await tick();
    expect(log).toEqual(['start a', 'start b', 'end b', 'start c']);
    a.release();
    c.release();
    d.release();
    expect(await all).toEqual(['a', 'b', 'c', 'd']);
  });

  it('frees the slot of a call that throws', async () => {
    const limit = new Limit(1);
    await expect(limit.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await limit.run(async () => 'next')).toBe('next');
  });
});

describe('OnePerKey', () => {
  it('runs one call at a time per key, in order, and keys side by side', async () => {
    const log: string[] = [];
    const queue = new OnePerKey();
    const [a1, a2, b1] = ['a1', 'a2', 'b1'].map((n) => gate(log, n));
    const runs = [queue.run('a', a1.run), queue.run('a', a2.run), queue.run('b', b1.run)];
    await tick();
    expect(log).toEqual(['start a1', 'start b1']);
    a1.release();
    await tick();
    expect(log).toEqual(['start a1', 'start b1', 'end a1', 'start a2']);
    a2.release();
    b1.release();
    expect(await Promise.all(runs)).toEqual(['a1', 'a2', 'b1']);
  });

  it('runs the next call of a key after one that throws', async () => {
    const queue = new OnePerKey();
    const first = queue.run('a', async () => Promise.reject(new Error('boom')));
    const second = queue.run('a', async () => 'next');
    await expect(first).rejects.toThrow('boom');
    expect(await second).toBe('next');
  });
});
