/**
 * How a live scrape reads public pages, with undici: one deadline for the whole call (every
 * page it reads), a body cap, browser-like headers, an optional HTTP(S) proxy, and a cookie
 * jar per call (a delivery-location session is cookies). Failures are the catalogue's: 504
 * `timeout` past the deadline, 502 `scrape_failed` with a detail for the rest. Every read,
 * every redirect hop included, goes through the guarded client of src/net: a URL a caller named
 * reaches public addresses only (unless LIVE_ALLOW_PRIVATE), directly or through the proxy.
 */
import type { Dispatcher } from 'undici';
import { AppError } from '../errors.js';
import { isBlocked, Outbound } from '../net/index.js';

export interface LiveFetchOptions {
  timeoutMs: number;
  maxBytes: number;
  userAgent: string;
  proxyUrl?: string;
  /** Whether caller-named targets (`untrusted` reads) may reach loopback and private addresses. */
  allowPrivate?: boolean;
}

const MAX_REDIRECTS = 5;

/** Cookies of one call, by name (one site per call; path and expiry do not matter within it). */
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

export interface Page {
  url: string;
  status: number;
  html: string;
  /** Set when `cutAt` stopped the read: the page is its first `cutAt` bytes. */
  truncated?: boolean;
  /** Set when `offSite: 'stop'` stopped at a redirect off the site: where it pointed. */
  redirectedTo?: string;
}

/** How one read goes beyond the defaults. */
export interface GetOptions {
  method?: 'GET' | 'POST';
  body?: string;
  contentType?: string;
  /** A 404 is a page (the caller tells "not found" from a failure), not a throw. */
  accept404?: boolean;
  /** Any final status is a page, not a throw (robots.txt: 4xx means no rules). */
  anyStatus?: boolean;
  /** Read at most this many bytes and keep them, instead of failing over LIVE_MAX_BYTES. */
  cutAt?: number;
  /** A redirect off the site is answered as a page with `redirectedTo`, not a throw. */
  offSite?: 'stop';
  /** The caller named this URL: unless LIVE_ALLOW_PRIVATE, it may not reach private addresses. */
  untrusted?: boolean;
}

/** One site: the same host, a leading `www.` aside (example.com and www.example.com). */
export const sameSite = (a: URL, b: URL): boolean => a.host.replace(/^www\./, '') === b.host.replace(/^www\./, '');

export class LiveFetcher {
  readonly #net: Outbound;

  constructor(readonly options: LiveFetchOptions) {
    this.#net = new Outbound({ timeoutMs: options.timeoutMs, proxyUrl: options.proxyUrl });
  }

  /** A deadline for one call: pass its signal to every read of the call. */
  deadline(): AbortSignal {
    return AbortSignal.timeout(this.options.timeoutMs);
  }

  /**
   * Reads one page (following redirects on the same site), as a browser would ask for it.
   * Anything but a 2xx HTML page within the deadline and the size cap throws.
   */
  async get(url: string, ctx: GetOptions & { signal: AbortSignal; jar: CookieJar }): Promise<Page> {
    let at = url;
    for (let hop = 0; ; hop++) {
      const res = await this.#send(at, ctx);
      ctx.jar.take(res.headers['set-cookie']);
      if (res.statusCode >= 300 && res.statusCode < 400 && typeof res.headers.location === 'string') {
        await res.body.dump();
        const next = new URL(res.headers.location, at);
        if (hop >= MAX_REDIRECTS) throw scrapeFailed(`${url}: more than ${MAX_REDIRECTS} redirects`);
        if (!sameSite(next, new URL(url))) {
          if (ctx.offSite === 'stop') return { url: at, status: res.statusCode, html: '', redirectedTo: next.href };
          throw scrapeFailed(`${url}: redirected off the site, to ${next.host}`);
        }
        at = next.href;
        ctx = { ...ctx, method: 'GET', body: undefined };
        continue;
      }
      const { html, truncated } = await this.#read(res, at, ctx.signal, ctx.cutAt);
      const page: Page = truncated ? { url: at, status: res.statusCode, html, truncated } : { url: at, status: res.statusCode, html };
      if (ctx.anyStatus || (res.statusCode === 404 && ctx.accept404)) return page;
      if (res.statusCode === 503 || res.statusCode === 429) throw scrapeFailed(`${at}: the site answered ${res.statusCode} (throttled or a robot check)`);
      if (res.statusCode < 200 || res.statusCode >= 300) throw scrapeFailed(`${at}: the site answered HTTP ${res.statusCode}`);
      return page;
    }
  }

