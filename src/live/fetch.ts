/**
 * How a live scrape reads public pages, with undici: one deadline for the whole call (every
 * page it reads), a body cap, browser-like headers, an optional HTTP(S) proxy, and a cookie
 * jar per call (a delivery-location session is cookies). Failures are the catalogue's: 504
 * `timeout` past the deadline, 502 `scrape_failed` with a detail for the rest.
 */
import { Agent, ProxyAgent, request, type Dispatcher } from 'undici';
import { AppError } from '../errors.js';

export interface LiveFetchOptions {
  timeoutMs: number;
  maxBytes: number;
  userAgent: string;
  proxyUrl?: string;
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
}

export class LiveFetcher {
  readonly #dispatcher: Dispatcher;

  constructor(readonly options: LiveFetchOptions) {
    const timeouts = { headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs, connectTimeout: options.timeoutMs };
    this.#dispatcher = options.proxyUrl ? new ProxyAgent({ uri: options.proxyUrl, ...timeouts }) : new Agent(timeouts);
  }

  /** A deadline for one call: pass its signal to every read of the call. */
  deadline(): AbortSignal {
    return AbortSignal.timeout(this.options.timeoutMs);
  }

  /**
   * Reads one page (following redirects on the same site), as a browser would ask for it.
   * Anything but a 2xx HTML page within the deadline and the size cap throws.
   */
  async get(url: string, ctx: { signal: AbortSignal; jar: CookieJar; method?: 'GET' | 'POST'; body?: string; contentType?: string; accept404?: boolean }): Promise<Page> {
    let at = url;
    for (let hop = 0; ; hop++) {
      const res = await this.#send(at, ctx);
      ctx.jar.take(res.headers['set-cookie']);
      if (res.statusCode >= 300 && res.statusCode < 400 && typeof res.headers.location === 'string') {
        await res.body.dump();
        const next = new URL(res.headers.location, at);
        if (hop >= MAX_REDIRECTS) throw scrapeFailed(`${url}: more than ${MAX_REDIRECTS} redirects`);
        if (next.host !== new URL(url).host) throw scrapeFailed(`${url}: redirected off the site, to ${next.host}`);
        at = next.href;
        ctx = { ...ctx, method: 'GET', body: undefined };
        continue;
      }
      const html = await this.#read(res, at, ctx.signal);
      if (res.statusCode === 404 && ctx.accept404) return { url: at, status: 404, html };
      if (res.statusCode === 503 || res.statusCode === 429) throw scrapeFailed(`${at}: the site answered ${res.statusCode} (throttled or a robot check)`);
      if (res.statusCode < 200 || res.statusCode >= 300) throw scrapeFailed(`${at}: the site answered HTTP ${res.statusCode}`);
      return { url: at, status: res.statusCode, html };
    }
  }

  async #send(url: string, ctx: { signal: AbortSignal; jar: CookieJar; method?: 'GET' | 'POST'; body?: string; contentType?: string }): Promise<Dispatcher.ResponseData> {
    try {
      return await request(url, {
        method: ctx.method ?? 'GET',
        body: ctx.body,
        dispatcher: this.#dispatcher,
        signal: ctx.signal,
        headers: {
          'user-agent': this.options.userAgent,
          accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
          'accept-language': 'en-US,en;q=0.9',
          ...(ctx.contentType ? { 'content-type': ctx.contentType } : {}),
          ...(ctx.jar.header() ? { cookie: ctx.jar.header() } : {}),
        },
      });
    } catch (e) {
      throw translate(e, url, ctx.signal);
    }
  }

  async #read(res: Dispatcher.ResponseData, url: string, signal: AbortSignal): Promise<string> {
    const declared = Number(res.headers['content-length']);
    if (declared > this.options.maxBytes) {
      res.body.destroy();
      throw scrapeFailed(`${url}: the page is ${declared} bytes, over LIVE_MAX_BYTES (${this.options.maxBytes})`);
    }
    const parts: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        size += chunk.length;
        if (size > this.options.maxBytes) {
          res.body.destroy();
          throw scrapeFailed(`${url}: the page is over LIVE_MAX_BYTES (${this.options.maxBytes})`);
        }
        parts.push(chunk as Buffer);
      }
    } catch (e) {
      throw translate(e, url, signal);
    }
    return Buffer.concat(parts).toString('utf8');
  }

  async close(): Promise<void> {
    await this.#dispatcher.close();
  }
}

const scrapeFailed = (detail: string) => new AppError('scrape_failed', detail);

function translate(e: unknown, url: string, signal: AbortSignal): AppError {
  if (e instanceof AppError) return e;
  if (signal.aborted) return new AppError('timeout', `the scrape of ${url} passed its deadline (LIVE_TIMEOUT_MS)`);
  const err = e as { code?: string; message?: string };
  if (err.code === 'UND_ERR_HEADERS_TIMEOUT' || err.code === 'UND_ERR_BODY_TIMEOUT' || err.code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new AppError('timeout', `the scrape of ${url} passed its deadline (LIVE_TIMEOUT_MS)`);
  }
  return scrapeFailed(`${url}: ${err.code ?? 'fetch failed'}${err.message ? ` (${err.message})` : ''}`);
}
