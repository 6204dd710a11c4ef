/**
 * The live scrape framework every live endpoint uses. An endpoint declares its parameters
 * (declare.ts: JSON Schema, from which the HTTP layer builds the route's querystring schema)
 * and how to read and parse its page(s); the framework owns the rest:
 *
 * - `limit` / `cursor` → 400 locked_parameter (live scrapes page with `page`);
 * - the checked parameters read and echoed in `query`, unsent ones null and defaults shown;
 * - one deadline for the call (504 timeout), fetch and parse failures and robot checks as 502
 *   scrape_failed with a detail, never a half-parsed 200;
 * - the envelope: engine, family, query, count, results, next_cursor (null).
 *
 * Metering (the charge, the concurrency slot behind 503 overloaded, refunds of 5xx) is the
 * HTTP layer's, as for every metered call.
 */
import { AppError } from '../errors.js';
import { CookieJar, type GetOptions, type HttpClient, type Page, type Robots } from '../net/index.js';
import type { Param } from './declare.js';
import { ScrapeError } from './scrape-error.js';
import type { ParsePool } from './parse-pool.js';

export type { Param } from './declare.js';

export interface LiveEndpoint<Q extends Record<string, unknown>, R> {
  engine: string;
  family: string;
  /**
   * Its query parameters beside `engine`, `page` among them where it pages (`pageParam`):
   * the route's querystring schema is built from these, defaults included.
   */
  params: { [K in keyof Q]-?: Param<NonNullable<Q[K]>> };
  /** Filters this engine pins, beside limit and cursor (publisher engines: `sources`), and why. */
  locked?: Record<string, string>;
  /** Cross-parameter rules (400 bad_request), on the checked values (unsent ones null). */
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

/**
 * 400 locked_parameter when `sent` (the names of the parameters a caller sent) holds `limit`,
 * `cursor` or a filter the engine pins: answered before any other check of the query.
 */
// biome-ignore lint/suspicious/noExplicitAny: any engine's endpoint; only its locked names are read
export function refuseLocked(endpoint: LiveEndpoint<any, unknown>, sent: Iterable<string>): void {
  const names = new Set(sent);
  for (const name of LOCKED) {
    if (names.has(name))
      throw new AppError('locked_parameter', `${name} is not taken by live scrapes: they page with \`page\`, and next_cursor is always null`);
  }
  for (const [name, why] of Object.entries(endpoint.locked ?? {})) {
    if (names.has(name)) throw new AppError('locked_parameter', `${name} is locked on engine=${endpoint.engine}: ${why}`);
  }
}

/**
 * Runs one call. `sent` holds the parameters the route's schema (built from `params`)
 * checked, typed, defaults filled in: each is read (`Param.read`), unsent ones become null, and
 * `check` sees them all.
 */
export async function runLive<Q extends Record<string, unknown>, R>(
  endpoint: LiveEndpoint<Q, R>,
  sent: Readonly<Record<string, unknown>>,
  fetcher: HttpClient,
  parsers: ParsePool,
): Promise<Envelope<R>> {
  const q: Record<string, unknown> = {};
  for (const [name, param] of Object.entries(endpoint.params as Record<string, Param<unknown>>)) {
    const value = sent[name];
    q[name] = value === undefined ? (param.schema.default ?? null) : param.read ? param.read(value, name) : value;
  }
  endpoint.check?.(q as Q);

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
    out = await endpoint.run(q as Q, call);
  } catch (e) {
    if (e instanceof ScrapeError) throw new AppError('scrape_failed', e.detail, { cause: e });
    if (e instanceof AppError) throw e;
    if (signal.aborted) throw new AppError('timeout', 'the scrape passed its deadline (LIVE_TIMEOUT_MS)', { cause: e });
    // A parser that throws on a page is a page it cannot read: never half a result.
    throw new AppError('scrape_failed', `the page could not be parsed: ${(e as Error).message}`, { cause: e });
  }
  const { results, extra } = Array.isArray(out) ? { results: out, extra: {} } : out;
  return {
    engine: endpoint.engine,
    family: endpoint.family,
    query: { engine: endpoint.engine, ...q },
    ...extra,
    count: results.length,
    results,
    next_cursor: null,
  };
}

/**
 * An upstream URL from its configured template: `{name}` placeholders filled with the
 * URL-encoded values (templates are checked at start-up by config.ts).
 */
export function fillTemplate(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (Object.hasOwn(values, name) ? encodeURIComponent(String(values[name])) : whole));
}
