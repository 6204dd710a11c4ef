/**
 * /v1/monitors (README, "Monitors"): an account's standing match queries. Managing them is free
 * of charge (Bearer keys whose scope includes monitors); each match delivered costs a credit,
 * charged as it is matched (src/monitors/monitors.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { DIMS } from '../../dims.js';
import { AppError } from '../../errors.js';
import { parseLastEventId, streamEvents, type MonitorFeed, type Monitors, type MonitorStore } from '../../monitors/index.js';
import { OPERATOR, type Product } from '../../platform/index.js';
import { TAGS } from '../openapi.js';
import { noQuery, sourceNames } from '../schemas.js';

export interface MonitorRouteDeps {
  monitors: Monitors;
  monitorStore: MonitorStore;
  monitorFeed: MonitorFeed;
  log: Logger;
  /** PRODUCTS_DISABLED. */
  disabled: ReadonlySet<Product>;
  stream: { heartbeatMs: number; maxBufferedBytes: number };
  /**
   * Cluster mode: the shards whose vectors this node holds, when not all (CLUSTER_SHARDS). A
   * monitor matches arrivals against the vectors its node holds, so it is made only where they
   * all are.
   */
  shards?: string;
}

const bearer = [{ bearer: [] }];

const idParams = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: { id: { type: 'string', minLength: 1, maxLength: 64, description: 'The monitor id (`mon_…`).' } },
} as const;

const createBody = {
  type: 'object',
  additionalProperties: false,
  description: 'One query (text, vector or like) and one delivery (webhook_url, or stream: true).',
  properties: {
    text: { type: 'string', minLength: 1, maxLength: 4000, description: 'Text embedded by the service (text mode).' },
    vector: { type: 'array', minItems: DIMS, maxItems: DIMS, items: { type: 'number' }, description: 'A bge-m3 vector (normalised by the service).' },
    like: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description: "An article's id: its latest revision's chunk vectors are the query; its own later revisions are left out.",
    },
    model: { type: 'string', maxLength: 100, description: 'Embedding space of `vector`; only `bge-m3`.' },
    min_score: { type: 'number', minimum: -1, maximum: 1, default: 0.5, description: 'Cosine floor a revision’s best chunk must reach.' },
    sources: { ...sourceNames, description: 'Only these sources (names from GET /v1/sources).' },
    exclude_sources: { ...sourceNames, description: 'Not these sources.' },
    include_edits: { type: 'boolean', default: false, description: 'Also later revisions of an article (default: first revisions only).' },
    webhook_url: {
      type: 'string',
      minLength: 1,
      maxLength: 2048,
      description: 'Matches are POSTed here, signed (Newsmatch-Signature). A public http(s) URL that answers a test delivery.',
    },
    stream: { const: true, description: 'Matches are read from GET /v1/monitors/{id}/events (Server-Sent Events).' },
  },
} as const;

const monitorSchema = {
  type: 'object',
  required: ['id', 'created', 'status', 'query', 'min_score', 'include_edits', 'delivery', 'start_seq'],
  properties: {
    id: { type: 'string' },
    created: { type: 'string', format: 'date-time' },
    status: { type: 'string', enum: ['active', 'paused'] },
    paused_reason: {
      type: ['string', 'null'],
      description: 'Why it paused: deliveries failing for MONITOR_RETRY_HOURS, an empty wallet, the plan’s deliveries used up.',
    },
    paused_seq: {
      type: ['integer', 'null'],
      description: 'Where it stopped matching: POST /v1/match with after_seq set to it lists what it missed.',
    },
    query: {
      type: 'object',
      properties: { text: { type: 'string' }, vector: { type: 'boolean' }, like: { type: 'string' } },
    },
    min_score: { type: 'number' },
    sources: { type: ['array', 'null'], items: { type: 'string' } },
    exclude_sources: { type: ['array', 'null'], items: { type: 'string' } },
    include_edits: { type: 'boolean' },
    delivery: {
      type: 'object',
      required: ['type'],
      properties: { type: { type: 'string', enum: ['webhook', 'stream'] }, url: { type: 'string' } },
    },
    start_seq: { type: 'integer', description: 'Revisions that became searchable from this point of the ingest sequence on are matched.' },
    failures: { type: 'integer', description: 'Webhook attempts failed in a row.' },
  },
} as const;

const created200 = {
  type: 'object',
  required: ['monitor', 'secret'],
  properties: {
    monitor: monitorSchema,
    secret: {
      type: ['string', 'null'],
      description: 'The webhook signing secret (`whsec_…`), shown this once: keep it to verify Newsmatch-Signature. Null for a stream.',
    },
  },
} as const;

