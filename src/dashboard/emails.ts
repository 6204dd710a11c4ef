/**
 * The address an account holder asks for sign-in links at (`newsmatch accounts email`), one an
 * account, an address belonging to one account at most. Kept beside the sessions, not in the
 * billing tables: only the dashboard reads it.
 *
 * LMDB, in the store (DATA_DIR/lmdb):
 *   dashEmails        address (trimmed, lower-cased) → account id
 *   dashAccountEmail  account id → address
 */
import type { Database } from 'lmdb';
import { AppError } from '../errors.js';
import type { Store } from '../store/index.js';

/** An address as stored and compared: trimmed and lower-cased; null when it is not one. */
export function normaliseEmail(raw: string): string | null {
  const e = raw.trim().toLowerCase();
  return e.length <= 254 && /^[^\s@<>()",;:\\[\]]+@[^\s@<>()",;:\\[\]]+\.[^\s@<>()",;:\\[\]]+$/.test(e) ? e : null;
}

export class AccountEmails {
  readonly #byEmail: Database<string, string>;
  readonly #byAccount: Database<string, string>;

  constructor(readonly store: Store) {
    this.#byEmail = store.root.openDB({ name: 'dashEmails' });
    this.#byAccount = store.root.openDB({ name: 'dashAccountEmail' });
  }

  /** Sets (or, with null, removes) an account's address; 422 invalid_request when it is not one or another account has it. */
  set(account: string, raw: string | null): string | null {
    const email = raw === null ? null : normaliseEmail(raw);
    if (raw !== null && email === null) throw new AppError('invalid_request', `not an email address: ${JSON.stringify(raw.slice(0, 100))}`);
    return this.store.root.transactionSync(() => {
      const owner = email === null ? undefined : this.#byEmail.get(email);
      if (owner !== undefined && owner !== account) throw new AppError('invalid_request', `${email} is the address of another account`);
      const old = this.#byAccount.get(account);
      if (old !== undefined) this.#byEmail.removeSync(old);
      if (email === null) this.#byAccount.removeSync(account);
      else {
        this.#byAccount.putSync(account, email);
        this.#byEmail.putSync(email, account);
      }
      return email;
    });
  }

  of(account: string): string | null {
    return this.#byAccount.get(account) ?? null;
  }

  /** The account with this address, if any. */
  accountOf(raw: string): string | null {
    const email = normaliseEmail(raw);
    return email === null ? null : (this.#byEmail.get(email) ?? null);
  }
}
