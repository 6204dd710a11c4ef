/**
 * Dashboard sign-in: one-time sign-in links the operator hands out (`newsmatch accounts
 * login-link`), and the sessions they start. Like keys, only SHA-256 hashes of the tokens are
 * stored (a token is 256 random bits: nothing to brute-force), so a copy of the store signs no
 * one in. Everything is in LMDB, committed before the reply: a sign-in, a sign-out or an
 * operator's logout survives kill -9, and a server sees the CLI's changes at its next request.
 *
 * LMDB, in the store (DATA_DIR/lmdb):
 *   dashLinks         sha256(link token) → Grant   deleted when used (single use) or found expired
 *   dashSessions      sha256(session token) → Grant
 *   dashAccountSess   [account id, sha256(session token)] → expiresAt   (an account's sessions, for logout)
 *   dashMeta          'secret' → 32 random bytes: signs cookies and derives CSRF tokens
 *   dashFormsUsed     [sha256(session token), form nonce] → what the form made (a key id)   gone with its session
 *
 * The cookie is `<session token>.<HMAC of it>`: a value this server did not sign is refused
 * before any read. Ranges are read whole
 * before their rows are deleted: no delete runs under an open cursor.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database } from 'lmdb';
import { hashSecret } from '../platform/index.js';
import type { Store } from '../store/index.js';

/** How long a sign-in link works. */
export const LOGIN_LINK_TTL_MS = 15 * 60_000;

/** A sign-in link's record, and a session's. */
interface Grant {
  account: string;
  createdAt: number;
  expiresAt: number;
}

/** A signed-in browser. */
export interface Session {
  /** sha256 of the cookie's token: the session's key in LMDB (never the token itself). */
  id: string;
  account: string;
  expiresAt: number;
  /** The token every form of this session carries (derived from `id`, so stored nowhere). */
  csrf: string;
}

const token = (): string => randomBytes(32).toString('base64url');

