/**
 * What happens before a request reaches Fastify's router: connections over the caps are refused
 * with a clear 503, and the HTTP parser's own failures (headers too large, a request that did
 * not arrive within HTTP_REQUEST_TIMEOUT_MS, garbage) leave in the catalogue's error shape
 * instead of Node's bare status lines. The timeouts themselves are the server's options
 * (app.ts); this is who answers when they fire.
 */
import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from '../config.js';
import { AppError, type ErrorName } from '../errors.js';

/** A whole HTTP/1.1 response with an error body, written on a socket that is then closed. */
function rawError(entry: ErrorName, message?: string, headers: Record<string, string> = {}): string {
  const e = new AppError(entry, message);
  const body = JSON.stringify(e.toBody());
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status] ?? 'Error'}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n${extra}\r\n${body}`;
}

/** Fastify's `clientErrorHandler`: the parser's failures as catalogue errors. */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  // Nothing to answer on a socket the client already dropped.
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const response =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? rawError('headers_too_large')
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? rawError('request_timeout')
        : rawError('bad_request', 'the request is not valid HTTP/1.1');
  socket.end(response);
}

/**
 * The server options of a listener (the API's and the metrics listener's): nothing may hold a
 * socket, so headers, the whole request, idle and keep-alive all time out, and the parser's
 * failures are answered by clientErrorHandler.
 */
export function doorOptions(config: Config) {
  return {
    http: {
      headersTimeout: config.httpHeadersTimeoutMs,
      requestTimeout: config.httpRequestTimeoutMs,
      connectionsCheckingInterval: Math.min(30_000, config.httpHeadersTimeoutMs),
    },
    requestTimeout: config.httpRequestTimeoutMs,
    connectionTimeout: config.httpIdleTimeoutMs,
    keepAliveTimeout: config.httpKeepAliveTimeoutMs,
    clientErrorHandler,
  };
}

export interface DoorLimits {
  maxConnections: number;
  maxConnectionsPerIp: number;
}

const REFUSED = Symbol('refused');

/** A request that arrived on a connection already refused (its 503 is written; nothing more may be). */
export const onRefusedSocket = (req: IncomingMessage): boolean => (req.socket as Socket & { [REFUSED]?: true })[REFUSED] === true;

/**
 * Counts open connections, in total and per client address, and refuses one over either cap
 * with 503 `too_many_connections` before its request is read (Node's own `maxConnections`
 * would drop it without a word).
 */
export function limitConnections(server: Server, limits: DoorLimits): { open(): number } {
  let total = 0;
  const byIp = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const ip = socket.remoteAddress ?? '';
    const mine = byIp.get(ip) ?? 0;
    if (total >= limits.maxConnections || mine >= limits.maxConnectionsPerIp) {
      const which = total >= limits.maxConnections ? 'the server is at HTTP_MAX_CONNECTIONS' : 'this client address is at HTTP_MAX_CONNECTIONS_PER_IP';
      // Half-closed after the answer, so the client reads it; a request it had already sent
      // is dropped by onRefusedSocket.
      (socket as Socket & { [REFUSED]?: true })[REFUSED] = true;
      socket.on('error', () => socket.destroy());
      socket.setTimeout(5000, () => socket.destroy());
      socket.end(rawError('too_many_connections', `too many open connections: ${which}`, { 'retry-after': '5' }));
      return;
    }
    total++;
    byIp.set(ip, mine + 1);
    socket.once('close', () => {
      total--;
      const n = (byIp.get(ip) ?? 1) - 1;
      if (n <= 0) byIp.delete(ip);
      else byIp.set(ip, n);
    });
  });
  return { open: () => total };
}
