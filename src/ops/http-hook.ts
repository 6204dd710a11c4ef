/**
 * The per-response hook (Fastify `onResponse`, callback style: no promise per request). Its
 * cost on every call, POST /v1/match included, is one `routeOptions` read and
 * `RequestMetrics.observe`.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { RequestMetrics } from './request-metrics.js';

export function countResponses(requests: RequestMetrics): (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void {
  return (req, reply, done) => {
    // The route's config object stands for its pattern: the raw URL is never read.
    requests.observe(req.routeOptions.config, req.method, reply.statusCode, reply.elapsedTime);
    done();
  };
}
