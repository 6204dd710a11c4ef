/**
 * Webhook delivery of monitor events, the way Stripe delivers its own: each event is POSTed as
 * JSON, signed (`Newsmatch-Signature: t=<unix s>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`),
 * with its id in `Newsmatch-Event-Id`; a 2xx delivers it, anything else is retried with
 * exponential backoff and jitter for MONITOR_RETRY_HOURS after the first try, and then given up:
 * the event is marked failed and the monitor pauses.
 *
 * LMDB is the source of truth (store.ts): an event stays in the outbox until the transaction
 * that records its outcome, so a crash at any point delivers it again on the next start (at
 * least once: receivers dedup on the event id). The feed, a timer at the next due entry and
 * `kick()` only say when to look.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import { type HttpClient, WebhookError } from '../net/index.js';
import { formatTime } from '../time.js';
import type { MonitorFeed } from './feed.js';
import type { AttemptOutcome, DeliveryAttempt, MonitorEvent, MonitorRecord, MonitorStore, OutboxEntry } from './store.js';

/** The event's JSON body, as POSTed (the signature covers these exact bytes). */
export function webhookBody(event: MonitorEvent): string {
  return JSON.stringify({
    id: event.id,
    type: 'monitor.matches',
    created: formatTime(Math.floor(event.created / 1000)),
    monitor: event.monitor,
    from_seq: event.fromSeq,
    seq: event.seq,
    count: event.items.length,
    items: event.items,
  });
}

/** The hex HMAC-SHA256 of `<t>.<body>`, keyed by the whole `whsec_…` secret: the header's `v1`. */
export function signPayload(secret: string, t: number, body: string | Buffer): string {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
}

/** The headers of one delivery of `body`, signed at `t` (unix seconds). */
export function webhookHeaders(secret: string, eventId: string, body: string, t: number): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'Newsmatch-Event-Id': eventId,
    'Newsmatch-Signature': `t=${t},v1=${signPayload(secret, t, body)}`,
  };
}

/**
 * The receiver's check, for reference (verify-snippets.ts has it for Node and Python): a
 * `Newsmatch-Signature` header whose `t` is within `toleranceS` of `nowS` and one of whose `v1`
 * values signs `rawBody` with `secret` (several: a receiver may be sent old and new signatures).
 */
export function verifySignature(secret: string, header: string, rawBody: string | Buffer, nowS: number, toleranceS = 300): boolean {
  const pairs = header.split(',').map((p) => {
    const eq = p.indexOf('=');
    return eq < 0 ? ['', ''] : [p.slice(0, eq).trim(), p.slice(eq + 1).trim()];
  });
  const t = pairs.filter(([k]) => k === 't').map(([, v]) => v);
  if (t.length !== 1 || !/^\d{1,15}$/.test(t[0]) || Math.abs(nowS - Number(t[0])) > toleranceS) return false;
  const expected = Buffer.from(signPayload(secret, Number(t[0]), rawBody), 'hex');
  return pairs.some(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/.test(v) && timingSafeEqual(Buffer.from(v, 'hex'), expected));
}

/** Retries back off from 30 s, doubling, to at most an hour, each spread by a jitter in [0.5, 1.5). */
export function backoffMs(attempts: number, random: number): number {
  return Math.min(30_000 * 2 ** (attempts - 1), 3_600_000) * (0.5 + random);
}

/** `ms` as the pause reason says it: minutes under two hours, hours past. */
const spell = (ms: number): string => (ms < 7_200_000 ? `${Math.max(1, Math.round(ms / 60_000))} min` : `${(ms / 3_600_000).toFixed(1)} h`);

export interface WebhookDelivererOptions {
  store: MonitorStore;
  feed: MonitorFeed;
  /** Under the `webhookDelivery` policy. */
  client: HttpClient;
  /** Unix ms: every due time, attempt time and signature time is read from it. */
  clock: () => number;
  log: Logger;
  /** MONITOR_RETRY_HOURS. */
  retryHours: number;
  /** Attempts in flight at once (at most one per monitor). Default 8. */
  concurrency?: number;
  /** After an event is given up (its delivery `failed`, written): the credits' refund. */
  onGivenUp?: (event: MonitorEvent, monitor: MonitorRecord) => Promise<void>;
  /** After giving up paused a monitor that was active. */
  onPaused?: (monitorId: string) => void;
  /** The retries' jitter, in [0, 1). Default Math.random; a test fixes it to know when a retry falls. */
  random?: () => number;
}

