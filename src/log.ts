/**
 * The service's logger: pino, with keys kept out of every line. Keys travel in headers
 * (redacted by path) and, by mistake, in query strings (`?api_key=nmb_…`): a request's URL is
 * logged with the values of key-like parameters and anything shaped like a key replaced.
 */
import { destination as fdDestination, pino, type DestinationStream, type Logger } from 'pino';
import { createRequire } from 'node:module';
import type PinoPretty from 'pino-pretty';

/** Query parameters whose values are secrets whatever they look like. */
const SECRET_PARAMS = /^(api[_-]?key|key|token|access[_-]?token|secret|password|auth(orization)?)$/i;
/** Our key format (platform/keys.ts): nmg_ or nmb_ and base64url. */
const KEY_SHAPED = /nm[gb]_[A-Za-z0-9_-]{8,}/g;

/** `url` with secret parameter values and key-shaped text replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const path = (q < 0 ? url : url.slice(0, q)).replace(KEY_SHAPED, '[redacted]');
  if (q < 0) return path;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      let name = eq < 0 ? pair : pair.slice(0, eq);
      try {
        name = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // A malformed escape is kept as sent; it is still checked below.
      }
      if (eq >= 0 && SECRET_PARAMS.test(name.trim())) return `${pair.slice(0, eq)}=[redacted]`;
      let decoded = pair;
      try {
        decoded = decodeURIComponent(pair.replace(/\+/g, ' '));
      } catch {
        // as above
      }
      KEY_SHAPED.lastIndex = 0;
      if (!KEY_SHAPED.test(decoded)) return pair;
      // A key sent as a parameter's name (or a bare word) goes whole; otherwise just the value.
      KEY_SHAPED.lastIndex = 0;
      return eq < 0 || KEY_SHAPED.test(name) ? '[redacted]' : `${pair.slice(0, eq)}=[redacted]`;
    })
    .join('&');
  return `${path}?${query}`;
}

interface LoggedRequest {
  method?: string;
  url?: string;
  ip?: string;
  host?: string;
  socket?: { remotePort?: number };
}

/** LOG_FORMAT: `auto` is pretty on a terminal, JSON otherwise. */
export type LogFormat = 'auto' | 'json' | 'pretty';

/** pino-pretty, required only when a pretty log is asked for (a server logging JSON never loads it). */
const pretty = (): typeof PinoPretty => createRequire(import.meta.url)('pino-pretty');

/**
 * The logger, writing to `destination` (a stream, or a file descriptor: 1 stdout, 2 stderr).
 * Redaction runs before formatting, so a pretty line hides keys as a JSON one does. Pretty
 * lines are formatted in-process and synchronously: they are for a person at a terminal, at a
 * person's rate, and a worker-thread transport could lose the last lines at process.exit.
 * They leave out the start-up line's `startup` object, whose message says the same.
 */
export function createLogger(level: string, destination: DestinationStream | 1 | 2 = 1, format: LogFormat = 'json'): Logger {
  const fd = typeof destination === 'number' ? destination : undefined;
  const tty = fd !== undefined && Boolean((fd === 1 ? process.stdout : process.stderr).isTTY);
  const readable = format === 'pretty' || (format === 'auto' && tty);
  const stream: DestinationStream = readable
    ? pretty()({ destination: fd ?? destination, sync: true, colorize: tty, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,startup' })
    : typeof destination === 'number'
      ? fdDestination(destination)
      : destination;
  return pino(
    {
      level,
      redact: ['req.headers.authorization', 'req.headers["x-gateway-key"]'],
      serializers: {
        // Fastify's request line, its URL redacted (Fastify takes an instance's own serializers).
        req: (req: LoggedRequest) => ({
          method: req.method,
          url: redactUrl(req.url ?? ''),
          host: req.host,
          remoteAddress: req.ip,
          remotePort: req.socket?.remotePort,
        }),
      },
    },
    stream,
  );
}
