/**
 * Polite HTTP GETs for feed polling, with undici: a deadline per request, a body-size cap,
 * redirects followed by hand up to a limit (each hop checked against robots.txt), a
 * descriptive User-Agent, conditional GET from stored validators, at most `concurrency`
 * requests in flight and one at a time per host. Failures are FetchErrors with a reason.
 *
 * Feeds are the operator's, but their item links and redirects are chosen by whoever writes
 * the feed: every request, each hop and robots.txt included, goes through the guarded client
 * of src/net and reaches public addresses only. With INGEST_ALLOW_PRIVATE, `privateFeeds`
 * names the operator's feed URLs, and their hosts (host and port) may be private too.
 */
import { Limit } from '../net/limit.js';
import { robotsParser } from '../live/robots.js';
import { isBlocked, Outbound } from '../net/index.js';
import type { Validators } from './outlets.js';

export interface FetcherOptions {
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  userAgent: string;
  concurrency: number;
  /**
   * INGEST_ALLOW_PRIVATE=on: the outlets' feed URLs. A URL on the host of one of them may reach
   * loopback and private addresses; any other host (an item link, a redirect elsewhere) may not.
   * Absent: every request reaches public addresses only.
   */
  privateFeeds?: () => Iterable<string>;
}

export type FetchResult =
  | { status: 200; url: string; body: Uint8Array; contentType: string | null; validators: Validators }
  | { status: 304; url: string };

/** What one request, redirects not followed, came to. */
type Hop =
  | { kind: 'redirect'; location: string }
  | { kind: 'not-modified' }
  | { kind: 'ok'; body: Uint8Array; contentType: string | null; validators: Validators };

export class FetchError extends Error {
  readonly name = 'FetchError';
  constructor(
    message: string,
    readonly url: string,
    options?: { cause?: unknown },
  ) {
    super(`${url}: ${message}`, options);
  }
}


/** robots.txt answers are kept this long per origin. */
const ROBOTS_TTL_MS = 3_600_000;
/** robots.txt larger than this is cut (RFC 9309 asks crawlers to read at least 500 KiB). */
const ROBOTS_MAX_BYTES = 512 * 1024;

export class Fetcher {
  readonly #net: Outbound;
  readonly #robots = new Map<string, { at: number; allowed: Promise<(url: string) => boolean> }>();
  readonly #hostChains = new Map<string, Promise<unknown>>();
  readonly #limit: Limit;

  constructor(readonly options: FetcherOptions) {
    this.#limit = new Limit(options.concurrency);
    this.#net = new Outbound({ timeoutMs: options.timeoutMs });
  }

  /** GETs `url` (conditionally when validators are given), following redirects. */
  async get(url: string, validators?: Validators | null): Promise<FetchResult> {
    let current = url;
    for (let hop = 0; ; hop++) {
      let r: Hop;
      try {
        if (!(await this.#allowed(current))) throw new FetchError('disallowed by robots.txt', current);
        r = await this.#once(current, hop === 0 ? validators : null, this.options.maxBytes);
      } catch (e) {
        // A redirect into a blocked host is the original URL's failure: say where it pointed.
        if (hop > 0 && isBlocked(e)) throw new FetchError(`redirected to ${current}, which is ${this.#blockedWhy()}`, url, { cause: e });
        throw e;
      }
      if (r.kind === 'redirect') {
        if (hop >= this.options.maxRedirects) throw new FetchError(`more than ${this.options.maxRedirects} redirects`, url);
        current = r.location;
        continue;
      }
      if (r.kind === 'not-modified') return { status: 304, url: current };
      return { status: 200, url: current, body: r.body, contentType: r.contentType, validators: r.validators };
    }
  }

  async close(): Promise<void> {
    await this.#net.close();
  }

  /** Whether `url` is on the host of one of the operator's feed URLs (INGEST_ALLOW_PRIVATE). */
  #mayBePrivate(url: string): boolean {
    if (!this.options.privateFeeds) return false;
    const host = new URL(url).host;
    for (const feed of this.options.privateFeeds()) if (URL.canParse(feed) && new URL(feed).host === host) return true;
    return false;
  }

  #blockedWhy(): string {
    return `blocked: the host is a private address or resolves to one (${this.options.privateFeeds ? 'INGEST_ALLOW_PRIVATE covers only the hosts of the outlets\' feed URLs' : 'INGEST_ALLOW_PRIVATE is off'})`;
  }