const attemptSchema = {
  type: 'object',
  required: ['event', 'at', 'attempt', 'status', 'ok'],
  properties: {
    event: { type: 'string' },
    at: { type: 'string', format: 'date-time' },
    attempt: { type: 'integer' },
    status: { type: ['integer', 'null'], description: "The receiver's HTTP status; null when none came." },
    ok: { type: 'boolean' },
    error: { type: ['string', 'null'] },
    duration_ms: { type: 'integer' },
    next_at: { type: ['string', 'null'], format: 'date-time', description: 'When the next try is due; null once delivered or given up.' },
  },
} as const;

/** Refuses what the route's own rules refuse before the handler: a disabled product, a key scoped elsewhere. */
function admit(req: FastifyRequest, disabled: ReadonlySet<Product>): string {
  if (disabled.has('monitors')) throw new AppError('product_unavailable', 'monitors are not offered by this service');
  const key = req.apiKey!;
  if (key.scopes && !key.scopes.includes('monitors')) throw new AppError('forbidden', `this key's scope (${key.scopes.join(', ')}) does not include monitors`);
  return key.account ?? OPERATOR;
}

const common = ['forbidden', 'product_unavailable'] as const;

const STREAM_EXAMPLE =
  'retry: 3000\n\nid: 52311\nevent: matches\ndata: {"id":"evt_4f1c2b7a9e0d3c5b6a81_52311","type":"monitor.matches","created":"2026-05-02T08:01:00Z","monitor":"mon_4f1c2b7a9e0d3c5b6a81","from_seq":52280,"seq":52311,"count":1,"items":[…]}\n\n: heartbeat\n\n';

