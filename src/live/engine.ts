/**
 * The live scrape framework every live endpoint uses. An endpoint declares its parameters,
 * its page rule and how to read and parse its page(s); the framework owns the rest:
 *
 * - `limit` / `cursor` → 400 locked_parameter (live scrapes page with `page`, spec 4.4);
 * - parameters parsed (400 bad_request naming the bad one) and echoed in `query`, unsent
 *   ones null and defaults shown;
 * - one deadline for the call (504 timeout), fetch and parse failures and robot checks as 502
 *   scrape_failed with a detail, never a half-parsed 200;
 * - the envelope of spec 2.1: engine, family, query, count, results, next_cursor (null).
 *
 * Metering (the charge, the concurrency slot behind 503 overloaded, refunds of 5xx) is the
 * HTTP layer's, as for every metered call.
 */
import { AppError } from '../errors.js';
import { bool, int, num, oneOf, text } from '../params.js';
import { CookieJar, type GetOptions, type HttpClient, type Page, type Robots } from '../net/index.js';
import { ScrapeError } from './page.js';
import type { ParsePool } from './parse-pool.js';

/** A parameter reader: the raw query-string value (undefined when unsent) to its value. */
export type ParamReader<T> = (raw: string | undefined, name: string) => T | undefined;

/** How an endpoint pages (spec 4.4): `page` from 1 to max, only 1, or passed on as given. */
export type PageRule = { max: number } | 'single' | 'forwarded';

export interface LiveEndpoint<Q extends Record<string, unknown>, R> {
  engine: string;
  family: string;
  params: { [K in keyof Q]-?: ParamReader<Q[K]> };
  /** Values of unsent parameters that have one (shown in the echo). */
  defaults: Partial<Q>;
  page: PageRule | null;
  /** Filters this engine pins, beside limit and cursor (publisher engines: `sources`), and why. */
  locked?: Record<string, string>;
  /** Cross-parameter rules (400 bad_request), after each parameter is read. */
  check?(q: Q): void;
  /**
   * Reads and parses the page(s): the results, or the results and fields the envelope carries
   * beside them. Throws ScrapeError when the page is not what it should be.
   */
  run(q: Q, call: LiveCall): Promise<R[] | { results: R[]; extra: Record<string, unknown> }>;
}

/** What `run` reads pages and robots.txt with (the call's deadline and cookie jar applied to every request) and parses them with (off the event loop). */
export interface LiveCall {
  get(url: string, opts?: GetOptions): Promise<Page>;
  robots(origin: string, opts?: Pick<GetOptions, 'untrusted'>): Promise<Robots>;
  parse: ParsePool['run'];
  jar: CookieJar;
}

export interface Envelope<R> {
  [extra: string]: unknown;
  engine: string;
  family: string;
  query: Record<string, unknown>;
  count: number;
  results: R[];
  next_cursor: null;
}

const LOCKED = ['limit', 'cursor'];

export const bad = (message: string) => new AppError('bad_parameter', message);

