/**
 * The two doors (README, "Security"): the gateway door (`X-Gateway-Key` + `X-Gateway-Host`, the host
 * equal to GATEWAY_HOST) and the Bearer door (`Authorization: Bearer <key>`).
 */
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { KeyInfo, KeyStore } from '../platform/index.js';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey?: KeyInfo;
  }
}

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
};

/** What the doors need: the key tables, and the gateway host the gateway door admits (none: closed). */
export interface Doors {
  keys: Pick<KeyStore, 'verify'>;
  gatewayHost: string | undefined;
}

export function authenticate(doors: Doors, req: FastifyRequest): KeyInfo {
  const unauthorized = (why: string) => new AppError('unauthorized', why);
  const authorization = header(req, 'authorization');
  if (authorization !== undefined) {
    const m = /^Bearer +(\S+)$/i.exec(authorization.trim());
    if (!m) throw unauthorized('Authorization must be "Bearer <key>"');
    const key = doors.keys.verify(m[1], 'bearer');
    if (!key) throw unauthorized('invalid or revoked Bearer key');
    return key;
  }
  const gatewayKey = header(req, 'x-gateway-key');
  if (gatewayKey === undefined) throw unauthorized('missing key: send X-Gateway-Key and X-Gateway-Host, or Authorization: Bearer <key>');
  // A server without GATEWAY_HOST has no gateway door: say so, not that the caller's header is wrong.
  if (doors.gatewayHost === undefined) throw unauthorized('this server has no GATEWAY_HOST configured: the gateway door is closed; use a Bearer key');
  if (header(req, 'x-gateway-host') !== doors.gatewayHost) throw unauthorized("X-Gateway-Host is missing or not this service's gateway host");
  const key = doors.keys.verify(gatewayKey, 'gateway');
  if (!key) throw unauthorized('invalid or revoked gateway key');
  return key;
}
