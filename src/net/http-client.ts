/**
 * The one outbound HTTP client. Every read of a site the service does not run goes through
 * `HttpClient.get`, and every webhook delivery through `HttpClient.post`, under a policy
 * (policies.ts: polite polling, live scraping, the model hub, webhook delivery); the mechanics
 * are the same for all:
 *
 * - redirects are followed here, each hop a new guarded request (outbound.ts: the address is
 *   checked where the socket connects, or before the proxy's CONNECT), counted against the
 *   policy's limit, kept on the site where the policy says so, and checked against robots.txt
 *   where the policy enforces it; after a redirect a POST becomes a GET. (undici's redirect
 *   interceptor follows a hop inside the dispatcher, where neither the robots check, the
 *   per-host queue, the proxy's checked CONNECT nor the cookie jar would see it.)
 * - each request has the policy's deadline from when it leaves the queue; a call that reads
 *   several pages passes one deadline for all of them (`deadline()`);
 * - a body over the cap, declared or streamed, fails the read, unless the read asks for it cut;
 *   the body is kept as bytes and decoded as UTF-8 text on demand (`html`), or, for a download
 *   larger than memory (`stream`), handed on as it arrives, with a `Range` to resume from;
 * - at most `concurrency` requests in flight and one at a time per host (limit.ts);
 * - robots.txt (robots.ts) is read through this same client, under the same policy;
 * - a call's cookie jar (cookies.ts) is sent with every request and takes every answer's
 *   cookies, redirects included.
 *
 * Failures are worded by the policy (`policy.error`): the catalogue's codes for live scrapes,
 * FetchError for the poller.
 */
import type { Dispatcher } from 'undici';
import type { CookieJar } from './cookies.js';
import { isBlocked } from './guard.js';
import { Limit, OnePerKey } from './limit.js';
import { Outbound } from './outbound.js';
import type { Failure, Policy } from './policies.js';
import { Robots, ROBOTS_MAX_BYTES } from './robots.js';

/** How a streamed read (`stream`) goes beyond the policy's defaults. */
export interface StreamOptions {
  /** Ask for the body from this byte on (`Range: bytes=N-`); the head says whether it was honoured (206) or not (200). */
  from?: number;
  /** Largest body read (default: the policy's cap); past it the read fails as over the cap. */
  maxBytes?: number;
  /** Ends the read wherever it is (before the headers or between chunks). */
  signal?: AbortSignal;
}

/** A streamed answer's head. */
export interface StreamHead {
  /** Where the body comes from, redirects followed. */
  url: string;
  /** 200, or 206 for an honoured range. */
  status: number;
  /** Content-Length of this answer (of the range, for a 206); null when not declared. */
  length: number | null;
  /** A 206's Content-Range: its first byte and the whole size (null when `*`). */
  range: { start: number; size: number | null } | null;
}

/** A conditional GET's validators: the ETag and Last-Modified of the copy held. */
export interface Validators {
  etag: string | null;
  lastModified: string | null;
}

/** How one read goes beyond the policy's defaults. */
export interface GetOptions {
  method?: 'GET' | 'POST';
  body?: string;
  contentType?: string;
  /** A 404 is a page (the caller tells "not found" from a failure), not a throw. */
  accept404?: boolean;
  /** Any final status is a page, not a throw (robots.txt: 4xx means no rules). */
  anyStatus?: boolean;
  /** Read at most this many bytes and keep them, instead of failing over the policy's cap. */
  cutAt?: number;
  /** A redirect off the site is answered as a page with `redirectedTo`, not a throw. */
  offSite?: 'stop';
  /** A live call's caller named this URL: the policy says whether it may reach private addresses. */
  untrusted?: boolean;
  /** Conditional GET: the first request carries these (If-None-Match, If-Modified-Since). */
  validators?: Partial<Validators> | null;
  /** A whole call's deadline (`deadline()`), beside each request's own. */
  signal?: AbortSignal;
  /** A call's cookies: sent with every request; every answer's Set-Cookie is taken. */
  jar?: CookieJar;
}

