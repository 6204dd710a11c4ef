/**
 * Monitors' records, in LMDB beside the articles (the source of truth for them too):
 *
 *   monitors          id → MonitorRecord
 *   monitorOwners     [account, id] → true                  (an account's monitors, in id order)
 *   monitorEvents     [monitor, seq] → StoredEvent          (a monitor's events in ingest order)
 *   monitorOutbox     [dueAt, eventId] → OutboxEntry        (webhook events still to deliver, by when)
 *   monitorAttempts   [monitor, at, n] → DeliveryAttempt    (the delivery log, oldest first)
 *   monitorMeta       'through' → label                     (every window below it is matched)
 *   monitorUnpaid     [monitor, seq] → true                 (events written, not yet charged)
 *
 * An event is one window of the ingest sequence's matches for one monitor: its `seq` is the
 * window's end, so a monitor's events are ordered and numbered by it, and an event's id names
 * both (a receiver dedups on it). An event holds its matches as references (revision, best
 * chunk, score; revisions never change): they are written as articles when it is delivered, so
 * matching a window writes a few bytes a match. The pump writes a window's events (unpaid) and
 * the new `through` in one transaction: a crash before it re-matches the window on the next
 * start, a crash after it loses nothing, and no window is matched twice. Events are charged
 * after their window commits and delivered (outbox, streams) only once paid: a crash between
 * the two leaves them in monitorUnpaid, and the next start charges each unless the ledger
 * already holds its debit (the event id is the debit's request id), so a match is charged once.
 */
import type { Database, RootDatabase } from 'lmdb';
import { articleFields, type ArticleFields, type Store } from '../store/index.js';

export type MonitorStatus = 'active' | 'paused';

export interface MonitorQuery {
  text?: string;
  /** Sent as a vector: kept as sent (the matcher uses `vectors`). */
  vector?: boolean;
  like?: string;
}

export interface MonitorRecord {
  id: string;
  account: string;
  /** The key that created it (its charges name it). */
  keyId: string;
  /** Unix ms. */
  created: number;
  query: MonitorQuery;
  /** The query's unit vectors, n × 1024 float32 little-endian (one for text and vector; a chunk each for like). */
  vectors: Uint8Array;
  minScore: number;
  sources: string[] | null;
  excludeSources: string[] | null;
  includeEdits: boolean;
  /** like: the liked article's URL, whose new revisions are left out (they would match themselves). */
  excludeUrl: string | null;
  /** Where matches go: a URL they are POSTed to, or null for a stream (GET /v1/monitors/{id}/events). */
  webhookUrl: string | null;
  /** The HMAC-SHA256 key of webhook signatures (`whsec_…`), shown once at creation; null for a stream. */
  secret: string | null;
  status: MonitorStatus;
  /** Why it is paused (auto-pause after failed deliveries, an empty wallet, the plan's deliveries used up). */
  pausedReason: string | null;
  /** The sequence from which it has not matched while paused: POST /v1/match after_seq reads what it missed. */
  pausedSeq: number | null;
  /** Revisions that became searchable before this point are not its matches (the sequence at creation). */
  startSeq: number;
  /** Webhook deliveries failed in a row (reset by a success); past the limit it pauses. */
  failures: number;
}

/** A match as /v1/match returns one. */
export interface MonitorItem extends ArticleFields {
  score: number;
  best_chunk: string;
}

/** A window's matches for one monitor, as the pump writes them: newest first by event_time. */
export interface NewEvent {
  monitor: string;
  /** The window: revisions that became searchable in [fromSeq, seq). */
  fromSeq: number;
  seq: number;
  /** Unix ms. */
  created: number;
  ords: number[];
  /** Each revision's best chunk in the window, and its score. */
  labels: number[];
  scores: number[];
}

/** An event as LMDB holds it. */
export interface StoredEvent extends NewEvent {
  /** `evt_<monitor>_<seq>`: the same for every delivery of the event. */
  id: string;
  account: string;
  /** Credits it costs: one a match. */
  credits: number;
  /** Webhook events: delivered (a 2xx), still trying, or given up after the retry schedule; null for a stream's. */
  delivery: 'pending' | 'delivered' | 'failed' | null;
}

/** An event as it is delivered: its matches written out as /v1/match items. */
export interface MonitorEvent extends Omit<StoredEvent, 'ords' | 'labels' | 'scores'> {
  items: MonitorItem[];
  /** Charged and deliverable; an unpaid event is neither delivered nor streamed. */
  paid: boolean;
}

export interface OutboxEntry {
  event: string;
  monitor: string;
  seq: number;
  /** Attempts made so far. */
  attempts: number;
  /** Unix ms of the first attempt's due time: retries stop this long after it (MONITOR_RETRY_HOURS). */
  firstDue: number;
}