  async #send(url: string, ctx: GetOptions & { signal: AbortSignal; jar: CookieJar }): Promise<Dispatcher.ResponseData> {
    try {
      return await this.#net.send(url, {
        method: ctx.method ?? 'GET',
        body: ctx.body,
        signal: ctx.signal,
        // The configured upstreams are the operator's; only what a caller names must be public.
        allowPrivate: !ctx.untrusted || this.options.allowPrivate,
        headers: {
          'user-agent': this.options.userAgent,
          accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
          'accept-language': 'en-US,en;q=0.9',
          ...(ctx.contentType ? { 'content-type': ctx.contentType } : {}),
          ...(ctx.jar.header() ? { cookie: ctx.jar.header()! } : {}),
        },
      });
    } catch (e) {
      throw translate(e, url, ctx.signal, 'could not connect');
    }
  }

  async #read(res: Dispatcher.ResponseData, url: string, signal: AbortSignal, cutAt?: number): Promise<{ html: string; truncated: boolean }> {
    // Destroying a body makes undici emit 'error' on it: listen, or the process dies.
    const stop = () => res.body.on('error', () => undefined).destroy();
    const declared = Number(res.headers['content-length']);
    if (cutAt === undefined && declared > this.options.maxBytes) {
      stop();
      throw scrapeFailed(`${url}: the page is ${declared} bytes, over LIVE_MAX_BYTES (${this.options.maxBytes})`);
    }
    const cap = Math.min(cutAt ?? Infinity, this.options.maxBytes);
    const parts: Buffer[] = [];
    let size = 0;
    let truncated = false;
    try {
      for await (const chunk of res.body) {
        const room = cap - size;
        if ((chunk as Buffer).length > room) {
          if (cutAt === undefined) {
            stop();
            throw scrapeFailed(`${url}: the page is over LIVE_MAX_BYTES (${this.options.maxBytes})`);
          }
          parts.push((chunk as Buffer).subarray(0, room));
          size = cap;
          truncated = true;
          stop();
          break;
        }
        size += (chunk as Buffer).length;
        parts.push(chunk as Buffer);
      }
    } catch (e) {
      throw translate(e, url, signal, 'the connection broke off');
    }
    // A cut may split a UTF-8 sequence: the decoder replaces the tail, which the parsers ignore.
    return { html: Buffer.concat(parts).toString('utf8'), truncated };
  }

  async close(): Promise<void> {
    await this.#net.close();
  }
}

const scrapeFailed = (detail: string, cause?: unknown) => new AppError('scrape_failed', detail, { cause });

/**
 * A failed read as the caller sees it. Neither what a name resolved to nor why a connection
 * failed (refused, unknown name, reset) is said: either would map the operator's network for
 * whoever names internal hosts. The cause stays on the error for the log.
 */
function translate(e: unknown, url: string, signal: AbortSignal, failed: string): AppError {
  if (e instanceof AppError) return e;
  if (signal.aborted) return new AppError('timeout', `the scrape of ${url} passed its deadline (LIVE_TIMEOUT_MS)`, { cause: e });
  if (isBlocked(e)) return scrapeFailed(`${url}: blocked, the host is a private address or resolves to one (LIVE_ALLOW_PRIVATE is off)`, e);
  const code = (e as { code?: string }).code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new AppError('timeout', `the scrape of ${url} passed its deadline (LIVE_TIMEOUT_MS)`, { cause: e });
  }
  return scrapeFailed(`${url}: ${failed}`, e);
}
