/**
 * Monitors' records, in LMDB beside the articles (the source of truth for them too):
 *
 *   monitors          id → MonitorRecord
 *   monitorOwners     [account, id] → true                  (an account's monitors, in id order)
 *   monitorNums       num → id                              (each monitor's number in windows)
 *   monitorWindows    seq → a matched window (binary)       (every monitor's matches in it)
 *   monitorBills      [seq, account] → 'unpaid' | 'dropped' (a window's charge not yet landed, or refused)
 *   monitorDelivery   [monitor, seq] → 'pending' | 'delivered' | 'failed'   (webhook monitors' events)
 *   monitorOutbox     [dueAt, eventId] → OutboxEntry        (webhook events still to deliver, by when)
 *   monitorAttempts   [monitor, at, n] → DeliveryAttempt    (the delivery log, oldest first)
 *   monitorMeta       'through' → label; 'nextNum' → number (every window below `through` is matched)
 *
 * An event is one monitor's matches in one window of the ingest sequence: its `seq` is the
 * window's end, so a monitor's events are ordered and numbered by it, and its id names both (a
 * receiver dedups on it). A window is written as one record, columns of (monitor number,
 * revision, best chunk, score) grouped by monitor: matching a window of thousands of monitors'
 * matches writes one value, and an event is read out of it (a binary search) and written as
 * articles when it is delivered (revisions never change). The pump writes a window, its
 * accounts' bills and the new `through` in one transaction: a crash before it re-matches the
 * window on the next start, a crash after it loses nothing, and no window is matched twice. An
 * account's events in a window are charged together after the window commits and delivered
 * (outbox, streams) only once paid: a crash between the two leaves the bill unpaid, and the next
 * start charges it unless the ledger already holds its debit (request id `mwin_<seq>`).
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
  /** Its number in windows (dense, never reused). */
  num: number;
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

/** One monitor's matches in a window, as a caller hands them to commitWindow: newest first by event_time. */
export interface NewEvent {
  monitor: string;
  ords: number[];
  /** Each revision's best chunk in the window, and its score. */
  labels: number[];
  scores: number[];
}

/** A matched window as stored: its monitors' matches in columns, grouped by monitor number (ascending). */
export interface WindowMatches {
  /** The window: revisions that became searchable in [from, seq). */
  from: number;
  /** Unix ms. */
  created: number;
  /** Monitor numbers, ascending; monitor i's matches are rows starts[i] … starts[i + 1] - 1. */
  nums: Uint32Array;
  starts: Uint32Array;
  ords: Uint32Array;
  labels: Uint32Array;
  scores: Float32Array;
}

/** An event as it is delivered: its matches written out as /v1/match items. */
export interface MonitorEvent {
  /** `evt_<monitor>_<seq>`: the same for every delivery of the event. */
  id: string;
  monitor: string;
  /** The window: revisions that became searchable in [fromSeq, seq). */
  fromSeq: number;
  seq: number;
  /** Unix ms. */
  created: number;
  /** Newest first. */
  items: MonitorItem[];
  /** Credits it cost: one a match. */
  credits: number;
  /** Webhook events: delivered (a 2xx), still trying, or given up after the retry schedule; null for a stream's. */
  delivery: 'pending' | 'delivered' | 'failed' | null;
  /** Charged and deliverable; an unpaid event is neither delivered nor streamed. */
  paid: boolean;
}

/** What the feed announces: an event now paid and deliverable (read it with MonitorStore.event). */
export interface EventRef {
  monitor: string;
  seq: number;
}

/** A window's bill for one account: its monitors with matches there, and the matches (credits). */
export interface WindowBill {
  seq: number;
  from: number;
  created: number;
  account: string;
  monitors: MonitorRecord[];
  units: number;
}

const HEADER = 32;

/** A window as one binary value: a header (from, created, events, matches: float64 each), then the columns. */
export function encodeWindow(w: WindowMatches): Buffer {
  const m = w.nums.length;
  const n = w.ords.length;
  const buf = Buffer.alloc(HEADER + 4 * (m + m + 1 + 3 * n));
  new Float64Array(buf.buffer, buf.byteOffset, 4).set([w.from, w.created, m, n]);
  let at = HEADER;
  for (const col of [w.nums, w.starts, w.ords, w.labels, w.scores]) {
    buf.set(new Uint8Array(col.buffer, col.byteOffset, col.byteLength), at);
    at += col.byteLength;
  }
  return buf;
}