export interface DeliveryAttempt {
  event: string;
  /** Unix ms. */
  at: number;
  /** 1 for the first try of the event. */
  attempt: number;
  /** The receiver's HTTP status, or null when none came (refused, timed out, blocked). */
  status: number | null;
  ok: boolean;
  error: string | null;
  durationMs: number;
  /** When the next try is due (unix ms), or null: delivered or given up. */
  nextAt: number | null;
}

export const eventId = (monitor: string, seq: number): string => `evt_${monitor.slice(4)}_${seq}`;

/** Parses an event id into its monitor and sequence (null: not one of ours). */
export function parseEventId(id: string): { monitor: string; seq: number } | null {
  const m = /^evt_([0-9a-f]{20})_(\d{1,15})$/.exec(id);
  return m ? { monitor: `mon_${m[1]}`, seq: Number(m[2]) } : null;
}

/** Attempts kept per monitor in the delivery log (the oldest go first). */
export const ATTEMPTS_KEPT = 1000;

export class MonitorStore {
  readonly monitors: Database<MonitorRecord, string>;
  readonly owners: Database<true, [string, string]>;
  readonly events: Database<StoredEvent, [string, number]>;
  readonly outbox: Database<OutboxEntry, [number, string]>;
  readonly attempts: Database<DeliveryAttempt, [string, number, number]>;
  readonly unpaid: Database<true, [string, number]>;
  readonly #meta: Database<number, string>;

  readonly root: RootDatabase;
  /** Names of sources by id, as of the count of sources it was read at. */
  #names: { count: number; byId: Map<number, string> } = { count: -1, byId: new Map() };

  constructor(readonly store: Store) {
    const root = store.root;
    this.root = root;
    this.monitors = root.openDB({ name: 'monitors' });
    this.owners = root.openDB({ name: 'monitorOwners' });
    this.events = root.openDB({ name: 'monitorEvents' });
    this.outbox = root.openDB({ name: 'monitorOutbox' });
    this.attempts = root.openDB({ name: 'monitorAttempts' });
    this.#meta = root.openDB({ name: 'monitorMeta' });
    this.unpaid = root.openDB({ name: 'monitorUnpaid' });
  }

  get(id: string): MonitorRecord | undefined {
    return this.monitors.get(id);
  }

  /** An account's monitors, in id order. */
  list(account: string): MonitorRecord[] {
    const out: MonitorRecord[] = [];
    for (const { key } of this.owners.getRange({ start: [account], end: [account, '\uffff'] })) {
      const m = this.monitors.get(key[1]);
      if (m) out.push(m);
    }
    return out;
  }

  count(account: string): number {
    return this.owners.getKeysCount({ start: [account], end: [account, '\uffff'] });
  }

  /** Every monitor (the matcher's set at start-up). */
  *all(): Iterable<MonitorRecord> {
    for (const { value } of this.monitors.getRange()) yield value;
  }

  put(m: MonitorRecord): Promise<boolean> {
    return this.root.transaction(() => {
      this.monitors.put(m.id, m);
      this.owners.put([m.account, m.id], true);
      return true;
    });
  }

  /** Changes a monitor in one transaction (f sees the stored record; undefined: it was deleted meanwhile). */
  update(id: string, f: (m: MonitorRecord) => void): Promise<MonitorRecord | undefined> {
    return this.root.transaction(() => {
      const m = this.monitors.get(id);
      if (!m) return undefined;
      const next = structuredClone(m);
      f(next);
      this.monitors.put(id, next);
      return next;
    });
  }

  /** Deletes a monitor with its events, outbox entries and delivery log. */
  remove(id: string): Promise<boolean> {
    return this.root.transaction(() => {
      const m = this.monitors.get(id);
      if (!m) return false;
      this.monitors.remove(id);
      this.owners.remove([m.account, id]);
      for (const { key } of this.events.getRange({ start: [id], end: [id, Number.MAX_SAFE_INTEGER] })) this.events.remove(key);
      for (const { key } of this.attempts.getRange({ start: [id], end: [id, Number.MAX_SAFE_INTEGER] })) this.attempts.remove(key);
      for (const { key } of this.unpaid.getRange({ start: [id], end: [id, Number.MAX_SAFE_INTEGER] })) this.unpaid.remove(key);
      for (const { key, value } of this.outbox.getRange()) if (value.monitor === id) this.outbox.remove(key);
      return true;
    });
  }

  /** Where the matcher is: every window below it has its events written. */
  through(): number | undefined {
    return this.#meta.get('through');
  }

