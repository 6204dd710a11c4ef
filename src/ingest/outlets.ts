/**
 * Outlets: the news sites the service polls, kept in LMDB with their polling state (last
 * success, last error, failures and the next poll time for backoff) and the HTTP validators
 * (ETag / Last-Modified) of every feed and page fetched, so conditional GETs survive restarts.
 * An outlet's name is the `source` name its articles carry and `sources` filters take.
 */
import type { Database } from 'lmdb';
import type { Store } from '../store/index.js';

export interface OutletRecord {
  name: string;
  homepage: string;
  feeds: string[];
  fetchArticles: boolean;
  /** Seconds between polls. */
  intervalSec: number;
  enabled: boolean;
  createdAt: number;
  /** Unix seconds. */
  lastSuccessAt: number | null;
  lastError: { at: number; message: string } | null;
  /** Failed rounds in a row: the backoff exponent. */
  failures: number;
  /** Unix seconds; 0 = due now. */
  nextPollAt: number;
  /** BCP 47 language (`en`, `de`) and ISO 3166-1 country (`DE`), as given to `sources add`; absent when unknown. */
  language?: string | null;
  country?: string | null;
}

export interface Validators {
  etag: string | null;
  lastModified: string | null;
}

export class OutletError extends Error {
  readonly name = 'OutletError';
}

/** `5m`, `90s`, `1h`, `300` (seconds) → seconds; at least 10 s. */
export function parseInterval(raw: string): number {
  const m = /^(\d+)\s*(s|m|h)?$/.exec(raw.trim());
  if (!m) throw new OutletError(`interval "${raw}": use a number of seconds, or 30s, 5m, 1h`);
  const sec = Number(m[1]) * (m[2] === 'h' ? 3600 : m[2] === 'm' ? 60 : 1);
  if (sec < 10) throw new OutletError(`interval "${raw}": at least 10 seconds`);
  return sec;
}

const httpUrl = (raw: string, what: string): string => {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new OutletError(`${what} "${raw}" is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new OutletError(`${what} "${raw}" is not http(s)`);
  return u.toString();
};

export class Outlets {
  readonly db: Database<OutletRecord, string>;
  readonly validators: Database<Validators, string>;

  constructor(readonly store: Store) {
    this.db = store.root.openDB({ name: 'outlets' });
    this.validators = store.root.openDB({ name: 'httpValidators' });
  }

  add(o: { name: string; homepage: string; feeds: string[]; fetchArticles?: boolean; interval?: string; language?: string; country?: string }): OutletRecord {
    const name = o.name.trim();
    if (name === '' || name.length > 200) throw new OutletError('--name: 1 to 200 characters');
    if (o.language !== undefined && !/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/.test(o.language)) throw new OutletError('--language: a BCP 47 tag such as en or pt-BR');
    if (o.country !== undefined && !/^[A-Za-z]{2}$/.test(o.country)) throw new OutletError('--country: a two-letter ISO 3166-1 code such as DE');
    if (o.feeds.length === 0) throw new OutletError('give at least one --feed URL');
    const record: OutletRecord = {
      name,
      homepage: httpUrl(o.homepage, '--homepage'),
      feeds: [...new Set(o.feeds.map((f) => httpUrl(f, '--feed')))],
      fetchArticles: o.fetchArticles ?? false,
      intervalSec: parseInterval(o.interval ?? '5m'),
      enabled: true,
      createdAt: Math.floor(Date.now() / 1000),
      lastSuccessAt: null,
      lastError: null,
      failures: 0,
      nextPollAt: 0,
      language: o.language ?? null,
      country: o.country?.toUpperCase() ?? null,
    };
    return this.store.root.transactionSync(() => {
      if (this.db.get(name)) throw new OutletError(`an outlet named "${name}" exists already`);
      this.db.putSync(name, record);
      return record;
    });
  }

  get(name: string): OutletRecord | undefined {
    return this.db.get(name);
  }

  list(): OutletRecord[] {
    return [...this.db.getRange()].map((e) => e.value);
  }

  /** Changes an outlet in one transaction; false when there is no such outlet. */
  update(name: string, change: (o: OutletRecord) => OutletRecord): boolean {
    return this.store.root.transactionSync(() => {
      const o = this.db.get(name);
      if (!o) return false;
      this.db.putSync(name, change(o));
      return true;
    });
  }

  setEnabled(name: string, enabled: boolean): boolean {
    return this.update(name, (o) => ({ ...o, enabled, nextPollAt: 0 }));
  }

  /** Stops polling an outlet; its articles stay (they are part of the corpus). */
  remove(name: string): boolean {
    return this.store.root.transactionSync(() => {
      if (!this.db.get(name)) return false;
      this.db.removeSync(name);
      return true;
    });
  }
}
