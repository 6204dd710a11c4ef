/**
 * At most `max` calls of `run` in progress; the rest wait in order. A finishing call hands its
 * slot straight to the next waiter, so no newcomer can slip in between.
 */
export class Limit {
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(readonly max: number) {}

  async run<T>(f: () => Promise<T>): Promise<T> {
    if (this.#running < this.max) this.#running++;
    else await new Promise<void>((r) => this.#waiting.push(r));
    try {
      return await f();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}

/** One call of `run` at a time per key (a host), in order of arrival; a key with nothing queued is forgotten. */
export class OnePerKey {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, f: () => Promise<T>): Promise<T> {
    const run = (this.#tails.get(key) ?? Promise.resolve()).then(f, f);
    const tail = run.catch(() => undefined);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return run;
  }
}