export async function runLive<Q extends Record<string, unknown>, R>(endpoint: LiveEndpoint<Q, R>, raw: Record<string, string | undefined>, fetcher: HttpClient, parsers: ParsePool): Promise<Envelope<R>> {
  for (const name of LOCKED) {
    if (raw[name] !== undefined) throw new AppError('locked_parameter', `${name} is not taken by live scrapes: they page with \`page\`, and next_cursor is always null`);
  }
  for (const [name, why] of Object.entries(endpoint.locked ?? {})) {
    if (raw[name] !== undefined) throw new AppError('locked_parameter', `${name} is locked on engine=${endpoint.engine}: ${why}`);
  }
  const unknown = Object.keys(raw).filter((k) => !Object.hasOwn(endpoint.params, k));
  if (unknown.length) throw bad(`unknown parameter ${unknown.map((k) => JSON.stringify(k)).join(', ')}`);
  const q = {} as Q;
  for (const name of Object.keys(endpoint.params) as (keyof Q & string)[]) {
    const value = endpoint.params[name](raw[name], name);
    q[name] = (value === undefined ? (endpoint.defaults[name] ?? null) : value) as Q[keyof Q & string];
  }
  const rule = endpoint.page;
  if (rule === 'single' && q.page !== 1) throw bad('page: this engine has a single page; page must be 1');
  if (rule && rule !== 'single' && rule !== 'forwarded' && (q.page as number) > rule.max) throw bad(`page: 1 to ${rule.max} for this engine`);
  endpoint.check?.(q);

  const signal = fetcher.deadline();
  const jar = new CookieJar();
  const call: LiveCall = {
    jar,
    get: (url, opts = {}) => fetcher.get(url, { ...opts, signal, jar }),
    robots: (origin, opts = {}) => fetcher.robots(origin, { ...opts, signal, jar }),
    parse: (name, ...args) => parsers.run(name, ...args),
  };
  let out: R[] | { results: R[]; extra: Record<string, unknown> };
  try {
    out = await endpoint.run(q, call);
  } catch (e) {
    if (e instanceof ScrapeError) throw new AppError('scrape_failed', e.detail, { cause: e });
    if (e instanceof AppError) throw e;
    if (signal.aborted) throw new AppError('timeout', 'the scrape passed its deadline (LIVE_TIMEOUT_MS)', { cause: e });
    // A parser that throws on a page is a page it cannot read: never half a result.
    throw new AppError('scrape_failed', `the page could not be parsed: ${(e as Error).message}`, { cause: e });
  }
  const { results, extra } = Array.isArray(out) ? { results: out, extra: {} } : out;
  return { engine: endpoint.engine, family: endpoint.family, query: { engine: endpoint.engine, ...q }, ...extra, count: results.length, results, next_cursor: null };
}

/**
 * An upstream URL from its configured template: `{name}` placeholders filled with the
 * URL-encoded values (templates are checked at start-up by config.ts).
 */
export function fillTemplate(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (Object.hasOwn(values, name) ? encodeURIComponent(String(values[name])) : whole));
}

// Parameter readers of live endpoints: the platform's (src/params.ts), curried.

export const stringParam =
  (max = 500): ParamReader<string> =>
  (raw, name) => {
    if (raw !== undefined && raw.trim() === '') throw bad(`${name}: empty`);
    return text(name, raw?.trim(), max);
  };

export const enumParam =
  <T extends string>(values: readonly T[]): ParamReader<T> =>
  (raw, name) =>
    oneOf(name, raw, values);

export const intParam =
  (min: number, max: number): ParamReader<number> =>
  (raw, name) =>
    int(name, raw, min, max);

export const numberParam =
  (min: number, max: number): ParamReader<number> =>
  (raw, name) =>
    num(name, raw, min, max);

export const trueParam: ParamReader<boolean> = (raw, name) => bool(name, raw);

export const patternParam =
  (re: RegExp, what: string): ParamReader<string> =>
  (raw, name) => {
    if (raw === undefined) return undefined;
    if (!re.test(raw)) throw bad(`${name}: ${what}, got ${JSON.stringify(raw)}`);
    return raw;
  };

/** An absolute http(s) URL a caller names (read as an untrusted target). */
export const urlParam: ParamReader<string> = (raw, name) => {
  if (raw === undefined) return undefined;
  const v = raw.trim();
  if (v.length > 2048 || !/^https?:\/\/[^/]/i.test(v) || !URL.canParse(v)) throw bad(`${name}: an absolute http(s) URL, got ${JSON.stringify(raw.slice(0, 100))}`);
  return new URL(v).href;
};

/** Requires parameters the reader let through as null (unsent). */
export function required<Q extends Record<string, unknown>>(q: Q, ...names: (keyof Q & string)[]): void {
  for (const name of names) if (q[name] === null) throw bad(`${name} is required`);
}