export interface Page {
  /** Where the body came from, redirects followed. */
  url: string;
  status: number;
  body: Uint8Array;
  /** The body as UTF-8 (decoded when first read; a cut may split a sequence, whose tail the decoder replaces). */
  readonly html: string;
  contentType: string | null;
  /** This answer's validators, for the next conditional GET. */
  validators: Validators;
  /** Set when `cutAt` stopped the read: the body is its first `cutAt` bytes. */
  truncated?: boolean;
  /** Set when `offSite: 'stop'` stopped at a redirect off the site: where it pointed. */
  redirectedTo?: string;
}

/** A POST (`post`): a body sent as it is, to one URL, no redirect followed. */
export interface PostRequest {
  body: string | Buffer;
  /** Beside the policy's (user agent…); a name given here in any case replaces the policy's. */
  headers: Record<string, string>;
  /** A whole call's deadline, beside the request's own. */
  signal?: AbortSignal;
  /** A caller named this URL: the policy says whether it may reach private addresses. */
  untrusted?: boolean;
}

/** A POST's answer, whatever its status (a 3xx too: its Location is not followed). */
export interface PostAnswer {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  /** The body's first `policy.maxBytes` bytes. */
  body: Buffer;
  /** Set when the body was longer and cut at the cap. */
  truncated: boolean;
}

/** One site: the same host, a leading `www.` aside (example.com and www.example.com). */
const sameSite = (a: URL, b: URL): boolean => a.host.replace(/^www\./, '') === b.host.replace(/^www\./, '');

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** A failure inside the client, worded by the policy only where it leaves (`get`, `robots`). */
class ReadFailed extends Error {
  constructor(readonly failure: Failure) {
    super(failure.reason, { cause: failure.cause });
  }
}

type Where = { url: string; at: string; hop: number };
/** A read inside the client: a `get`'s options, or a `stream`'s. */
type Read = GetOptions & Pick<StreamOptions, 'from' | 'maxBytes'>;
/** One request's outcome: what the read makes of the answer, or where it redirects to. */
type Hop<T> = { done: T } | { location: string; status: number };
/** A sent request: where it redirects to, or the answer, its body unread. */
type Sent = { location: string; status: number } | { res: Dispatcher.ResponseData; header: (name: string) => string | null };

export class HttpClient {
  readonly #net: Outbound;
  readonly #limit: Limit | null;
  readonly #perHost = new OnePerKey();
  readonly #robots = new Map<string, { at: number; robots: Promise<Robots> }>();

  constructor(readonly policy: Policy) {
    this.#net = new Outbound({ timeoutMs: policy.timeoutMs, proxyUrl: policy.proxyUrl });
    this.#limit = policy.concurrency ? new Limit(policy.concurrency) : null;
  }

  /** A deadline for one call: pass it as `signal` to every read of the call. */
  deadline(): AbortSignal {
    return AbortSignal.timeout(this.policy.timeoutMs);
  }

  /**
   * Reads `url`, following redirects. A final status the policy does not accept (nor the read),
   * a body over the cap, a blocked target, a redirect past the limit or off the site, robots.txt
   * (where enforced) and the deadline each throw the policy's error.
   */
  get(url: string, read: GetOptions = {}): Promise<Page> {
    return this.#worded(this.#get(url, read, true));
  }

  /**
   * POSTs `body` to `url` once: the same guard (checked where the socket connects), deadline
   * and queue as `get`, but no redirect is followed and no robots.txt read (a receiver asked
   * for these requests). Any status is an answer; its body is read up to the policy's cap
   * and cut there. A blocked target, no answer and the deadline throw the policy's error.
   */
  post(url: string, req: PostRequest): Promise<PostAnswer> {
    return this.#worded(this.#post(url, req));
  }

  /** The robots.txt rules of `origin`, read now (with a call's deadline and cookies), as the policy reads them. */
  robots(origin: string, read: Pick<GetOptions, 'signal' | 'jar' | 'untrusted'> = {}): Promise<Robots> {
    return this.#worded(this.#readRobots(origin, read));
  }

  async close(): Promise<void> {
    await this.#net.close();
  }