export function monitorRoutes(app: FastifyInstance, deps: MonitorRouteDeps): void {
  const tags = [TAGS.monitors.name];
  // Open streams end when the server closes (they would hold it open until SHUTDOWN_TIMEOUT_MS).
  const closing = new AbortController();
  app.addHook('preClose', async () => closing.abort());
  app.post<{ Body: Parameters<Monitors['create']>[2] }>('/v1/monitors', {
    config: {
      auth: 'bearer',
      errors: [
        ...common,
        'not_subscribed',
        'monitor_limit',
        'text_mode_unavailable',
        'embed_unavailable',
        'unknown_article',
        'article_not_embedded',
        'webhook_blocked',
        'webhook_unreachable',
        'shard_unavailable',
      ],
    },
    schema: {
      summary: 'Create a monitor: a standing match query whose new matches are pushed by webhook or stream',
      operationId: 'createMonitor',
      tags,
      security: bearer,
      querystring: noQuery,
      body: createBody,
      response: { 200: created200 },
    },
    handler: async (req) => {
      const account = admit(req, deps.disabled);
      if (deps.shards !== undefined) {
        throw new AppError(
          'shard_unavailable',
          `this node holds the vectors of shards ${deps.shards} only, and a monitor matches what arrives in every shard: make it on a node with CLUSTER_SHARDS=all`,
        );
      }
      return deps.monitors.create(account, req.apiKey!.id, req.body);
    },
  });

  app.get('/v1/monitors', {
    config: { auth: 'bearer', errors: [...common] },
    schema: {
      summary: "The key's account's monitors",
      operationId: 'listMonitors',
      tags,
      security: bearer,
      querystring: noQuery,
      response: {
        200: { type: 'object', required: ['count', 'items'], properties: { count: { type: 'integer' }, items: { type: 'array', items: monitorSchema } } },
      },
    },
    handler: async (req) => {
      const items = deps.monitors.list(admit(req, deps.disabled));
      return { count: items.length, items };
    },
  });

  app.get<{ Params: { id: string } }>('/v1/monitors/:id', {
    config: { auth: 'bearer', errors: [...common, 'monitor_not_found'] },
    schema: {
      summary: 'One monitor',
      operationId: 'getMonitor',
      tags,
      security: bearer,
      params: idParams,
      querystring: noQuery,
      response: { 200: monitorSchema },
    },
    handler: async (req) => deps.monitors.get(admit(req, deps.disabled), req.params.id),
  });

  app.delete<{ Params: { id: string } }>('/v1/monitors/:id', {
    config: { auth: 'bearer', errors: [...common, 'monitor_not_found'] },
    schema: {
      summary: 'Delete a monitor, its events and its delivery log',
      operationId: 'deleteMonitor',
      tags,
      security: bearer,
      params: idParams,
      querystring: noQuery,
      response: { 200: { type: 'object', required: ['id', 'deleted'], properties: { id: { type: 'string' }, deleted: { type: 'boolean' } } } },
    },
    handler: async (req) => {
      await deps.monitors.remove(admit(req, deps.disabled), req.params.id);
      return { id: req.params.id, deleted: true };
    },
  });

  app.post<{ Params: { id: string } }>('/v1/monitors/:id/resume', {
    config: { auth: 'bearer', errors: [...common, 'monitor_not_found'] },
    schema: {
      summary: 'Resume a paused monitor from what is searchable now',
      operationId: 'resumeMonitor',
      tags,
      security: bearer,
      params: idParams,
      querystring: noQuery,
      body: { type: 'object', additionalProperties: false, properties: {}, description: 'Empty, or no body at all.' },
      response: { 200: monitorSchema },
    },
    handler: async (req) => deps.monitors.resume(admit(req, deps.disabled), req.params.id),
  });

  app.get<{ Params: { id: string }; Querystring: { limit: number; before?: string } }>('/v1/monitors/:id/deliveries', {
    config: { auth: 'bearer', badInput: 'bad_parameter', errors: [...common, 'monitor_not_found'] },
    schema: {
      summary: "A webhook monitor's delivery log, newest first",
      operationId: 'listMonitorDeliveries',
      tags,
      security: bearer,
      params: idParams,
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          limit: { type: 'integer', minimum: 1, maximum: 100, default: 50 },
          before: { type: 'string', maxLength: 64, description: 'RFC 3339: attempts before this time (the last `at` of the previous page).' },
        },
      },
      response: {
        200: { type: 'object', required: ['count', 'items'], properties: { count: { type: 'integer' }, items: { type: 'array', items: attemptSchema } } },
      },
    },
    handler: async (req) => {
      const m = deps.monitors.owned(admit(req, deps.disabled), req.params.id);
      const before = req.query.before === undefined ? undefined : Date.parse(req.query.before);
      if (Number.isNaN(before)) throw new AppError('bad_parameter', `before: not an RFC 3339 time: ${JSON.stringify(req.query.before)}`);
      const items = deps.monitorStore.attemptsOf(m.id, req.query.limit, before).map((a) => ({
        event: a.event,
        at: new Date(a.at).toISOString(),
        attempt: a.attempt,
        status: a.status,
        ok: a.ok,
        error: a.error,
        duration_ms: Math.round(a.durationMs),
        next_at: a.nextAt === null ? null : new Date(a.nextAt).toISOString(),
      }));
      return { count: items.length, items };
    },
  });

  app.get<{ Params: { id: string } }>('/v1/monitors/:id/events', {
    config: { auth: 'bearer', errors: [...common, 'monitor_not_found'] },
    schema: {
      summary: "A monitor's events as Server-Sent Events: stored ones after Last-Event-ID (all without it), then live, with heartbeats",
      description:
        'Each event is `id: <seq>`, `event: matches`, and the webhook body as `data`. Reconnect with the last `id` as `Last-Event-ID` to resume with nothing missed and nothing twice. A client that reads too slowly is disconnected (MONITOR_STREAM_MAX_BUFFER_BYTES) and resumes the same way.',
      operationId: 'streamMonitorEvents',
      tags,
      security: bearer,
      params: idParams,
      querystring: noQuery,
      headers: {
        type: 'object',
        properties: { 'last-event-id': { type: 'string', maxLength: 20, description: 'The `id` (a seq) of the last event received.' } },
      },
      response: { 200: { description: 'An event stream.', content: { 'text/event-stream': { schema: { type: 'string' }, example: STREAM_EXAMPLE } } } },
    },
    handler: async (req, reply) => {
      const m = deps.monitors.owned(admit(req, deps.disabled), req.params.id);
      const after = parseLastEventId(req.headers['last-event-id']);
      if (after === 'invalid') throw new AppError('invalid_request', 'Last-Event-ID: the `id` of an event (digits), sent once');
      reply.hijack();
      streamEvents(reply.raw, {
        store: deps.monitorStore,
        feed: deps.monitorFeed,
        monitor: m.id,
        after,
        heartbeatMs: deps.stream.heartbeatMs,
        maxBufferedBytes: deps.stream.maxBufferedBytes,
        log: deps.log,
        signal: closing.signal,
      });
    },
  });
}