  /**
   * A matched window, in one transaction: its events (unpaid) and `through` moved to the window's end. `settle` then pays or drops them. Returns the events
   * written (a monitor deleted meanwhile has none).
   */
  commitWindow(to: number, events: NewEvent[]): Promise<StoredEvent[]> {
    return this.root.transaction(() => {
      const written: StoredEvent[] = [];
      for (const e of events) {
        const m = this.monitors.get(e.monitor);
        if (!m) continue;
        const stored: StoredEvent = { ...e, id: eventId(e.monitor, e.seq), account: m.account, credits: e.ords.length, delivery: null };
        this.events.put([e.monitor, e.seq], stored);
        this.unpaid.put([e.monitor, e.seq], true);
        written.push(stored);
      }
      this.#meta.put('through', to);
      return written;
    });
  }

  /**
   * Unpaid events' outcomes, in one transaction: paid (deliverable; a webhook monitor's goes to
   * the outbox, due `now`), or refused (`reason`: the event is dropped and its monitor paused,
   * from the event's window on).
   */
  settle(outcomes: { event: StoredEvent; refused: string | null }[], now: number): Promise<boolean> {
    return this.root.transaction(() => {
      for (const { event: e, refused } of outcomes) {
        const key: [string, number] = [e.monitor, e.seq];
        if (!this.unpaid.get(key)) continue;
        this.unpaid.remove(key);
        const m = this.monitors.get(e.monitor);
        if (!m) continue;
        if (refused !== null) {
          this.events.remove(key);
          if (m.status === 'active') this.monitors.put(m.id, { ...m, status: 'paused', pausedReason: refused, pausedSeq: e.fromSeq });
          continue;
        }
        if (m.webhookUrl === null) continue;
        this.events.put(key, { ...e, delivery: 'pending' });
        this.outbox.put([now, e.id], { event: e.id, monitor: e.monitor, seq: e.seq, attempts: 0, firstDue: now });
      }
      return true;
    });
  }

