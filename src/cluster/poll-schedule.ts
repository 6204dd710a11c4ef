/**
 * One poller per outlet across the cluster. Each outlet's next poll time, cluster-wide, is in
 * the `nm-polls` KV bucket; the poll due at time T is taken by the one node that creates the
 * key `<outlet>.<T>` in `nm-poll-leases` (a create: the key must not exist, which the NATS
 * servers check in order even when replicated). That node polls, then sets the next time.
 * Lease keys expire after POLL_LEASE_SEC (the bucket's age limit): a node that died holding
 * one lets another take the outlet over then.
 */
import type { KV } from '@nats-io/kv';
import { takenAlready } from './revision-log.js';

/** How long a lease lasts: longer than any poll of one outlet (its feeds and pages, each under its deadline). */
export const POLL_LEASE_SEC = 600;

/** KV keys hold letters, digits, `-`, `_`, `=`, `/` and `.`; an outlet's name may hold anything. */
const keyOf = (outlet: string) => Buffer.from(outlet).toString('base64url');

export type Claim = { ok: true } | { ok: false; next?: number };

export class PollSchedule {
  constructor(
    /** Outlet → `{ next, node }`: when it is due, and who polled it last. */
    readonly schedule: KV,
    /** `<outlet>.<due time>` → the node polling it; kept POLL_LEASE_SEC. */
    readonly leases: KV,
    readonly node: string,
  ) {}

  /** Takes the outlet's poll when it is due cluster-wide and no node took it; `next`: when it is due, when that is why not. */
  async claim(outlet: string, now: number): Promise<Claim> {
    const entry = await this.schedule.get(keyOf(outlet));
    const next = entry?.operation === 'PUT' ? (entry.json() as { next: number }).next : 0;
    if (next > now) return { ok: false, next };
    try {
      await this.leases.create(`${keyOf(outlet)}.${next}`, this.node);
      return { ok: true };
    } catch (e) {
      // Another node took this poll.
      if (takenAlready(e)) return { ok: false };
      throw e;
    }
  }

  /** After a poll: the outlet's next poll time for every node. */
  async done(outlet: string, next: number): Promise<void> {
    await this.schedule.put(keyOf(outlet), JSON.stringify({ next, node: this.node }));
  }
}