export function decodeWindow(value: Uint8Array): WindowMatches {
  // A copy: aligned for the typed views, and independent of LMDB's read buffer.
  const buf = new Uint8Array(value).buffer;
  const [from, created, m, n] = new Float64Array(buf, 0, 4);
  let at = HEADER;
  const take = <T>(make: (b: ArrayBuffer, o: number, l: number) => T, len: number): T => {
    const col = make(buf, at, len);
    at += 4 * len;
    return col;
  };
  const u32 = (b: ArrayBuffer, o: number, l: number) => new Uint32Array(b, o, l);
  return {
    from,
    created,
    nums: take(u32, m),
    starts: take(u32, m + 1),
    ords: take(u32, n),
    labels: take(u32, n),
    scores: take((b, o, l) => new Float32Array(b, o, l), n),
  };
}

/** Events handed as objects (tests, small windows) as a window's columns; `numOf` gives each monitor's number. */
export function windowOf(from: number, created: number, events: NewEvent[], numOf: (monitor: string) => number): WindowMatches {
  const sorted = events.map((e) => ({ ...e, num: numOf(e.monitor) })).sort((a, b) => a.num - b.num);
  const n = sorted.reduce((k, e) => k + e.ords.length, 0);
  const w: WindowMatches = {
    from,
    created,
    nums: Uint32Array.from(sorted, (e) => e.num),
    starts: new Uint32Array(sorted.length + 1),
    ords: new Uint32Array(n),
    labels: new Uint32Array(n),
    scores: new Float32Array(n),
  };
  let at = 0;
  sorted.forEach((e, i) => {
    w.starts[i] = at;
    w.ords.set(e.ords, at);
    w.labels.set(e.labels, at);
    w.scores.set(e.scores, at);
    at += e.ords.length;
  });
  w.starts[sorted.length] = at;
  return w;
}

const billKey = (seq: number, account: string): string => `${seq}\0${account}`;