/** Compares two strings in time independent of where they differ. */
function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export class SessionStore {
  readonly #links: Database<Grant, string>;
  readonly #sessions: Database<Grant, string>;
  readonly #byAccount: Database<number, [string, string]>;
  readonly #formsUsed: Database<string, [string, string]>;
  readonly #secret: Buffer;

  constructor(
    readonly store: Store,
    readonly clock: () => number = Date.now,
  ) {
    const root = store.root;
    this.#links = root.openDB({ name: 'dashLinks' });
    this.#sessions = root.openDB({ name: 'dashSessions' });
    this.#byAccount = root.openDB({ name: 'dashAccountSess' });
    this.#formsUsed = root.openDB({ name: 'dashFormsUsed' });
    const meta = root.openDB<Buffer, string>({ name: 'dashMeta', encoding: 'binary' });
    // Made once per store; the CLI and a server racing to make it agree (one write wins, both read it).
    this.#secret = root.transactionSync(() => {
      const s = meta.get('secret');
      if (s && s.length >= 32) return Buffer.from(s);
      const made = randomBytes(32);
      meta.putSync('secret', made);
      return made;
    });
  }

  /**
   * A new one-time sign-in link token for `account`, valid LOGIN_LINK_TTL_MS. Expired links of
   * every account are dropped on the way (links are few: the operator makes them by hand).
   */
  createLoginLink(account: string): { token: string; expiresAt: number } {
    const now = this.clock();
    const t = token();
    const expiresAt = now + LOGIN_LINK_TTL_MS;
    this.store.root.transactionSync(() => {
      for (const { key, value } of [...this.#links.getRange()]) if (value.expiresAt <= now) this.#links.removeSync(key);
      this.#links.putSync(hashSecret(t), { account, createdAt: now, expiresAt });
    });
    return { token: t, expiresAt };
  }

  /**
   * Uses a sign-in link: null when it is unknown, used or expired; else a new session of its
   * account lasting `ttlMs`, and its cookie value. The link is gone either way (single use: the
   * read and the delete are one write transaction, so two tabs cannot both use it).
   */
  redeem(linkToken: string, ttlMs: number): { cookie: string; session: Session } | null {
    if (!/^[A-Za-z0-9_-]{43}$/.test(linkToken)) return null;
    const now = this.clock();
    const hash = hashSecret(linkToken);
    return this.store.root.transactionSync(() => {
      const link = this.#links.get(hash);
      if (!link) return null;
      this.#links.removeSync(hash);
      if (link.expiresAt <= now) return null;
      // The account's ended sessions go while its range is being written anyway.
      for (const { key, value } of [...this.#byAccount.getRange({ start: [link.account, ''], end: [link.account, '\uffff'] })]) {
        if (value <= now) {
          this.#byAccount.removeSync(key);
          this.#dropSession(key[1]);
        }
      }
      const t = token();
      const id = hashSecret(t);
      const expiresAt = now + ttlMs;
      this.#sessions.putSync(id, { account: link.account, createdAt: now, expiresAt });
      this.#byAccount.putSync([link.account, id], expiresAt);
      return { cookie: `${t}.${this.#sign(t)}`, session: this.#session(id, link.account, expiresAt) };
    });
  }

  /** The live session a cookie value names, or null (unsigned, unknown, ended or expired). */
  verify(cookie: string): Session | null {
    const dot = cookie.indexOf('.');
    if (dot !== 43 || cookie.length > 200) return null;
    const t = cookie.slice(0, dot);
    if (!sameText(cookie.slice(dot + 1), this.#sign(t))) return null;
    const id = hashSecret(t);
    const s = this.#sessions.get(id);
    if (!s || s.expiresAt <= this.clock()) return null;
    return this.#session(id, s.account, s.expiresAt);
  }

  /** Whether `given` is this session's CSRF token. */
  checkCsrf(session: Session, given: string | undefined): boolean {
    return given !== undefined && sameText(given, session.csrf);
  }

  /** Ends one session (the browser's own "sign out"). */
  end(session: Session): void {
    this.store.root.transactionSync(() => {
      this.#dropSession(session.id);
      this.#byAccount.removeSync([session.account, session.id]);
    });
  }

  /**
   * Ends every session of an account and voids its unused sign-in links (`newsmatch accounts
   * logout`); the count of sessions ended, expired ones included.
   */
  revokeAccount(account: string): number {
    return this.store.root.transactionSync(() => {
      let n = 0;
      for (const key of [...this.#byAccount.getKeys({ start: [account, ''], end: [account, '\uffff'] })]) {
        this.#byAccount.removeSync(key);
        this.#dropSession(key[1]);
        n++;
      }
      for (const { key, value } of [...this.#links.getRange()]) if (value.account === account) this.#links.removeSync(key);
      return n;
    });
  }

  /**
   * A form's one-time nonce (a page's form carries a fresh one): the first post with it makes
   * and records (`repeat: false`); a repeat of that post (a reload, a double click) gets what the
   * first one made (`repeat: true`), so it is not made twice. Read and written in one transaction.
   */
  useForm(session: Session, nonce: string, make: () => string): { made: string; repeat: boolean } {
    return this.store.root.transactionSync(() => {
      const had = this.#formsUsed.get([session.id, nonce]);
      if (had !== undefined) return { made: had, repeat: true };
      const made = make();
      this.#formsUsed.putSync([session.id, nonce], made);
      return { made, repeat: false };
    });
  }

  /** A session's record and what its forms made (inside the caller's write transaction). */
  #dropSession(id: string): void {
    this.#sessions.removeSync(id);
    for (const key of [...this.#formsUsed.getKeys({ start: [id, ''], end: [id, '\uffff'] })]) this.#formsUsed.removeSync(key);
  }

  #session(id: string, account: string, expiresAt: number): Session {
    return { id, account, expiresAt, csrf: createHmac('sha256', this.#secret).update(`csrf\0${id}`).digest('base64url') };
  }

  #sign(t: string): string {
    return createHmac('sha256', this.#secret).update(`session\0${t}`).digest('base64url');
  }
}