  /** Events written but not yet charged (a crash between the two), in window order. */
  unpaidEvents(): StoredEvent[] {
    const out: StoredEvent[] = [];
    for (const { key } of this.unpaid.getRange()) {
      const e = this.events.get(key);
      if (e) out.push(e);
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  /** An event with its matches written out as /v1/match items (the revisions as stored). */
  render(e: StoredEvent): MonitorEvent {
    const sources = this.store.listSources();
    if (sources.length !== this.#names.count) this.#names = { count: sources.length, byId: new Map(sources.map((x) => [x.id, x.name])) };
    const { ords, labels, scores, ...head } = e;
    const items = ords.map((ord, i): MonitorItem => {
      const rev = this.store.revisions.get(ord)!;
      return { ...articleFields(rev, this.#names.byId), score: scores[i], best_chunk: this.store.chunks.get(labels[i])!.text };
    });
    return { ...head, items, paid: !this.unpaid.doesExist([e.monitor, e.seq]) };
  }

  /** Sets `through` alone (the first start: matching begins at what LMDB holds then). */
  setThrough(to: number): Promise<boolean> {
    return this.#meta.put('through', to);
  }

  /** The sequence of a monitor's latest event, or null before its first. */
  lastSeq(monitor: string): number | null {
    for (const key of this.events.getKeys({ start: [monitor, Number.MAX_SAFE_INTEGER], end: [monitor, -1], reverse: true, limit: 1 })) return key[1];
    return null;
  }

  event(monitor: string, seq: number): MonitorEvent | undefined {
    const e = this.events.get([monitor, seq]);
    return e && this.render(e);
  }

  /** A monitor's paid events with seq > `after`, oldest first. */
  eventsAfter(monitor: string, after: number, limit: number): MonitorEvent[] {
    const out: MonitorEvent[] = [];
    for (const { key, value } of this.events.getRange({ start: [monitor, after + 1], end: [monitor, Number.MAX_SAFE_INTEGER] })) {
      if (this.unpaid.doesExist(key)) continue;
      out.push(this.render(value));
      if (out.length >= limit) break;
    }
    return out;
  }

  /** Outbox entries due at or before `now`, earliest first. */
  due(now: number, limit: number): { key: [number, string]; value: OutboxEntry }[] {
    const out: { key: [number, string]; value: OutboxEntry }[] = [];
    for (const { key, value } of this.outbox.getRange({ end: [now, '\uffff'], limit })) out.push({ key, value });
    return out;
  }

  /** When the earliest outbox entry is due (unix ms), or null when it is empty. */
  nextDue(): number | null {
    for (const { key } of this.outbox.getRange({ limit: 1 })) return key[0];
    return null;
  }

  /** A monitor's delivery log, newest first, before `before` (unix ms; paging). */
  attemptsOf(monitor: string, limit: number, before = Number.MAX_SAFE_INTEGER): DeliveryAttempt[] {
    const out: DeliveryAttempt[] = [];
    for (const { value } of this.attempts.getRange({ start: [monitor, before], end: [monitor, 0], reverse: true, limit })) out.push(value);
    return out;
  }

  // Webhook delivery (webhooks.ts): the deliverer's scan, and each attempt's writes in one transaction.

  /** Outbox entries due at or before `now` that come after the key `after` (null: from the first), earliest first. */
  dueAfter(now: number, after: [number, string] | null, limit: number): { key: [number, string]; value: OutboxEntry }[] {
    const out: { key: [number, string]; value: OutboxEntry }[] = [];
    const range = this.outbox.getRange({ start: after ?? undefined, end: [now, '\uffff'], limit: after ? limit + 1 : limit });
    for (const { key, value } of range) if (!(after && key[0] === after[0] && key[1] === after[1])) out.push({ key, value });
    return out.slice(0, limit);
  }

  /** When the earliest outbox entry due after `now` is due (unix ms), or null when there is none. */
  nextDueAfter(now: number): number | null {
    for (const key of this.outbox.getKeys({ start: [now, '\uffff'], limit: 1 })) return key[0];
    return null;
  }

  /** Removes an outbox entry whose monitor or event is gone. */
  dropOutbox(key: [number, string]): Promise<boolean> {
    return this.root.transaction(() => {
      if (!this.outbox.get(key)) return false;
      this.outbox.remove(key);
      return true;
    });
  }

  /**
   * One delivery attempt's outcome, in one transaction: its outbox entry removed (and, for a
   * retry, put back at its next due time), the event's `delivery`, the monitor's `failures`
   * (and, on giving up, its pause: a monitor already paused keeps its reason), the attempt
   * logged. Null, with nothing written, when the entry is no longer there (its monitor was
   * deleted meanwhile); `paused`: this outcome paused the monitor.
   */
  settleAttempt(
    key: [number, string],
    attempt: DeliveryAttempt,
    outcome: AttemptOutcome,
  ): Promise<{ event: MonitorEvent; monitor: MonitorRecord; paused: boolean } | null> {
    return this.root.transaction(() => {
      const entry = this.outbox.get(key);
      if (!entry) return null;
      this.outbox.remove(key);
      const m = this.monitors.get(entry.monitor);
      const e = this.events.get([entry.monitor, entry.seq]);
      if (!m || !e) return null;
      const monitor: MonitorRecord = { ...m, failures: outcome.kind === 'delivered' ? 0 : m.failures + 1 };
      const event: StoredEvent = { ...e };
      let paused = false;
      if (outcome.kind === 'retry') this.outbox.put([outcome.dueAt, entry.event], { ...entry, attempts: attempt.attempt });
      else event.delivery = outcome.kind === 'delivered' ? 'delivered' : 'failed';
      if (outcome.kind === 'given_up' && monitor.status === 'active') {
        Object.assign(monitor, { status: 'paused', pausedReason: outcome.pausedReason, pausedSeq: e.fromSeq });
        paused = true;
      }
      if (event.delivery !== e.delivery) this.events.put([e.monitor, e.seq], event);
      this.monitors.put(m.id, monitor);
      this.#logAttempt(m.id, attempt);
      return { event: { ...this.render(event), paid: true }, monitor, paused };
    });
  }

  /** Appends to a monitor's delivery log (n after any attempt logged at the same ms) and drops what is past ATTEMPTS_KEPT, oldest first. Inside a transaction. */
  #logAttempt(monitor: string, a: DeliveryAttempt): void {
    let n = 0;
    for (const key of this.attempts.getKeys({ start: [monitor, a.at, Number.MAX_SAFE_INTEGER], end: [monitor, a.at], reverse: true, limit: 1 })) n = key[2] + 1;
    this.attempts.put([monitor, a.at, n], a);
    const over = this.attempts.getKeysCount({ start: [monitor], end: [monitor, Number.MAX_SAFE_INTEGER] }) - ATTEMPTS_KEPT;
    if (over > 0)
      for (const key of this.attempts.getKeys({ start: [monitor], end: [monitor, Number.MAX_SAFE_INTEGER], limit: over })) this.attempts.remove(key);
  }
}

/** What a delivery attempt came to (MonitorStore.settleAttempt). */
export type AttemptOutcome = { kind: 'delivered' } | { kind: 'retry'; dueAt: number } | { kind: 'given_up'; pausedReason: string };
