/**
 * The two ways the service reads other people's sites, as settings of the one client
 * (http-client.ts), which does the reading alike for both:
 *
 * - polite polling (ingest): the operator's feeds and their items' pages, as a crawler that
 *   says who it is (INGEST_USER_AGENT), asks for no compression, reads conditionally, keeps to
 *   INGEST_CONCURRENCY requests and one per host, honours robots.txt before every request
 *   and redirect hop (cached an hour per origin), and reaches private hosts only for the
 *   outlets' own feed hosts (INGEST_ALLOW_PRIVATE);
 * - live scraping: the pages a live call reads, as a browser asks for them, through
 *   LIVE_PROXY_URL when set, with one deadline for the whole call and a cookie jar per call,
 *   redirects kept on the site, and robots.txt read when an endpoint that crawls asks for it
 *   (contacts). Its failures are the catalogue's: 504 `timeout`, 502 `scrape_failed`;
 * - the model hub (`newsmatch quickstart`, MODEL_HUB_*): a tree listing and a few large files,
 *   streamed to disk and resumed with a Range;
 * - webhook delivery (monitors): a POST to a URL an account named, public addresses only
 *   (unless LIVE_ALLOW_PRIVATE), no redirect followed, no robots.txt, any status an answer.
 */
import { AppError } from '../errors.js';

/** Why a read failed, before a policy words it: `url` is what the caller asked for, `at` the request (hop `hop`) that failed. */
export type Failure = { url: string; at: string; hop: number; cause?: unknown } & (
  | { reason: 'blocked' | 'timeout' | 'redirects' }
  | { reason: 'network'; during: 'connect' | 'body' }
  | { reason: 'status'; status: number }
  | { reason: 'too_large'; cap: number; declared?: number }
  | { reason: 'off_site'; to: string }
  | { reason: 'robots'; why: string }
);

export interface Policy {
  /** Sent with every request; a read adds its cookies, content type and conditional headers. */
  headers: Record<string, string>;
  /** Deadline of each request, from when it leaves the queue (and undici's connect, headers and body timeouts); `deadline()` gives a whole call as long. */
  timeoutMs: number;
  /** Largest body read; a larger one fails the read, unless the read asks to cut it. */
  maxBytes: number;
  maxRedirects: number;
  /** Redirects are followed only on the site the read began on (its host, a leading `www.` aside). */
  sameSiteRedirects: boolean;
  /** The final statuses a read answers with a page; any other fails it (unless the read takes any). */
  accepts(status: number): boolean;
  /** An HTTP(S) proxy every request goes through (CONNECT to the checked address). */
  proxyUrl?: string;
  /** At most this many requests in flight, and one at a time per host; absent: no queue. */
  concurrency?: number;
  /** Whether a request to `url` may reach loopback and private addresses; `untrusted`: a live call's caller named it. */
  mayBePrivate(url: URL, untrusted: boolean): boolean;
  robots: {
    /** The name robots.txt groups are matched against. */
    agent: string;
    /** A robots.txt that cannot be read (network, deadline) closes the site (RFC 9309), or fails the read that wanted it. */
    unreachable: 'disallow' | 'fail';
    /** Set: checked before every request and redirect hop, each origin's rules kept `ttlMs`. Absent: read only when a caller asks (`robots()`). */
    everyRequest?: { ttlMs: number };
  };
  /** The error a failed read throws. */
  error(f: Failure): Error;
}

/** A polite poller's failure: the URL and the reason, as the outlet's report and log show it. */
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