/** Outbox entries read per step of a scan; the loop yields between steps. */
const SCAN_STEP = 256;
/** setTimeout's longest delay (a later due entry is looked at again then). */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** After an attempt failed inside the service (not the receiver: LMDB, a bug), its monitor waits this long. */
const INTERNAL_RETRY_MS = 30_000;

export class WebhookDeliverer {
  readonly #o: WebhookDelivererOptions & { concurrency: number };
  /** Each monitor's attempt in flight (one at most). */
  readonly #inFlight = new Map<string, Promise<void>>();
  /** Monitors found paused: their entries stay and are not looked at until `kick()` (or an event of theirs). */
  readonly #skipped = new Set<string>();
  #started = false;
  #stopped = false;
  #unsubscribe: (() => void) | null = null;
  #timer: NodeJS.Timeout | null = null;
  #scan: Promise<void> | null = null;
  /** A wake-up came during a scan: scan again after it. */
  #again = false;

  constructor(options: WebhookDelivererOptions) {
    this.#o = { ...options, concurrency: options.concurrency ?? 8 };
  }

  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    this.#unsubscribe = this.#o.feed.onAny((e) => {
      // A new event means its monitor is active again.
      this.#skipped.delete(e.monitor);
      this.#wake();
    });
    this.#wake();
  }

  /** Starts no attempt after this; resolves once the attempts in flight are settled. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    if (this.#timer) clearTimeout(this.#timer);
    await this.#scan;
    await Promise.all(this.#inFlight.values());
  }

  /** Looks at the outbox now, paused monitors' entries included (call it after a monitor resumes, or the clock moved). */
  kick(): void {
    this.#skipped.clear();
    this.#wake();
  }

  /** Attempts in flight (monitors being delivered to). */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  #wake(): void {
    if (!this.#started || this.#stopped) return;
    if (this.#scan) {
      this.#again = true;
      return;
    }
    this.#scan = this.#dispatchDue()
      .catch((err) => this.#o.log.error({ err }, 'webhook outbox scan failed'))
      .finally(() => {
        this.#scan = null;
        if (this.#again) {
          this.#again = false;
          this.#wake();
        }
      });
  }

  /** Starts an attempt for each due entry whose monitor has none in flight, within the limit; then sets the timer. */
  async #dispatchDue(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const now = this.#o.clock();
    let after: [number, string] | null = null;
    while (!this.#stopped && this.#inFlight.size < this.#o.concurrency) {
      const due = this.#o.store.dueAfter(now, after, SCAN_STEP);
      for (const { key, value } of due) {
        after = key;
        if (this.#inFlight.size >= this.#o.concurrency) break;
        if (this.#inFlight.has(value.monitor) || this.#skipped.has(value.monitor)) continue;
        if (this.#o.store.get(value.monitor)?.status === 'paused') {
          this.#skipped.add(value.monitor);
          continue;
        }
        this.#begin(key, value);
      }
      if (due.length < SCAN_STEP) break;
      // A long outbox (a paused monitor's backlog) is read in steps, the event loop free between them.
      await new Promise((r) => setImmediate(r));
    }
    if (this.#stopped) return;
    // Entries due now but not started wait for an attempt to end (each wakes this) or a kick.
    const next = this.#o.store.nextDueAfter(now);
    if (next === null) return;
    this.#timer = setTimeout(
      () => {
        this.#timer = null;
        this.#wake();
      },
      Math.min(Math.max(next - this.#o.clock(), 0), MAX_TIMER_MS),
    );
    this.#timer.unref();
  }

  #begin(key: [number, string], entry: OutboxEntry): void {
    const { monitor } = entry;
    const run = this.#attempt(key, entry)
      .catch((err) => {
        this.#o.log.error({ err, monitor, event: entry.event }, 'webhook attempt failed inside the service');
        this.#skipped.add(monitor);
        setTimeout(() => {
          this.#skipped.delete(monitor);
          this.#wake();
        }, INTERNAL_RETRY_MS).unref();
      })
      .finally(() => {
        this.#inFlight.delete(monitor);
        this.#wake();
      });
    this.#inFlight.set(monitor, run);
  }

  async #attempt(key: [number, string], entry: OutboxEntry): Promise<void> {
    const { store, client, clock, log } = this.#o;
    const m = store.get(entry.monitor);
    const event = store.event(entry.monitor, entry.seq);
    if (!m || !event || m.webhookUrl === null || m.secret === null) {
      // Deleted (remove() takes its entries too, but one may have been read before), or not a webhook monitor.
      await store.dropOutbox(key);
      return;
    }
    if (m.status === 'paused') {
      this.#skipped.add(m.id);
      return;
    }
    const n = entry.attempts + 1;
    const body = webhookBody(event);
    const started = performance.now();
    let status: number | null = null;
    let error: string | null = null;
    try {
      const answer = await client.post(m.webhookUrl, { body, headers: webhookHeaders(m.secret, event.id, body, Math.floor(clock() / 1000)), untrusted: true });
      status = answer.status;
      if (status < 200 || status >= 300) error = status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`;
    } catch (err) {
      // Not the receiver's (a bug, a URL stored unchecked): still an attempt, so the schedule ends.
      if (!(err instanceof WebhookError)) log.error({ err, monitor: m.id, event: event.id }, 'webhook POST failed inside the service');
      error = err instanceof WebhookError ? err.message : 'could not send (an internal error, logged)';
    }
    const at = clock();
    const attempt: DeliveryAttempt = {
      event: event.id,
      at,
      attempt: n,
      status,
      ok: error === null,
      error,
      durationMs: Math.round(performance.now() - started),
      nextAt: null,
    };
    let outcome: AttemptOutcome = { kind: 'delivered' };
    if (error !== null) {
      const dueAt = Math.round(at + backoffMs(n, (this.#o.random ?? Math.random)()));
      if (dueAt > entry.firstDue + this.#o.retryHours * 3_600_000) {
        const pausedReason = `Webhook deliveries failed for ${spell(at - entry.firstDue)} (${n} attempts of ${event.id}; the last: ${error}); paused after MONITOR_RETRY_HOURS (${this.#o.retryHours} h) of retries. Resume it once the receiver answers 2xx.`;
        outcome = { kind: 'given_up', pausedReason };
      } else {
        outcome = { kind: 'retry', dueAt };
        attempt.nextAt = dueAt;
      }
    }
    const settled = await store.settleAttempt(key, attempt, outcome);
    const line = { monitor: m.id, event: event.id, attempt: n, status, error, durationMs: attempt.durationMs };
    if (!settled) return;
    if (outcome.kind === 'delivered') log.debug(line, 'webhook delivered');
    else if (outcome.kind === 'retry') log.warn({ ...line, nextAt: outcome.dueAt }, 'webhook delivery failed; retrying');
    else {
      log.warn({ ...line, paused: settled.paused }, 'webhook delivery given up');
      try {
        await this.#o.onGivenUp?.(settled.event, settled.monitor);
      } catch (err) {
        log.error({ err, monitor: m.id, event: event.id }, 'webhook give-up hook failed');
      }
      if (settled.paused) this.#o.onPaused?.(m.id);
    }
  }
}

/**
 * The check of a monitor's `webhook_url` at creation: an http(s) URL without credentials (422
 * `invalid_request`), that answers a signed test POST (`monitor.ping`) with any HTTP status.
 * A private or loopback target is 422 `webhook_blocked`; no answer at all (the name does not
 * resolve, the connection is refused, MONITOR_WEBHOOK_TIMEOUT_MS passes) 422 `webhook_unreachable`.
 */
export async function checkWebhookUrl(client: HttpClient, url: string, secret: string, now = Date.now()): Promise<void> {
  const invalid = (why: string) => new AppError('invalid_request', `webhook_url: ${why}`);
  if (!URL.canParse(url)) throw invalid('not an absolute URL');
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw invalid('must be an http or https URL');
  if (target.username || target.password) throw invalid('must not carry a user name or password (check the signature instead)');
  const t = Math.floor(now / 1000);
  const id = `ping_${randomBytes(10).toString('hex')}`;
  const body = JSON.stringify({ id, type: 'monitor.ping', created: formatTime(t) });
  try {
    await client.post(url, { body, headers: webhookHeaders(secret, id, body, t), untrusted: true });
  } catch (err) {
    if (!(err instanceof WebhookError)) throw err;
    if (err.reason === 'blocked')
      throw new AppError(
        'webhook_blocked',
        `webhook_url: ${target.hostname} is a private or loopback address or resolves to one; webhooks go to public addresses only`,
        { cause: err },
      );
    throw new AppError('webhook_unreachable', `webhook_url gave no HTTP answer to a signed test POST: ${err.message}`, { cause: err });
  }
}