/** Where monitor `num`'s matches are in a window (its index in `nums`), or -1. */
function findNum(w: WindowMatches, num: number): number {
  let lo = 0;
  let hi = w.nums.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (w.nums[mid] === num) return mid;
    if (w.nums[mid] < num) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
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

/** Attempts kept per monitor in the delivery log (the oldest go first). */
export const ATTEMPTS_KEPT = 1000;

export class MonitorStore {
  readonly root: RootDatabase;
  readonly monitors: Database<MonitorRecord, string>;
  readonly owners: Database<true, [string, string]>;
  readonly nums: Database<string, number>;
  readonly windows: Database<Buffer, number>;
  readonly bills: Database<'unpaid' | 'dropped', [number, string]>;
  readonly delivery: Database<'pending' | 'delivered' | 'failed', [string, number]>;
  readonly outbox: Database<OutboxEntry, [number, string]>;
  readonly attempts: Database<DeliveryAttempt, [string, number, number]>;
  readonly #meta: Database<number, string>;
  /** Bills settled in this process, until the transaction that writes them (settle). */
  readonly #settled = new Map<string, 'paid' | 'dropped'>();
  #unwritten: { bill: WindowBill; refused: string | null }[] = [];
  /** The last window read (a stream replays, a deliverer retries: the same window again and again). */
  #lastWindow: { seq: number; w: WindowMatches } | null = null;

  constructor(readonly store: Store) {
    const root = store.root;
    this.root = root;
    this.monitors = root.openDB({ name: 'monitors' });
    this.owners = root.openDB({ name: 'monitorOwners' });
    this.nums = root.openDB({ name: 'monitorNums', keyEncoding: 'uint32' });
    this.windows = root.openDB({ name: 'monitorWindows', encoding: 'binary' });
    this.bills = root.openDB({ name: 'monitorBills' });
    this.delivery = root.openDB({ name: 'monitorDelivery' });
    this.outbox = root.openDB({ name: 'monitorOutbox' });
    this.attempts = root.openDB({ name: 'monitorAttempts' });
    this.#meta = root.openDB({ name: 'monitorMeta' });
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

  /** Stores a new monitor, giving it the next number; resolves with the record as stored. */
  add(m: Omit<MonitorRecord, 'num'>): Promise<MonitorRecord> {
    return this.root.transaction(() => {
      const num = this.#meta.get('nextNum') ?? 0;
      const record = { ...m, num };
      this.#meta.put('nextNum', num + 1);
      this.nums.put(num, m.id);
      this.monitors.put(m.id, record);
      this.owners.put([m.account, m.id], true);
      return record;
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

  /** Deletes a monitor with its delivery state, outbox entries and delivery log (its matches in windows are left, unreadable: the number is not reused). */
  remove(id: string): Promise<boolean> {
    return this.root.transaction(() => {
      const m = this.monitors.get(id);
      if (!m) return false;
      this.monitors.remove(id);
      this.owners.remove([m.account, id]);
      this.nums.remove(m.num);
      for (const { key } of this.delivery.getRange({ start: [id], end: [id, Number.MAX_SAFE_INTEGER] })) this.delivery.remove(key);
      for (const { key } of this.attempts.getRange({ start: [id], end: [id, Number.MAX_SAFE_INTEGER] })) this.attempts.remove(key);
      for (const { key, value } of this.outbox.getRange()) if (value.monitor === id) this.outbox.remove(key);
      return true;
    });
  }

  /** Where the matcher is: every window below it has its events written. */
  through(): number | undefined {
    return this.#meta.get('through');
  }

  /**
   * A matched window, in one transaction: its matches (one value), an unpaid bill for each
   * account with matches in it, and `through` moved to its end (`seq`). `settle` then pays or
   * drops each bill. An empty window writes `through` alone.
   */
  commitWindow(seq: number, w: WindowMatches, accounts: Iterable<string>): Promise<boolean> {
    const settled = this.#unwritten.splice(0);
    // Committed here, not queued to wait for the disk's flush: the window's debit is committed
    // after it in the same environment, and LMDB flushes commits in order, so the debit is never
    // durable without its window (and a window lost with its debit is matched again).
    this.root.transactionSync(() => {
      // Outcomes settled since the last write ride along (see settle).
      this.#writeSettled(settled, 0);
      if (w.nums.length > 0) {
        this.windows.put(seq, encodeWindow(w));
        for (const account of accounts) this.bills.put([seq, account], 'unpaid');
      }
      this.#meta.put('through', seq);
    });
    // Committed: LMDB answers for those outcomes now.
    this.#forgetSettled(settled);
    return Promise.resolve(true);
  }

  /** Outcomes whose transaction has committed: LMDB answers for them, this process stops holding them. */
  #forgetSettled(settled: { bill: WindowBill }[]): void {
    for (const { bill } of settled) this.#settled.delete(billKey(bill.seq, bill.account));
  }

  /**
   * A window's bills settled: paid (its events become deliverable; a webhook monitor's go to the
   * outbox, due `now`), or refused (`refused`: the reason; the account's events in the window
   * are dropped and its monitors there paused, from the window on). Known at once to this
   * process; written in a transaction of its own when it has something to deliver or pause (a
   * webhook's outbox entry, a pause), else with the next window's commit (or flushSettled): a
   * paid bill needs no write of its own, because the ledger holds its debit, which is what a
   * restart reads for a bill still marked unpaid.
   */
  settle(outcomes: { bill: WindowBill; refused: string | null }[], now: number): Promise<boolean> {
    for (const o of outcomes) this.#settled.set(billKey(o.bill.seq, o.bill.account), o.refused === null ? 'paid' : 'dropped');
    this.#unwritten.push(...outcomes);
    const urgent = outcomes.some((o) => o.refused !== null || o.bill.monitors.some((m) => m.webhookUrl !== null));
    return urgent ? this.flushSettled(now) : Promise.resolve(true);
  }

  /** Writes the settled outcomes not yet written (close, and settle's urgent ones). */
  flushSettled(now: number): Promise<boolean> {
    const settled = this.#unwritten.splice(0);
    if (settled.length === 0) return Promise.resolve(true);
    return this.root
      .transaction(() => {
        this.#writeSettled(settled, now);
        return true;
      })
      .then((ok) => {
        this.#forgetSettled(settled);
        return ok;
      });
  }

  /** Inside a transaction: settled outcomes as bills, pauses and outbox entries. */
  #writeSettled(settled: { bill: WindowBill; refused: string | null }[], now: number): void {
    for (const { bill, refused } of settled) {
      const key: [number, string] = [bill.seq, bill.account];
      if (this.bills.get(key) !== 'unpaid') continue;
      if (refused !== null) this.bills.put(key, 'dropped');
      else this.bills.remove(key);
      for (const known of bill.monitors) {
        // A paid stream monitor's event needs no write (a monitor's delivery never changes):
        // no read of its record either, which a window of thousands would pay for each.
        if (refused === null && known.webhookUrl === null) continue;
        const m = this.monitors.get(known.id);
        if (!m) continue;
        if (refused !== null) {
          if (m.status === 'active') this.monitors.put(m.id, { ...m, status: 'paused', pausedReason: refused, pausedSeq: bill.from });
        } else {
          const id = eventId(m.id, bill.seq);
          this.delivery.put([m.id, bill.seq], 'pending');
          this.outbox.put([now, id], { event: id, monitor: m.id, seq: bill.seq, attempts: 0, firstDue: now });
        }
      }
    }
  }

  /** A bill's state: settled in this process and not yet written, else as LMDB has it (absent: paid). */
  #bill(seq: number, account: string): 'unpaid' | 'dropped' | undefined {
    const known = this.#settled.get(billKey(seq, account));
    if (known !== undefined) return known === 'paid' ? undefined : known;
    return this.bills.get([seq, account]);
  }

  /** Bills a crash left unpaid (written, not settled), in window order, with their monitors and matches. */
  unpaidBills(): WindowBill[] {
    const out: WindowBill[] = [];
    for (const { key, value } of this.bills.getRange()) {
      if (value !== 'unpaid') continue;
      const [seq, account] = key;
      if (this.#settled.has(billKey(seq, account))) continue;
      const w = this.window(seq);
      if (!w) continue;
      const bill: WindowBill = { seq, from: w.from, created: w.created, account, monitors: [], units: 0 };
      w.nums.forEach((num, i) => {
        const id = this.nums.get(num);
        const m = id === undefined ? undefined : this.monitors.get(id);
        if (m?.account !== account) return;
        bill.monitors.push(m);
        bill.units += w.starts[i + 1] - w.starts[i];
      });
      out.push(bill);
    }
    return out;
  }

  /** A stored window's columns. */
  window(seq: number): WindowMatches | undefined {
    if (this.#lastWindow?.seq === seq) return this.#lastWindow.w;
    const value = this.windows.getBinary(seq);
    if (!value) return undefined;
    const w = decodeWindow(value);
    this.#lastWindow = { seq, w };
    return w;
  }

  /** Monitor `m`'s event in window `seq`, its matches written out as /v1/match items; undefined when it has none there. */
  #event(m: MonitorRecord, seq: number, w: WindowMatches): MonitorEvent | undefined {
    const at = findNum(w, m.num);
    if (at < 0) return undefined;
    const names = this.store.sourceNames();
    const rows: { t: number; item: MonitorItem }[] = [];
    for (let i = w.starts[at]; i < w.starts[at + 1]; i++) {
      const rev = this.store.revisions.get(w.ords[i])!;
      rows.push({
        t: rev.eventTime,
        item: { ...articleFields(rev, names), score: w.scores[i], best_chunk: this.store.chunks.get(w.labels[i])!.text },
      });
    }
    // Newest first, as /v1/match pages (ties by id, descending).
    rows.sort((a, b) => b.t - a.t || (a.item.id < b.item.id ? 1 : a.item.id > b.item.id ? -1 : 0));
    const items = rows.map((r) => r.item);
    const bill = this.#bill(seq, m.account);
    return {
      id: eventId(m.id, seq),
      monitor: m.id,
      fromSeq: w.from,
      seq,
      created: w.created,
      items,
      credits: items.length,
      delivery: this.delivery.get([m.id, seq]) ?? null,
      paid: bill === undefined,
    };
  }

  /** Sets `through` alone (the first start: matching begins at what LMDB holds then). */
  setThrough(to: number): Promise<boolean> {
    return this.#meta.put('through', to);
  }

  /** Monitor `monitor`'s event in window `seq` (paid or not), or undefined. */
  event(monitor: string, seq: number): MonitorEvent | undefined {
    const m = this.monitors.get(monitor);
    const w = m && this.window(seq);
    return w && this.#event(m, seq, w);
  }

  /** A monitor's paid events with seq > `after`, oldest first (a window at a time: those it has matches in). */
  eventsAfter(monitor: string, after: number, limit: number): MonitorEvent[] {
    const m = this.monitors.get(monitor);
    const out: MonitorEvent[] = [];
    if (!m) return out;
    for (const seq of this.windows.getKeys({ start: Math.max(after + 1, m.startSeq) })) {
      const e = this.#event(m, seq as number, this.window(seq as number)!);
      if (!e?.paid) continue;
      out.push(e);
      if (out.length >= limit) break;
    }
    return out;
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
      const w = this.window(entry.seq);
      const e = m && w && this.#event(m, entry.seq, w);
      if (!m || !e) return null;
      const monitor: MonitorRecord = { ...m, failures: outcome.kind === 'delivered' ? 0 : m.failures + 1 };
      let paused = false;
      if (outcome.kind === 'retry') this.outbox.put([outcome.dueAt, entry.event], { ...entry, attempts: attempt.attempt });
      else {
        e.delivery = outcome.kind === 'delivered' ? 'delivered' : 'failed';
        this.delivery.put([m.id, entry.seq], e.delivery);
      }
      if (outcome.kind === 'given_up' && monitor.status === 'active') {
        Object.assign(monitor, { status: 'paused', pausedReason: outcome.pausedReason, pausedSeq: e.fromSeq });
        paused = true;
      }
      this.monitors.put(m.id, monitor);
      this.#logAttempt(m.id, attempt);
      return { event: e, monitor, paused };
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