  /** One request, without following redirects, in the global and per-host queues. */
  async #once(
    url: string,
    validators: Validators | null | undefined,
    maxBytes: number,
  ): Promise<Hop> {
    const host = new URL(url).host;
    return this.#perHost(host, () =>
      this.#limit.run(async () => {
        const headers: Record<string, string> = { 'user-agent': this.options.userAgent, accept: '*/*', 'accept-encoding': 'identity' };
        if (validators?.etag) headers['if-none-match'] = validators.etag;
        if (validators?.lastModified) headers['if-modified-since'] = validators.lastModified;
        let res: Awaited<ReturnType<Outbound['send']>>;
        try {
          res = await this.#net.send(url, { headers, signal: AbortSignal.timeout(this.options.timeoutMs), allowPrivate: this.#mayBePrivate(url) });
        } catch (e) {
          throw new FetchError(isBlocked(e) ? this.#blockedWhy() : reason(e, this.options.timeoutMs), url, { cause: e });
        }
        const header = (name: string): string | null => {
          const v = res.headers[name];
          return typeof v === 'string' ? v : Array.isArray(v) ? v[0] : null;
        };
        if (res.statusCode >= 300 && res.statusCode < 400 && res.statusCode !== 304) {
          await res.body.dump();
          const location = header('location');
          if (!location) throw new FetchError(`HTTP ${res.statusCode} without a Location`, url);
          return { kind: 'redirect' as const, location: new URL(location, url).toString() };
        }
        if (res.statusCode === 304) {
          await res.body.dump();
          return { kind: 'not-modified' as const };
        }
        if (res.statusCode !== 200) {
          await res.body.dump();
          throw new FetchError(`HTTP ${res.statusCode}`, url);
        }
        const declared = Number(header('content-length'));
        if (declared > maxBytes) {
          // Destroying the body makes undici emit 'error' on it: listen, or the process dies.
          res.body.on('error', () => undefined).destroy();
          throw new FetchError(`body of ${declared} bytes is over the ${maxBytes}-byte cap`, url);
        }
        const chunks: Buffer[] = [];
        let size = 0;
        try {
          for await (const chunk of res.body) {
            size += (chunk as Buffer).length;
            if (size > maxBytes) {
              res.body.on('error', () => undefined).destroy();
              throw new FetchError(`body is over the ${maxBytes}-byte cap`, url);
            }
            chunks.push(chunk as Buffer);
          }
        } catch (e) {
          if (e instanceof FetchError) throw e;
          throw new FetchError(reason(e, this.options.timeoutMs), url, { cause: e });
        }
        return {
          kind: 'ok' as const,
          body: Buffer.concat(chunks),
          contentType: header('content-type'),
          validators: { etag: header('etag'), lastModified: header('last-modified') },
        };
      }),
    );
  }

  /**
   * robots.txt of the URL's origin, cached: missing (4xx) allows all; unreachable (5xx, network)
   * disallows (RFC 9309). A blocked origin throws the refusal for `url`, and is not cached.
   */
  async #allowed(url: string): Promise<boolean> {
    const origin = new URL(url).origin;
    let cached = this.#robots.get(origin);
    if (!cached || Date.now() - cached.at >= ROBOTS_TTL_MS) {
      // The promise is cached, so concurrent requests to one origin read robots.txt once.
      cached = { at: Date.now(), allowed: this.#readRobots(origin) };
      this.#robots.set(origin, cached);
    }
    try {
      return (await cached.allowed)(url);
    } catch (e) {
      if (this.#robots.get(origin) === cached) this.#robots.delete(origin);
      throw isBlocked(e) ? new FetchError(this.#blockedWhy(), url, { cause: e }) : e;
    }
  }

  async #readRobots(origin: string): Promise<(url: string) => boolean> {
    const robotsUrl = `${origin}/robots.txt`;
    let allowed: (u: string) => boolean;
    try {
      let r = await this.#once(robotsUrl, null, ROBOTS_MAX_BYTES);
      // One redirect is followed (http → https is common); more is treated as no robots.txt.
      if (r.kind === 'redirect') r = await this.#once(r.location, null, ROBOTS_MAX_BYTES);
      if (r.kind === 'ok') {
        const robot = robotsParser(robotsUrl, Buffer.from(r.body).toString('utf8'));
        allowed = (u) => robot.isAllowed(u, this.options.userAgent) !== false;
      } else allowed = () => true;
    } catch (e) {
      // Not "unreachable": the host may not be reached at all, so neither may the page.
      if (isBlocked(e)) throw e;
      const status = e instanceof FetchError ? /HTTP (\d+)/.exec(e.message)?.[1] : undefined;
      if (status && Number(status) >= 400 && Number(status) < 500) allowed = () => true;
      else allowed = () => false;
    }
    return allowed;
  }

  /** Runs `f` after every earlier request to the same host: one at a time per host. */
  #perHost<T>(host: string, f: () => Promise<T>): Promise<T> {
    const prev = this.#hostChains.get(host) ?? Promise.resolve();
    const run = prev.then(f, f);
    const tail = run.catch(() => undefined);
    this.#hostChains.set(host, tail);
    void tail.then(() => {
      if (this.#hostChains.get(host) === tail) this.#hostChains.delete(host);
    });
    return run;
  }

}

function reason(e: unknown, timeoutMs: number): string {
  const err = e as { name?: string; code?: string; message?: string };
  if (err.name === 'TimeoutError' || err.name === 'AbortError' || err.code === 'UND_ERR_HEADERS_TIMEOUT' || err.code === 'UND_ERR_BODY_TIMEOUT' || err.code === 'UND_ERR_CONNECT_TIMEOUT') {
    return `no answer within ${timeoutMs} ms`;
  }
  return err.code ? `${err.code}: ${err.message}` : (err.message ?? String(e));
}