  /** `p`, its failure in the policy's words. */
  async #worded<T>(p: Promise<T>): Promise<T> {
    try {
      return await p;
    } catch (e) {
      throw e instanceof ReadFailed ? this.policy.error(e.failure) : e;
    }
  }

  /**
   * Reads `url` as `get` does (redirects, the guard, the policy's statuses), but hands the body
   * to `consume` as it arrives instead of holding it: a download larger than memory. The
   * policy's deadline covers the connection and the headers; after them only a gap between
   * chunks longer than it fails the read (undici's bodyTimeout), so a large body takes as long
   * as it needs. The body counts against the cap as it streams. A failure of the request or of
   * the body is worded by the policy; what `consume` throws passes through as it is.
   */
  stream<T>(url: string, read: StreamOptions, consume: (head: StreamHead, body: AsyncIterable<Buffer>) => Promise<T>): Promise<T> {
    const hop = (r: Read, where: Where) => this.#streamOnce(r, where, consume);
    return this.#worded(
      this.#follow(url, { signal: read.signal, from: read.from, maxBytes: read.maxBytes }, true, hop, () => {
        throw new Error('unreachable: a stream never stops at a redirect');
      }),
    );
  }

  async #post(url: string, req: PostRequest): Promise<PostAnswer> {
    const where: Where = { url, at: url, hop: 0 };
    const headers = { ...this.policy.headers };
    for (const [name, value] of Object.entries(req.headers)) headers[name.toLowerCase()] = value;
    return this.#queued(new URL(url).host, async () => {
      const own = AbortSignal.timeout(this.policy.timeoutMs);
      const signal = req.signal ? AbortSignal.any([req.signal, own]) : own;
      let res: Dispatcher.ResponseData;
      try {
        res = await this.#net.send(url, {
          method: 'POST',
          body: req.body,
          signal,
          headers,
          allowPrivate: this.policy.mayBePrivate(new URL(url), req.untrusted === true),
        });
      } catch (e) {
        throw failed(e, signal, where, 'connect');
      }
      const { body, truncated } = await this.#body(res, Number(res.headers['content-length']), this.policy.maxBytes, signal, where);
      return { status: res.statusCode, headers: res.headers, body, truncated };
    });
  }

  #get(url: string, read: GetOptions, checkRobots: boolean): Promise<Page> {
    const stopped = (at: string, status: number, to: string) => page(at, status, Buffer.alloc(0), () => null, { redirectedTo: to });
    return this.#follow(url, read, checkRobots, (r, where) => this.#once(r, where), stopped);
  }

  /** Follows redirects from `url`, one `hop` a request; `stopped` answers a redirect off the site that the read asks to stop at. */
  async #follow<T>(
    url: string,
    read: Read,
    checkRobots: boolean,
    hop: (read: Read, where: Where) => Promise<Hop<T>>,
    stopped: (at: string, status: number, to: string) => T,
  ): Promise<T> {
    const { maxRedirects, sameSiteRedirects } = this.policy;
    let at = url;
    for (let n = 0; ; n++) {
      const where = { url, at, hop: n };
      if (checkRobots && this.policy.robots.everyRequest) await this.#allowed(where);
      const r = await this.#queued(new URL(at).host, () => hop(read, where));
      if ('done' in r) return r.done;
      const next = new URL(r.location);
      if (n >= maxRedirects) throw new ReadFailed({ reason: 'redirects', ...where });
      if (sameSiteRedirects && !sameSite(next, new URL(url))) {
        if (read.offSite === 'stop') return stopped(at, r.status, next.href);
        throw new ReadFailed({ reason: 'off_site', to: next.host, ...where });
      }
      at = next.href;
      read = { ...read, method: 'GET', body: undefined, contentType: undefined, validators: null };
    }
  }

  /** One request, redirects not followed: the page, or where it redirects to. */
  async #once(read: Read, where: Where): Promise<Hop<Page>> {
    const own = AbortSignal.timeout(this.policy.timeoutMs);
    const signal = read.signal ? AbortSignal.any([read.signal, own]) : own;
    const sent = await this.#send(read, where, signal);
    if (!('res' in sent)) return sent;
    const { res, header } = sent;
    const { body, truncated } = await this.#body(res, Number(header('content-length')), read.cutAt, signal, where);
    return { done: page(where.at, res.statusCode, body, header, truncated ? { truncated } : {}) };
  }

  /** One streamed request, redirects not followed: what `consume` made of the body, or where it redirects to. */
  async #streamOnce<T>(read: Read, where: Where, consume: (head: StreamHead, body: AsyncIterable<Buffer>) => Promise<T>): Promise<Hop<T>> {
    // The deadline ends at the headers; the body's gaps are undici's bodyTimeout (Outbound).
    const headers = new AbortController();
    const timer = setTimeout(() => headers.abort(new DOMException('headers deadline', 'TimeoutError')), this.policy.timeoutMs);
    const signal = read.signal ? AbortSignal.any([read.signal, headers.signal]) : headers.signal;
    let sent: Sent;
    try {
      sent = await this.#send(read, where, signal);
    } finally {
      clearTimeout(timer);
    }
    if (!('res' in sent)) return sent;
    const { res, header } = sent;
    const cap = read.maxBytes ?? this.policy.maxBytes;
    const declared = header('content-length') === null ? null : Number(header('content-length'));
    // Destroying a body makes undici emit 'error' on it: listen, or the process dies.
    res.body.on('error', () => undefined);
    if (declared !== null && declared > cap) {
      res.body.destroy();
      throw new ReadFailed({ reason: 'too_large', cap, declared, ...where });
    }
    const range = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(header('content-range') ?? '');
    const head: StreamHead = {
      url: where.at,
      status: res.statusCode,
      length: declared,
      range: res.statusCode === 206 && range ? { start: Number(range[1]), size: range[2] === '*' ? null : Number(range[2]) } : null,
    };
    try {
      return { done: await consume(head, counted(res, cap, signal, where)) };
    } finally {
      res.body.destroy();
    }
  }

  /** Sends one request: where it redirects to, or the answer (body unread) with a status the policy or the read takes. */
  async #send(read: Read, where: Where, signal: AbortSignal): Promise<Sent> {
    const { at } = where;
    let res: Dispatcher.ResponseData;
    try {
      res = await this.#net.send(at, {
        method: read.method ?? 'GET',
        body: read.body,
        signal,
        headers: this.#headers(read),
        allowPrivate: this.policy.mayBePrivate(new URL(at), read.untrusted === true),
      });
    } catch (e) {
      throw failed(e, signal, where, 'connect');
    }
    read.jar?.take(res.headers['set-cookie']);
    const header = (name: string): string | null => {
      const v = res.headers[name];
      return typeof v === 'string' ? v : Array.isArray(v) ? v[0] : null;
    };
    const { statusCode: status } = res;
    const location = header('location');
    if (status >= 300 && status < 400 && status !== 304 && location !== null && URL.canParse(location, at)) {
      await res.body.dump();
      return { location: new URL(location, at).href, status };
    }
    if (!read.anyStatus && !this.policy.accepts(status) && !(status === 404 && read.accept404)) {
      await res.body.dump();
      throw new ReadFailed({ reason: 'status', status, ...where });
    }
    return { res, header };
  }

  async #body(
    res: Dispatcher.ResponseData,
    declared: number,
    cutAt: number | undefined,
    signal: AbortSignal,
    where: Where,
  ): Promise<{ body: Buffer; truncated: boolean }> {
    // Destroying a body makes undici emit 'error' on it: listen, or the process dies.
    const stop = () => res.body.on('error', () => undefined).destroy();
    const cap = Math.min(cutAt ?? Infinity, this.policy.maxBytes);
    if (cutAt === undefined && declared > cap) {
      stop();
      throw new ReadFailed({ reason: 'too_large', cap, declared, ...where });
    }
    const parts: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        if (chunk.length > cap - size) {
          stop();
          if (cutAt === undefined) throw new ReadFailed({ reason: 'too_large', cap, ...where });
          parts.push(chunk.subarray(0, cap - size));
          return { body: Buffer.concat(parts), truncated: true };
        }
        size += chunk.length;
        parts.push(chunk);
      }
    } catch (e) {
      throw failed(e, signal, where, 'body');
    }
    return { body: Buffer.concat(parts), truncated: false };
  }

  #headers(read: Read): Record<string, string> {
    const headers = { ...this.policy.headers };
    if (read.from) headers.range = `bytes=${read.from}-`;
    if (read.contentType) headers['content-type'] = read.contentType;
    const cookie = read.jar?.header();
    if (cookie) headers.cookie = cookie;
    if (read.validators?.etag) headers['if-none-match'] = read.validators.etag;
    if (read.validators?.lastModified) headers['if-modified-since'] = read.validators.lastModified;
    return headers;
  }

  /** Runs `f` in the policy's queue: after every earlier request to `host`, within the limit. */
  #queued<T>(host: string, f: () => Promise<T>): Promise<T> {
    const limit = this.#limit;
    return limit ? this.#perHost.run(host, () => limit.run(f)) : f();
  }

  /** Throws when robots.txt of the hop's origin refuses it; a blocked origin is the hop's refusal. */
  async #allowed(where: Where): Promise<void> {
    let robots: Robots;
    try {
      robots = await this.#cachedRobots(new URL(where.at).origin);
    } catch (e) {
      // Not "unreachable": the host may not be reached at all, so neither may the page.
      if (e instanceof ReadFailed && e.failure.reason === 'blocked') throw new ReadFailed({ ...e.failure, ...where });
      throw e;
    }
    const why = robots.refusal(where.at);
    if (why) throw new ReadFailed({ reason: 'robots', why, ...where });
  }

  #cachedRobots(origin: string): Promise<Robots> {
    const cached = this.#robots.get(origin);
    if (cached && Date.now() - cached.at < this.policy.robots.everyRequest!.ttlMs) return cached.robots;
    // The promise is kept, so concurrent requests to one origin read robots.txt once.
    const entry = { at: Date.now(), robots: this.#readRobots(origin, {}) };
    this.#robots.set(origin, entry);
    // A failed read (a blocked origin) is not kept.
    entry.robots.catch(() => {
      if (this.#robots.get(origin) === entry) this.#robots.delete(origin);
    });
    return entry.robots;
  }

  async #readRobots(origin: string, read: Pick<GetOptions, 'signal' | 'jar' | 'untrusted'>): Promise<Robots> {
    const { agent, unreachable } = this.policy.robots;
    const url = `${origin}/robots.txt`;
    try {
      const page = await this.#get(url, { ...read, anyStatus: true, offSite: 'stop', cutAt: ROBOTS_MAX_BYTES }, false);
      return page.redirectedTo ? Robots.none(agent) : Robots.answered(agent, url, page.status, page.html);
    } catch (e) {
      if (!(e instanceof ReadFailed)) throw e;
      // RFC 9309 2.3.1.2: past five redirects, robots.txt may be taken as unavailable.
      if (e.failure.reason === 'redirects') return Robots.none(agent);
      if (e.failure.reason === 'blocked' || unreachable === 'fail') throw e;
      return Robots.unreachable(agent);
    }
  }
}

