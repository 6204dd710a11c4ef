/**
 * Operations: GET /healthz (the process is up), GET /readyz (it answers like its data says it
 * should) and GET /metrics (Prometheus text), on the main port and, with METRICS_LISTEN, on a
 * listener of their own that serves nothing else.
 *
 * Who may read /metrics on the main port: an operator Bearer key (account `operator`, no
 * scopes: what `newsmatch keys create` makes without `--account`), or anyone with
 * METRICS_PUBLIC=on. Probes never need a key: load balancers call them.
 *
 * None of the three validates its query string: a probe or a scrape config that adds a
 * parameter must not turn an instance unhealthy.
 */
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { countResponses, OpsMetrics, startCatchUp, unmetConditions } from '../../ops/index.js';
import { OPERATOR } from '../../platform/index.js';
import type { Service } from '../../service.js';
import { doorOptions, limitConnections } from '../door.js';
import { errorHandler } from '../error-handler.js';
import { TAGS } from '../openapi.js';

export interface OpsHandle {
  metrics: OpsMetrics;
  /** Starts the METRICS_LISTEN listener (closed with the app); its URL, or null when the setting is unset. */
  listen(): Promise<string | null>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's metrics and its METRICS_LISTEN listener (routes/ops.ts). */
    ops: OpsHandle;
  }
}

const health200 = { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } } } as const;
const ready200 = { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ready'] } } } as const;
const metrics200 = { description: 'Prometheus text exposition format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } } as const;

/** Probes and scrapes come every few seconds: their lines would drown the log. */
const QUIET = 'warn';

async function operatorOnly(req: FastifyRequest): Promise<void> {
  const key = req.apiKey;
  if (!key || key.account !== OPERATOR || key.scopes) {
    throw new AppError(
      'forbidden',
      'GET /metrics needs an operator Bearer key with no scopes (newsmatch keys create); or set METRICS_PUBLIC=on or METRICS_LISTEN',
    );
  }
}

/** The three routes; `keyed`: /metrics needs an operator key (the main port without METRICS_PUBLIC). */
function routes(app: FastifyInstance, service: Service, metrics: OpsMetrics, keyed: boolean): void {
  app.get('/healthz', {
    logLevel: QUIET,
    schema: {
      summary: 'Liveness: the process is up (reads nothing)',
      operationId: 'getHealth',
      tags: [TAGS.ops.name],
      security: [],
      response: { 200: health200 },
    },
    handler: async () => ({ status: 'ok' as const }),
  });
  app.get('/readyz', {
    logLevel: QUIET,
    config: { errors: ['not_ready'] },
    schema: {
      summary: 'Readiness: store open, search engine and keyword index caught up with LMDB, text mode as configured',
      operationId: 'getReadiness',
      tags: [TAGS.ops.name],
      description: 'A 503 `not_ready` names every unmet condition, and starts the catch-up a request would have started.',
      security: [],
      response: { 200: ready200 },
    },
    handler: async () => {
      const unmet = unmetConditions(service);
      if (unmet.length > 0) {
        startCatchUp(service);
        throw new AppError('not_ready', `not ready: ${unmet.join('; ')}`);
      }
      return { status: 'ready' as const };
    },
  });
  app.get('/metrics', {
    logLevel: QUIET,
    config: keyed ? { auth: 'bearer' } : {},
    onRequest: keyed ? operatorOnly : undefined,
    schema: {
      summary: 'Prometheus metrics: requests, latency, event loop, engine, embedding queue, ingest, billing',
      operationId: 'getMetrics',
      tags: [TAGS.ops.name],
      security: keyed ? [{ bearer: [] }] : [],
      response: { 200: metrics200 },
    },
    handler: async (_req, reply) => {
      reply.type(metrics.contentType);
      return metrics.text();
    },
  });
}

/**
 * Registers the routes on the main app, counts every response for /metrics, and decorates the
 * app with `ops` (main.ts starts the METRICS_LISTEN listener through it).
 */
export function opsRoutes(app: FastifyInstance, service: Service): void {
  const metrics = new OpsMetrics(service);
  app.addHook('onResponse', countResponses(metrics.requests));
  routes(app, service, metrics, service.config.metricsPublic !== 'on');

  let side: FastifyInstance | null = null;
  app.decorate('ops', {
    metrics,
    async listen() {
      const at = service.config.metricsListen;
      if (!at || side) return side ? url(side) : null;
      const listener = buildOpsListener(service, metrics);
      await listener.listen({ host: at.host, port: at.port });
      side = listener;
      return url(side);
    },
  } satisfies OpsHandle);
  app.addHook('onClose', async () => {
    metrics.close();
    await side?.close();
  });
}

/** The METRICS_LISTEN app: the three routes, no key, and 404 in the catalogue's shape for anything else. */
function buildOpsListener(service: Service, metrics: OpsMetrics): FastifyInstance {
  // The API's door: the same timeouts and caps (a scraper's address is one client like any).
  const app = Fastify({ loggerInstance: service.log as FastifyBaseLogger, return503OnClosing: true, ...doorOptions(service.config) });
  limitConnections(app.server, { maxConnections: service.config.httpMaxConnections, maxConnectionsPerIp: service.config.httpMaxConnectionsPerIp });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((req) => {
    throw new AppError('not_found', `no endpoint ${req.method} ${req.url.split('?')[0]} on the metrics listener (it serves /metrics, /healthz and /readyz)`);
  });
  routes(app, service, metrics, false);
  return app;
}

function url(app: FastifyInstance): string {
  const a = app.server.address() as AddressInfo;
  return `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
}
