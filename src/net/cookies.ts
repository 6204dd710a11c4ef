/** Cookies of one live call, by name (one site per call; path and expiry do not matter within it). */
export class CookieJar {
  readonly #cookies = new Map<string, string>();

  take(setCookie: string | string[] | undefined): void {
    for (const line of setCookie === undefined ? [] : Array.isArray(setCookie) ? setCookie : [setCookie]) {
      const pair = line.split(';', 1)[0];
      const eq = pair.indexOf('=');
      if (eq > 0) this.#cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  }

  header(): string | undefined {
    return this.#cookies.size ? [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ') : undefined;
  }

  get(name: string): string | undefined {
    return this.#cookies.get(name);
  }
}