/** A streamed body, held to `cap` bytes; its failures classified as `failed` does. */
async function* counted(res: Dispatcher.ResponseData, cap: number, signal: AbortSignal, where: Where): AsyncGenerator<Buffer> {
  let size = 0;
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > cap) throw new ReadFailed({ reason: 'too_large', cap, ...where });
      yield chunk;
    }
  } catch (e) {
    throw failed(e, signal, where, 'body');
  }
}

/** A request's or body's failure, classified: past a deadline, refused by the guard, or the network's. */
function failed(e: unknown, signal: AbortSignal, where: Where, during: 'connect' | 'body'): ReadFailed {
  if (e instanceof ReadFailed) return e;
  if (signal.aborted || TIMEOUT_CODES.has((e as { code?: string }).code ?? '')) return new ReadFailed({ reason: 'timeout', cause: e, ...where });
  if (isBlocked(e)) return new ReadFailed({ reason: 'blocked', cause: e, ...where });
  return new ReadFailed({ reason: 'network', during, cause: e, ...where });
}

function page(url: string, status: number, body: Buffer, header: (name: string) => string | null, extra: Pick<Page, 'truncated' | 'redirectedTo'>): Page {
  let html: string | undefined;
  return {
    url,
    status,
    body,
    get html() {
      return (html ??= body.toString('utf8'));
    },
    contentType: header('content-type'),
    validators: { etag: header('etag'), lastModified: header('last-modified') },
    ...extra,
  };
}