export interface PolitePollingOptions {
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

/** robots.txt answers are kept this long per origin. */
const ROBOTS_TTL_MS = 3_600_000;

/** Feed polling (INGEST_*): feeds are the operator's, but their item links and redirects are chosen by whoever writes the feed. */
export function politePolling(o: PolitePollingOptions): Policy {
  const blocked = `blocked: the host is a private address or resolves to one (${o.privateFeeds ? "INGEST_ALLOW_PRIVATE covers only the hosts of the outlets' feed URLs" : 'INGEST_ALLOW_PRIVATE is off'})`;
  return {
    headers: { 'user-agent': o.userAgent, accept: '*/*', 'accept-encoding': 'identity' },
    timeoutMs: o.timeoutMs,
    maxBytes: o.maxBytes,
    maxRedirects: o.maxRedirects,
    sameSiteRedirects: false,
    accepts: (status) => status === 200 || status === 304,
    concurrency: o.concurrency,
    mayBePrivate(url) {
      if (!o.privateFeeds) return false;
      for (const feed of o.privateFeeds()) if (URL.canParse(feed) && new URL(feed).host === url.host) return true;
      return false;
    },
    robots: { agent: o.userAgent, unreachable: 'disallow', everyRequest: { ttlMs: ROBOTS_TTL_MS } },
    error(f) {
      const cause = { cause: f.cause };
      switch (f.reason) {
        case 'blocked':
          // A redirect into a blocked host is the original URL's failure: say where it pointed.
          return f.hop > 0 ? new FetchError(`redirected to ${f.at}, which is ${blocked}`, f.url, cause) : new FetchError(blocked, f.at, cause);
        case 'timeout':
          return new FetchError(`no answer within ${o.timeoutMs} ms`, f.at, cause);
        case 'network': {
          const err = f.cause as { code?: string; message?: string };
          return new FetchError(err.code ? `${err.code}: ${err.message}` : (err.message ?? String(f.cause)), f.at, cause);
        }
        case 'status':
          return new FetchError(f.status >= 300 && f.status < 400 ? `HTTP ${f.status} without a Location` : `HTTP ${f.status}`, f.at);
        case 'too_large':
          return new FetchError(
            f.declared === undefined ? `body is over the ${f.cap}-byte cap` : `body of ${f.declared} bytes is over the ${f.cap}-byte cap`,
            f.at,
          );
        case 'redirects':
          return new FetchError(`more than ${o.maxRedirects} redirects`, f.url);
        case 'off_site':
          return new FetchError(`redirected off the site, to ${f.to}`, f.url);
        case 'robots':
          return new FetchError('disallowed by robots.txt', f.at);
      }
    },
  };
}

export interface LiveScrapingOptions {
  timeoutMs: number;
  maxBytes: number;
  userAgent: string;
  proxyUrl?: string;
  /** LIVE_ALLOW_PRIVATE=on: URLs a caller names may reach loopback and private addresses too. */
  allowPrivate?: boolean;
}

const LIVE_MAX_REDIRECTS = 5;

/** Live scrapes (LIVE_*): the configured upstreams are the operator's; what a caller names must be public. */
export function liveScraping(o: LiveScrapingOptions): Policy {
  return {
    headers: { 'user-agent': o.userAgent, accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'accept-language': 'en-US,en;q=0.9' },
    timeoutMs: o.timeoutMs,
    maxBytes: o.maxBytes,
    maxRedirects: LIVE_MAX_REDIRECTS,
    sameSiteRedirects: true,
    accepts: (status) => status >= 200 && status < 300,
    proxyUrl: o.proxyUrl,
    mayBePrivate: (_url, untrusted) => !untrusted || o.allowPrivate === true,
    // Matched as `newsmatch`, so a site's `*` groups apply (the User-Agent is a browser's).
    robots: { agent: 'newsmatch', unreachable: 'fail' },
    // Neither what a name resolved to nor why a connection failed (refused, unknown name, reset)
    // is said: either would map the operator's network for whoever names internal hosts. The
    // cause stays on the error for the log.
    error(f) {
      const failed = (detail: string) => new AppError('scrape_failed', detail, { cause: f.cause });
      switch (f.reason) {
        case 'timeout':
          return new AppError('timeout', `the scrape of ${f.at} passed its deadline (LIVE_TIMEOUT_MS)`, { cause: f.cause });
        case 'blocked':
          return failed(`${f.at}: blocked, the host is a private address or resolves to one (LIVE_ALLOW_PRIVATE is off)`);
        case 'network':
          return failed(`${f.at}: ${f.during === 'connect' ? 'could not connect' : 'the connection broke off'}`);
        case 'status':
          return failed(
            f.status === 503 || f.status === 429
              ? `${f.at}: the site answered ${f.status} (throttled or a robot check)`
              : `${f.at}: the site answered HTTP ${f.status}`,
          );
        case 'too_large':
          return failed(
            f.declared === undefined
              ? `${f.at}: the page is over LIVE_MAX_BYTES (${f.cap})`
              : `${f.at}: the page is ${f.declared} bytes, over LIVE_MAX_BYTES (${f.cap})`,
          );
        case 'redirects':
          return failed(`${f.url}: more than ${LIVE_MAX_REDIRECTS} redirects`);
        case 'off_site':
          return failed(`${f.url}: redirected off the site, to ${f.to}`);
        case 'robots':
          return failed(`${f.at}: ${f.why}`);
      }
    },
  };
}

export interface ModelHubOptions {
  /** MODEL_HUB_URL: the hub's base URL. */
  hubUrl: string;
  /** MODEL_HUB_ALLOW_PRIVATE=on: the hub's own host may be loopback or private (a mirror on the intranet). */
  allowPrivateHub: boolean;
  /** MODEL_HUB_TIMEOUT_MS: to the headers, and the longest gap between body chunks. */
  timeoutMs: number;
}

/** Listings and other buffered reads from the hub; each download is held to its listed size instead (`stream`'s `maxBytes`). */
const MODEL_HUB_MAX_BYTES = 16 * 1_048_576;

/**
 * The model hub: an API and its file store, not a site to crawl (no robots.txt). Files redirect
 * to a CDN on another host, so redirects go anywhere public; only the hub's own host may be
 * private, and only where the operator says so.
 */
export function modelHub(o: ModelHubOptions): Policy {
  const hubHost = new URL(o.hubUrl).host;
  const blocked = `blocked: the host is a private address or resolves to one (${o.allowPrivateHub ? `MODEL_HUB_ALLOW_PRIVATE covers only ${hubHost}` : 'MODEL_HUB_ALLOW_PRIVATE is off'})`;
  return {
    // identity: the byte counts, the Range offsets and the hashes are of the file itself.
    headers: { 'user-agent': 'newsmatch/0.1 (model fetch)', accept: '*/*', 'accept-encoding': 'identity' },
    timeoutMs: o.timeoutMs,
    maxBytes: MODEL_HUB_MAX_BYTES,
    maxRedirects: 5,
    sameSiteRedirects: false,
    accepts: (status) => status === 200 || status === 206,
    mayBePrivate: (url) => o.allowPrivateHub && url.host === hubHost,
    robots: { agent: 'newsmatch', unreachable: 'fail' },
    error(f) {
      const cause = { cause: f.cause };
      switch (f.reason) {
        case 'blocked':
          return f.hop > 0 ? new FetchError(`redirected to ${f.at}, which is ${blocked}`, f.url, cause) : new FetchError(blocked, f.at, cause);
        case 'timeout':
          return new FetchError(`no answer or no bytes within ${o.timeoutMs} ms (MODEL_HUB_TIMEOUT_MS)`, f.at, cause);
        case 'network': {
          const err = f.cause as { code?: string; message?: string };
          const what = err.code ? `${err.code}: ${err.message}` : (err.message ?? String(f.cause));
          return new FetchError(f.during === 'body' ? `the download broke off (${what})` : what, f.at, cause);
        }
        case 'status':
          return new FetchError(`HTTP ${f.status}`, f.at);
        case 'too_large':
          return new FetchError(
            f.declared === undefined ? `more than the ${f.cap} bytes expected` : `${f.declared} bytes, more than the ${f.cap} expected`,
            f.at,
          );
        case 'redirects':
          return new FetchError('more than 5 redirects', f.url);
        case 'off_site':
          return new FetchError(`redirected off the site, to ${f.to}`, f.url);
        case 'robots':
          return new FetchError(f.why, f.at);
      }
    },
  };
}

/** Why a webhook POST got no HTTP answer; `reason` is what callers branch on (`blocked` is the guard's refusal). */
export class WebhookError extends Error {
  readonly name = 'WebhookError';
  constructor(
    readonly reason: Failure['reason'],
    message: string,
    readonly url: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface WebhookDeliveryOptions {
  /** MONITOR_WEBHOOK_TIMEOUT_MS: to the whole answer, its (capped) body included. */
  timeoutMs: number;
  /** LIVE_ALLOW_PRIVATE=on: webhook URLs may reach loopback and private addresses (a receiver on this machine). */
  allowPrivate: boolean;
  userAgent: string;
}

/** What a receiver's answer is read of: enough for the delivery log, never the whole of a large page. */
export const WEBHOOK_MAX_BYTES = 65_536;

/** Codes of a connection's failure, as a receiver's owner can act on them. */
const NETWORK_WORDS = new Map([
  ['ENOTFOUND', 'the name did not resolve'],
  ['EAI_AGAIN', 'the name did not resolve (temporary DNS failure)'],
  ['ECONNREFUSED', 'the connection was refused'],
  ['ECONNRESET', 'the connection was reset'],
  ['EHOSTUNREACH', 'the host is unreachable'],
  ['ENETUNREACH', 'the network is unreachable'],
  ['UND_ERR_SOCKET', 'the connection closed before an answer'],
]);

/** The first `code` on `e` or its causes. */
function codeOf(e: unknown): string | undefined {
  for (let at = e as { code?: unknown; cause?: unknown } | undefined, depth = 0; at && depth < 8; at = at.cause as typeof at, depth++) {
    if (typeof at.code === 'string') return at.code;
  }
  return undefined;
}

/**
 * Webhooks (monitors): every URL is an account's, so only public addresses are reached unless
 * the operator says otherwise. The messages name no resolved address (the guard's refusal
 * names the host as written), only what the receiver's owner can fix.
 */
export function webhookDelivery(o: WebhookDeliveryOptions): Policy {
  return {
    // identity: the body kept in the delivery log is the receiver's own bytes.
    headers: { 'user-agent': o.userAgent, accept: '*/*', 'accept-encoding': 'identity' },
    timeoutMs: o.timeoutMs,
    maxBytes: WEBHOOK_MAX_BYTES,
    maxRedirects: 0,
    sameSiteRedirects: true,
    accepts: () => true,
    mayBePrivate: () => o.allowPrivate,
    robots: { agent: o.userAgent, unreachable: 'fail' },
    error(f) {
      const failed = (message: string) => new WebhookError(f.reason, message, f.at, { cause: f.cause });
      switch (f.reason) {
        case 'blocked':
          return failed('blocked: the host is a private or loopback address or resolves to one (LIVE_ALLOW_PRIVATE is off)');
        case 'timeout':
          return failed(`no answer within ${o.timeoutMs} ms`);
        case 'network': {
          const code = codeOf(f.cause);
          const words = code === undefined ? undefined : NETWORK_WORDS.get(code);
          if (f.during === 'body') return failed(`the connection broke off during the answer${code ? ` (${code})` : ''}`);
          if (words) return failed(`${words} (${code})`);
          if (code && /CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) return failed(`the TLS certificate was not accepted (${code})`);
          return failed(code ? `could not connect (${code})` : 'could not connect');
        }
        case 'status':
          return failed(`HTTP ${f.status}`);
        case 'too_large':
          return failed(`the answer is over ${f.cap} bytes`);
        case 'redirects':
        case 'off_site':
          return failed('redirected (redirects are not followed)');
        case 'robots':
          return failed(f.why);
      }
    },
  };
}
