/**
 * The guarded request under the one HTTP client (http-client.ts): every request the service
 * makes to a URL it did not write itself goes through `Outbound.send`, which refuses targets
 * that are not public addresses unless the request says it may reach them (an operator's own
 * host).
 *
 * - Direct: the connection's own dns lookup is the guarded one (guard.ts), so the address
 *   checked is the address connected to; an IP literal, which never reaches a lookup, is
 *   checked before the request.
 * - Through a proxy (LIVE_PROXY_URL): the proxy would resolve the name itself, after our
 *   check and possibly to another address (DNS rebinding, or a proxy that sees the operator's
 *   internal names). So the name is resolved and checked here first, and the proxy is asked to
 *   CONNECT to that checked address, not to the name; the name still goes as the Host header
 *   and as the TLS server name, so the certificate is verified against it. (Cost: the proxy
 *   cannot pick its own, e.g. nearer, address for the name.) Nothing is sent to the proxy for
 *   a refused target.
 * - No redirect is ever followed here: a caller's next hop is another `send`, checked again.
 *
 * undici (~0.1 s to import) is imported with the first request, not at start-up: a server
 * that only matches never loads it.
 */
import net from 'node:net';
import type { Agent, Dispatcher, ProxyAgent, request } from 'undici';
import { isPublicAddress } from './address.js';
import { blockedError, guardedLookup, resolvePublic, systemLookup, type Lookup } from './guard.js';

export interface OutboundOptions {
  /** Connect, headers and body timeouts, each. */
  timeoutMs: number;
  /** An HTTP(S) proxy every request goes through (CONNECT tunnels). */
  proxyUrl?: string;
  /** Name resolution; tests stand in a resolver (default: the system's dns.lookup). */
  lookup?: Lookup;
}

export interface SendOptions {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string | Buffer;
  signal?: AbortSignal;
  /** The target may be loopback, private or reserved (a host the operator named). Default: public addresses only. */
  allowPrivate?: boolean;
}

interface Agents {
  request: typeof request;
  proxy: ProxyAgent | null;
  /** Direct connections for targets that must be public: the guarded lookup. */
  guarded: Agent | null;
  /** Direct connections for targets the operator vouched for. */
  open: Agent | null;
}

export class Outbound {
  readonly #options: OutboundOptions;
  readonly #lookup: Lookup;
  #agents: Promise<Agents> | undefined;

  constructor(options: OutboundOptions) {
    this.#options = options;
    this.#lookup = options.lookup ?? systemLookup;
  }

  #load(): Promise<Agents> {
    this.#agents ??= import('undici').then(({ Agent, ProxyAgent, request }) => {
      const o = this.#options;
      const timeouts = { headersTimeout: o.timeoutMs, bodyTimeout: o.timeoutMs, connectTimeout: o.timeoutMs };
      const proxy = o.proxyUrl ? new ProxyAgent({ uri: o.proxyUrl, proxyTunnel: true, ...timeouts }) : null;
      return {
        request,
        proxy,
        guarded: proxy ? null : new Agent({ ...timeouts, connect: { lookup: guardedLookup(this.#lookup) } }),
        open: proxy ? null : new Agent(timeouts),
      };
    });
    return this.#agents;
  }

  /**
   * One request, redirects not followed. A target that is not public (and not allowed to be)
   * fails with the refusal (`isBlocked(e)`), before any byte is sent to it or to the proxy.
   */
  async send(url: string, opts: SendOptions = {}): Promise<Dispatcher.ResponseData> {
    const target = new URL(url);
    if (target.protocol !== 'http:' && target.protocol !== 'https:') throw blockedError(target.protocol, 'URLs are not fetched');
    const base = { method: opts.method ?? 'GET', body: opts.body, signal: opts.signal, headers: opts.headers };
    const { request, proxy, guarded, open } = await this.#load();
    if (opts.allowPrivate) return request(url, { ...base, dispatcher: (proxy ?? open)! });
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
    if (net.isIP(host) && !isPublicAddress(host)) throw blockedError(target.hostname);
    if (!proxy) return request(url, { ...base, dispatcher: guarded! });

    const [checked] = await abortable(resolvePublic(host, this.#lookup), opts.signal);
    const tunnel = new URL(url);
    tunnel.hostname = checked.family === 6 ? `[${checked.address}]` : checked.address;
    // undici takes the TLS server name from the Host header, so the certificate is checked against the name.
    return request(tunnel, { ...base, headers: { ...opts.headers, host: target.host }, dispatcher: proxy });
  }

  async close(): Promise<void> {
    if (!this.#agents) return;
    const { proxy, guarded, open } = await this.#agents;
    await Promise.all([proxy?.close(), guarded?.close(), open?.close()]);
  }
}

/** `p`, or the signal's reason once it aborts (a lookup cannot be cancelled, only left). */
function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
