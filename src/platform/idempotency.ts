/**
 * `Idempotency-Key` on metered calls (draft-ietf-httpapi-idempotency-key-header): the first
 * response to a key is kept 24 h and replayed, unbilled, to a retry of the same request; the
 * same key with another request is refused. A retry that arrives while the first is still
 * running waits for it. Responses refunded (5xx, refused after the charge) are not kept, so
 * their retry runs again.
 *
 * LMDB `idempotency`: [key id, Idempotency-Key] → StoredResponse.
 *
 * Cluster mode: kept responses are the cluster's too (`SharedResponses`, a KV bucket), so a
 * retry that a load balancer sends to another node is replayed there, not charged again. Two
 * copies of one request running at the same moment on two nodes are not serialised: each
 * waits only for the same key on its own node.
 */
import { createHash } from 'node:crypto';
import type { Database } from 'lmdb';
import type { Store } from '../store/index.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export interface StoredResponse {
  /** Fingerprint of the request the key was first used with. */
  fingerprint: string;
  status: number;
  contentType: string;
  body: string;
  at: number;
}

/** What makes two requests "the same": method, path and query, and the body. */
export const requestFingerprint = (method: string, url: string, body: unknown): string =>
  createHash('sha256')
    .update(method)
    .update('\0')
    .update(url)
    .update('\0')
    .update(body === undefined ? '' : JSON.stringify(body))
    .digest('base64url');

/** Cluster mode: kept responses every node can replay (src/cluster implements it on a KV bucket). */
export interface SharedResponses {
  get(id: string): Promise<StoredResponse | null>;
  /** Best effort: a response that could not be shared is only kept here (and said in the log). */
  put(id: string, r: StoredResponse): Promise<void>;
}

/** A key's name among the shared responses: a hash (KV keys allow few characters; the key is the client's). */
const sharedId = (scope: string, key: string): string => createHash('sha256').update(scope).update('\0').update(key).digest('hex');

export class IdempotencyStore {
  readonly db: Database<StoredResponse, [string, string]>;
  readonly #running = new Map<string, Promise<void>>();
  #lastSweep = 0;

  constructor(
    readonly store: Store,
    readonly clock: () => number = Date.now,
    readonly shared?: SharedResponses,
  ) {
    this.db = store.root.openDB({ name: 'idempotency' });
  }

  /** The kept response for this key, if any and younger than 24 h. */
  get(scope: string, key: string): StoredResponse | undefined {
    const r = this.db.get([scope, key]);
    return r && this.clock() - r.at < IDEMPOTENCY_TTL_MS ? r : undefined;
  }

  /** `get`, and in cluster mode the response another node kept. */
  async find(scope: string, key: string): Promise<StoredResponse | undefined> {
    const local = this.get(scope, key);
    if (local || !this.shared) return local;
    const r = await this.shared.get(sharedId(scope, key));
    return r && this.clock() - r.at < IDEMPOTENCY_TTL_MS ? r : undefined;
  }

  /**
   * Waits for an earlier request with this key to finish, then marks this one running.
   * Returns the function that ends the mark.
   */
  async begin(scope: string, key: string): Promise<() => void> {
    const id = `${scope}\0${key}`;
    for (let running = this.#running.get(id); running; running = this.#running.get(id)) await running;
    let end!: () => void;
    this.#running.set(id, new Promise<void>((r) => (end = r)));
    return () => {
      this.#running.delete(id);
      end();
    };
  }

  async put(scope: string, key: string, r: Omit<StoredResponse, 'at'>): Promise<void> {
    const now = this.clock();
    await Promise.all([this.db.put([scope, key], { ...r, at: now }), this.shared?.put(sharedId(scope, key), { ...r, at: now })]);
    if (now - this.#lastSweep > 3600_000) {
      this.#lastSweep = now;
      void this.#sweep(now);
    }
  }

  /** Drops responses past their 24 h (hourly, in the background). */
  async #sweep(now: number): Promise<void> {
    for (const { key, value } of this.db.getRange()) if (now - value.at >= IDEMPOTENCY_TTL_MS) await this.db.remove(key);
  }
}
