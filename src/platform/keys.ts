/**
 * API keys. A secret is shown once, at creation; only its SHA-256 is stored (secrets are 256
 * random bits, so a fast hash is enough: there is nothing to brute-force).
 *
 * Secret form: `nmg_<43 base64url chars>` (gateway) or `nmb_…` (bearer); the prefix says the door.
 *
 * LMDB, in the store (DATA_DIR/lmdb):
 *   keys        key id → KeyRecord
 *   keyHashes   sha256(secret), hex → key id
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Database } from 'lmdb';
import type { Store } from '../store/index.js';
import { OPERATOR } from './journal.js';
import type { Rate } from './products.js';

export type KeyScheme = 'gateway' | 'bearer';

export interface KeyRecord {
  id: string;
  scheme: KeyScheme;
  name: string | null;
  hash: string;
  createdAt: number;
  revokedAt: number | null;
  /** Bearer: the account it belongs to ('operator' when created without one). Gateway: none. */
  account?: string | null;
  /** Products the key may call; null or absent: every product its account subscribes to. */
  scopes?: string[] | null;
  /** Gateway keys: requests per window past which they get 429 rate_limited. */
  rate?: Rate | null;
  /** The secret's first HINT_CHARS characters (`nmb_Xy3kQp`), so a holder can tell keys apart; absent on older keys. */
  hint?: string;
}

const PREFIX: Record<KeyScheme, string> = { gateway: 'nmg_', bearer: 'nmb_' };

/** The scheme's prefix and 6 of the 43 random characters: 36 of 256 bits, which leaves nothing guessable. */
const HINT_CHARS = 10;

/** What is stored of a secret (a key's, a dashboard token's): its SHA-256, hex. */
export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/** A key as listed: everything but the hash. */
export type KeyInfo = Omit<KeyRecord, 'hash'>;

const infoOf = ({ hash: _hash, ...info }: KeyRecord): KeyInfo => info;

export class KeyStore {
  readonly #keys: Database<KeyRecord, string>;
  readonly #hashes: Database<string, string>;

  constructor(readonly store: Store) {
    this.#keys = store.root.openDB({ name: 'keys' });
    this.#hashes = store.root.openDB({ name: 'keyHashes' });
  }

  /**
   * A new key. Bearer keys belong to `account` (default: the operator's); gateway keys belong to
   * none and may carry a `rate`. `scopes` limits the products a key may call.
   */
  create(opts: { scheme: KeyScheme; name?: string; account?: string; scopes?: string[]; rate?: Rate }): { id: string; secret: string } {
    const secret = PREFIX[opts.scheme] + randomBytes(32).toString('base64url');
    const id = randomUUID();
    const hash = hashSecret(secret);
    const bearer = opts.scheme === 'bearer';
    const record: KeyRecord = {
      id,
      scheme: opts.scheme,
      name: opts.name ?? null,
      hash,
      createdAt: Date.now(),
      revokedAt: null,
      account: bearer ? (opts.account ?? OPERATOR) : null,
      scopes: opts.scopes && opts.scopes.length > 0 ? opts.scopes : null,
      rate: bearer ? null : (opts.rate ?? null),
      hint: secret.slice(0, HINT_CHARS),
    };
    this.store.root.transactionSync(() => {
      this.#keys.putSync(id, record);
      this.#hashes.putSync(hash, id);
    });
    return { id, secret };
  }

  list(): KeyInfo[] {
    return [...this.#keys.getRange()].map(({ value }) => infoOf(value));
  }

  /** A key by id (revoked ones too), without its hash. */
  get(id: string): KeyInfo | undefined {
    const k = this.#keys.get(id);
    return k && infoOf(k);
  }

  /** Revokes a live key; false when there is no such live key. */
  revoke(id: string): boolean {
    return this.store.root.transactionSync(() => {
      const k = this.#keys.get(id);
      if (!k || k.revokedAt !== null) return false;
      this.#keys.putSync(id, { ...k, revokedAt: Date.now() });
      return true;
    });
  }

  /** A key's whole record, its hash included: what cluster mode shares with the other nodes (src/cluster). */
  record(id: string): KeyRecord | undefined {
    return this.#keys.get(id);
  }

  /**
   * Stores a key record another node made or changed (cluster mode): as it is, except that a
   * key revoked here stays revoked. Returns whether anything changed.
   */
  mirror(r: KeyRecord): boolean {
    return this.store.root.transactionSync(() => {
      const mine = this.#keys.get(r.id);
      if (mine && (mine.revokedAt !== null || (r.revokedAt === null && mine.hash === r.hash))) return false;
      this.#keys.putSync(r.id, r);
      this.#hashes.putSync(r.hash, r.id);
      return true;
    });
  }

  /** The live key of this scheme with this secret, or null. */
  verify(secret: string, scheme: KeyScheme): KeyInfo | null {
    if (!secret.startsWith(PREFIX[scheme])) return null;
    const id = this.#hashes.get(hashSecret(secret));
    const k = id === undefined ? undefined : this.#keys.get(id);
    if (!k || k.scheme !== scheme || k.revokedAt !== null) return null;
    const { hash: _hash, ...info } = k;
    return info;
  }
}
