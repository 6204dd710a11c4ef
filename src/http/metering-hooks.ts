/**
 * Fastify hooks that walk a metered route through the core's metering path (platform/
 * metering.ts), in its order: authenticate and authorise and rate-limit
 * (onRequest, before the body is read) → schema validation (Fastify) → idempotent replay,
 * concurrency slot and charge (preHandler) → handler → the charge committed, a refund of a
 * 400, 422 or 5xx and keeping the response for its Idempotency-Key (onSend) → release
 * (onResponse).
 *
 * The handler runs while its debit commits (decided from the wallet in memory, so a refusal is
 * known before it runs), and onSend holds the response until the debit has committed: no
 * answer goes out for a call not paid, and a call's latency holds one commit less. A metered
 * route therefore never hijacks its reply.
 *
 * A route opts in with `config: { auth: true, product: 'match' }` (or a function of the
 * request, for `engine`-selected products).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { Admission, Charge, IdempotencyStore, Metering, Product } from '../platform/index.js';
import { IDEMPOTENCY_KEY, requestFingerprint } from '../platform/index.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The product a call of this route bills (a function of the request for `engine` routes). */
    product?: Product | ((req: FastifyRequest) => Product);
  }
  interface FastifyRequest {
    metered?: Metered;
  }
}

interface Metered {
  admission: Admission;
  charge: Charge | null;
  release?: () => void;
  /** The debit committing while the handler runs: onSend waits for it (and takes what landed). */
  landing?: Promise<Charge | null>;
  idempotency?: { key: string; fingerprint: string; end: () => void };
  replayed?: boolean;
  /** Admitted and charged: the handler runs. Only such calls are kept for their Idempotency-Key. */
  ran?: boolean;
}

/** Statuses a charged call is refunded for: refused input (never billed) and our failures. */
const refunded = (status: number) => status === 400 || status === 422 || status >= 500;

function creditHeaders(reply: FastifyReply, charged: number, remaining: number | null): void {
  reply.header('x-credits-charged', String(charged));
  if (remaining !== null) reply.header('x-credits-remaining', String(remaining));
}

export function meteringHooks(app: FastifyInstance, { metering, idempotency }: { metering: Metering; idempotency: IdempotencyStore }): void {
  // After authentication (app.ts): authorise and take from the rate limit.
  app.addHook('onRequest', async (req, reply) => {
    const spec = req.routeOptions.config.product;
    if (spec === undefined || !req.apiKey) return;
    const product = typeof spec === 'function' ? spec(req) : spec;
    try {
      const admission = metering.authorise(req.apiKey, product);
      if (admission.rateLimit !== undefined) reply.header('ratelimit-policy', admission.ratePolicy).header('ratelimit', admission.rateLimit);
      req.metered = { admission, charge: null };
    } catch (e) {
      // A refused call still says where the account stands.
      const account = req.apiKey.scheme === 'bearer' ? (req.apiKey.account ?? null) : null;
      if (account) creditHeaders(reply, 0, metering.remaining(account));
      throw e;
    }
  });

  // After validation: a request refused there was never charged.
  app.addHook('preHandler', async (req, reply) => {
    const m = req.metered;
    if (!m) return;
    const idemKey = req.headers['idempotency-key'];
    if (idemKey !== undefined) {
      if (typeof idemKey !== 'string' || !IDEMPOTENCY_KEY.test(idemKey)) {
        throw new AppError('invalid_request', 'Idempotency-Key must be 1 to 255 visible ASCII characters');
      }
      const fp = requestFingerprint(req.method, req.url, req.body);
      const end = await idempotency.begin(m.admission.keyId, idemKey);
      m.idempotency = { key: idemKey, fingerprint: fp, end };
      const kept = await idempotency.find(m.admission.keyId, idemKey);
      if (kept) {
        if (kept.fingerprint !== fp) throw new AppError('invalid_request', 'this Idempotency-Key was used with a different request');
        m.replayed = true;
        if (m.admission.account) creditHeaders(reply, 0, metering.remaining(m.admission.account));
        return reply.code(kept.status).header('content-type', kept.contentType).header('idempotent-replayed', 'true').send(kept.body);
      }
    }
    m.release = metering.admit(m.admission.product);
    const { decided, landed } = metering.charge(m.admission, req.id);
    if (decided === undefined) {
      // Refused: `landed` rejects with why.
      m.charge = await landed;
    } else {
      m.charge = decided;
      m.landing = landed;
      // Awaited in onSend; a reply never sent (the client went away) leaves it unheard.
      landed.catch(() => undefined);
    }
    m.ran = true;
    if (m.charge) creditHeaders(reply, m.charge.credits, m.charge.remaining);
  });

  app.addHook('onSend', async (req, reply, payload) => {
    const m = req.metered;
    if (!m || m.replayed) return payload;
    if (m.landing) {
      const landing = m.landing;
      m.landing = undefined;
      try {
        m.charge = await landing;
      } catch (e) {
        // Not paid after all (the commit failed, or, computed again after another process
        // wrote, refused): that error is the answer, and nothing was charged.
        m.charge = null;
        m.ran = false;
        throw e;
      }
      // What landed is what counts (it differs from the decision only after a conflict).
      if (m.charge) creditHeaders(reply, m.charge.credits, m.charge.remaining);
    }
    if (m.charge && refunded(reply.statusCode)) {
      m.charge = await metering.refund(m.charge, `HTTP ${reply.statusCode}`);
      creditHeaders(reply, 0, m.charge.remaining);
    } else if (!m.charge && m.admission.account) {
      // Refused before the charge (validation, quota): nothing was billed.
      creditHeaders(reply, 0, metering.remaining(m.admission.account));
    }
    const idem = m.idempotency;
    // A call refused before it ran (an empty wallet, a plan past its stop) is not kept: its
    // retry, after credits are bought, must run.
    // A body is a string when Fastify serialised it, a Buffer when the handler did (/v1/match).
    if (idem && m.ran && !refunded(reply.statusCode) && (typeof payload === 'string' || Buffer.isBuffer(payload))) {
      const body = typeof payload === 'string' ? payload : payload.toString('utf8');
      const contentType = String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8');
      await idempotency.put(m.admission.keyId, idem.key, { fingerprint: idem.fingerprint, status: reply.statusCode, contentType, body });
    }
    return payload;
  });

  const finish = async (req: FastifyRequest) => {
    req.metered?.release?.();
    req.metered?.idempotency?.end();
  };
  app.addHook('onResponse', finish);
  app.addHook('onRequestAbort', finish);
}
