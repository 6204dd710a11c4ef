/**
 * The Fastify app: request ids, JSON parsing, auth, the error handler, OpenAPI, and the route
 * families. Routes stay thin: validate with a schema, call one core function, serialise.
 */
import { randomUUID } from 'node:crypto';
import querystring from 'node:querystring';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import { publicBaseUrl } from '../config.js';
import { smtpMailer } from '../dashboard/index.js';
import type { Service } from '../service.js';
import { authenticate } from './auth.js';
import { docsRoutes } from './docs.js';
import { doorOptions, limitConnections, onRefusedSocket } from './door.js';
import { errorHandler, toAppError } from './error-handler.js';
import { parseJsonBody } from './json-body.js';
import { meteringHooks } from './metering-hooks.js';
import { documentRoutes, swaggerOptions } from './openapi.js';
import { BODY_AJV, LazyCompilers, splitValidator } from './validation.js';
import { accountRoutes } from './routes/account.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { matchRoutes } from './routes/match.js';
import { jobsRoutes } from './routes/jobs.js';
import { liveRoutes } from './routes/live.js';
import { marketRoutes } from './routes/market.js';
import { monitorRoutes } from './routes/monitors.js';
import { newsRoutes } from './routes/news.js';
import { opsRoutes } from './routes/ops.js';
import { playgroundRoutes } from '../playground/index.js';
import { sourcesRoutes } from './routes/sources.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The routes' schema compilers (validation.ts): compiled on first use, the rest warmed once listening. */
    schemas: LazyCompilers;
  }
  interface FastifyContextConfig {
    /** Route needs a key: gateway or Bearer (`true`), or Bearer only (`'bearer'`: account routes). */
    auth?: boolean | 'bearer';
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const WARM_AFTER_MS = 1_000;

export async function buildApp(service: Service): Promise<FastifyInstance> {
  const compilers = new LazyCompilers();
  const app = Fastify({
    loggerInstance: service.log as FastifyBaseLogger,
    bodyLimit: service.config.bodyLimit,
    // TRUST_PROXY: X-Forwarded-For/-Proto from these peers only give req.ip and req.protocol.
    trustProxy: service.config.trustProxy.length > 0 ? service.config.trustProxy : false,
    // A caller's own request id is echoed when it is sane; otherwise one is made.
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // Bodies as sent; query strings coerced to their declared types, defaults filled (validation.ts).
    ajv: { customOptions: BODY_AJV },
    schemaController: { compilersFactory: { buildValidator: compilers.validator(splitValidator()), buildSerializer: compilers.serializer() } },
    // Requests arriving while the server closes get our 503 (the onRequest hook), not Fastify's.
    return503OnClosing: false,
    // A null-prototype object (`__proto__` is a parameter like any other); a repeated
    // parameter is an array, which no declared type is coerced from: refused by name.
    routerOptions: { querystringParser: (str) => querystring.parse(str) },
    // A path that is not valid percent-encoding (`/%ff`) is refused before routing: in the catalogue's shape too.
    // (Fastify answers these with its default error handler, not ours: the reply is written here.)
    frameworkErrors: (error, req, reply) => {
      const e = error.code === 'FST_ERR_BAD_URL' ? new AppError('bad_request', 'the request path is not valid percent-encoding') : toAppError(error);
      errorHandler(e, req, reply);
    },
    // Timeouts and the parser's failures in the catalogue's shape (door.ts).
    ...doorOptions(service.config),
  });
  limitConnections(app.server, { maxConnections: service.config.httpMaxConnections, maxConnectionsPerIp: service.config.httpMaxConnectionsPerIp });

  // JSON bodies: an empty body is the empty request; malformed JSON is our 400, not Fastify's.
  // Fastify's own text/plain parser goes too: JSON sent as text is 415, as the README says.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, raw, done) => {
    try {
      done(null, parseJsonBody(raw as Buffer));
    } catch (e) {
      done(new AppError('bad_request', `body is not valid JSON: ${(e as Error).message}`), undefined);
    }
  });

  // Any other type: only an empty body is accepted (curl -d '' sends a form type).
  app.addContentTypeParser('*', { parseAs: 'string' }, (req, raw, done) => {
    if ((raw as string).length === 0) return done(null, undefined);
    done(
      new AppError('unsupported_media_type', `Content-Type ${JSON.stringify(req.headers['content-type'] ?? '')} is not supported: send application/json`),
      undefined,
    );
  });

  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((req) => {
    throw new AppError('not_found', `no endpoint ${req.method} ${req.url.split('?')[0]}`);
  });
  app.addHook('onSend', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });
  const doors = { keys: service.keys, gatewayHost: service.config.gatewayHost };
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (req, reply) => {
    // A request on a connection refused at the door: its 503 is already written.
    if (onRefusedSocket(req.raw)) return reply.hijack();
    // Draining (SIGTERM): new requests, /readyz included, go elsewhere; in-flight ones finish.
    if (closing) throw new AppError('shutting_down', undefined, { headers: { connection: 'close', 'retry-after': '1' } });
    // HEAD would run a metered handler and charge for a body nobody reads: not offered there.
    if (req.method === 'HEAD' && req.routeOptions.config.product !== undefined) {
      throw new AppError('method_not_allowed', 'HEAD is not offered on metered endpoints (it would be charged): send GET', { headers: { allow: 'GET' } });
    }
    if (!req.routeOptions.config.auth) return;
    // One fresh LMDB snapshot per request: keys and records written by other processes count.
    service.store.refresh();
    req.apiKey = authenticate(doors, req);
    if (req.routeOptions.config.auth === 'bearer' && req.apiKey.scheme !== 'bearer')
      throw new AppError('forbidden', 'this endpoint needs a Bearer key (gateway keys have no account)');
  });
  meteringHooks(app, service);
  app.addHook('preValidation', async (req) => {
    if (req.method === 'POST' && req.body === undefined) req.body = {};
  });

  await app.register(swagger, swaggerOptions());
  // Before the routes: their error responses and examples are filled in as they register (openapi.ts).
  documentRoutes(app);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // The API reference over /openapi.json, served from the package, no key (docs.ts).
  await docsRoutes(app);
  matchRoutes(app, service);
  accountRoutes(app, service.billing);
  // The account dashboard's HTML pages (hidden from /openapi.json).
  const publicUrl = publicBaseUrl(service.config);
  await dashboardRoutes(app, {
    sessions: service.sessions,
    emails: service.emails,
    mailer: service.config.smtpUrl === undefined ? null : smtpMailer(service.config.smtpUrl, service.config.smtpFrom!),
    publicUrl,
    billing: service.billing,
    keys: service.keys,
    refresh: () => service.store.refresh(),
    sessionMs: service.config.dashboardSessionHours * 3_600_000,
    signInsPerMinute: service.config.dashboardSignInsPerMinute,
    secureCookie: publicUrl.startsWith('https:'),
  });
  monitorRoutes(app, {
    monitors: service.monitors,
    monitorStore: service.monitorStore,
    monitorFeed: service.monitorFeed,
    log: service.log,
    disabled: new Set(service.config.productsDisabled),
    stream: { heartbeatMs: service.config.monitorStreamHeartbeatMs, maxBufferedBytes: service.config.monitorStreamMaxBufferBytes },
    shards: service.cluster && service.config.clusterShards !== 'all' ? service.config.clusterShards : undefined,
  });
  sourcesRoutes(app, service);
  newsRoutes(app, service);
  jobsRoutes(app, service);
  marketRoutes(app, service);
  liveRoutes(app, service);
  playgroundRoutes(app);
  // /healthz, /readyz, /metrics; also counts every response for /metrics.
  opsRoutes(app, service);
  app.decorate('schemas', compilers);
  // A second after listening, the schemas no request has needed yet are compiled between
  // requests (not sooner: the first requests would wait behind them).
  app.addHook('onListen', async () => {
    setTimeout(() => compilers.warm().catch((err: unknown) => app.log.error({ err }, 'a route schema does not compile')), WARM_AFTER_MS).unref();
  });
  return app;
}
