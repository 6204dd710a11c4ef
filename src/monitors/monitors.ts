/**
 * Monitors, the product (README, "Monitors"): an account's standing match queries, and the pump
 * that turns each new window of the ingest sequence into their events, behind ingest. The window
 * is scored against every active monitor at once in the addon (matcher.ts) and written as one
 * record (store.ts: each monitor's matches there are its event); each account's matches are
 * charged, a credit each, as one debit, and only then delivered: by webhook (webhooks.ts) or to
 * open streams (stream.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { DIMS } from '../dims.js';
import { AppError } from '../errors.js';
import { likeQuery } from '../match/index.js';
import { MONITOR_LIMITS, OPERATOR, type Billing, type CreditPlan } from '../platform/index.js';
import { normalise, type SearchEngine } from '../search/index.js';
import { resolveSources, type Catalog, type Store } from '../store/index.js';
import type { MonitorFeed } from './feed.js';
import { type MatchColumns, MonitorMatcher, type MonitorSpec } from './matcher.js';
import type { EventRef, MonitorRecord, MonitorStore, WindowBill, WindowMatches } from './store.js';

/** Labels one pass of the pump scores at most (a large import is matched in windows this size). */
const WINDOW = 4096;
/** A changed set is prepared this long after the last change. */
const REFRESH_AFTER_MS = 50;

export interface MonitorsDeps {
  store: Store;
  catalog: Catalog;
  engine: SearchEngine;
  monitors: MonitorStore;
  feed: MonitorFeed;
  billing: Billing;
  log: Logger;
  /** Unix ms. */
  clock: () => number;
  /** Brings the catalog and engine up to LMDB (what /v1/match awaits). */
  catchUp: () => Promise<void>;
  embedQuery?: (text: string) => Promise<Float32Array>;
  outletNames?: () => Set<string>;
  /** Checks a webhook URL before a monitor is created with it (one signed test delivery). */
  checkWebhook: (url: string, secret: string) => Promise<void>;
  /** A monitor resumed: its held webhook events may go now. */
  onResume?: () => void;
  /** How long matching waits for imports in flight (MONITOR_YIELD_MS; 0: never). */
  yieldMs?: number;
}

/** POST /v1/monitors, as the route's schema has validated it. */
export interface CreateMonitor {
  text?: string;
  vector?: number[];
  like?: string;
  model?: string;
  min_score?: number;
  sources?: string[];
  exclude_sources?: string[];
  include_edits?: boolean;
  webhook_url?: string;
  stream?: boolean;
}

/** What the API shows of a monitor (never its secret, which only creation shows). */
export interface MonitorView {
  id: string;
  created: string;
  status: 'active' | 'paused';
  paused_reason: string | null;
  paused_seq: number | null;
  query: { text?: string; vector?: true; like?: string };
  min_score: number;
  sources: string[] | null;
  exclude_sources: string[] | null;
  include_edits: boolean;
  delivery: { type: 'webhook'; url: string } | { type: 'stream' };
  start_seq: number;
  failures: number;
}

const invalid = (message: string) => new AppError('invalid_request', message);

export class Monitors {
  readonly #matcher: MonitorMatcher;
  /** The matcher's set is stale (a monitor was created, deleted, paused or resumed). */
  #dirty = true;
  /** The sources the set's filters were resolved against (a new source re-resolves them). */
  #sourceCount = -1;
  #specs: MonitorSpec[] = [];
  /** The set's monitors, by their index in it (number order). */
  #bySpec: MonitorRecord[] = [];
  #pumping: Promise<void> | null = null;
  #again = false;
  #closed = false;
  #refreshTimer: NodeJS.Timeout | undefined;
  /** Imports in flight (hold()): the pump waits for them, at most `yieldMs` a burst. */
  #imports = 0;
  /** When the pump began waiting for this burst of imports (reset once caught up). */
  #yieldingSince: number | undefined;
  /** Wakes a waiting pump: the last import ended, or the pump closes. */
  #wake: (() => void) | undefined;
  /** What the pump has done in this process (bench:monitors, /metrics). */
  readonly stats = { windows: 0, events: 0, matches: 0, ms: 0, scoreMs: 0, writeMs: 0, chargeMs: 0 };

  constructor(readonly deps: MonitorsDeps) {
    this.#matcher = new MonitorMatcher(deps.engine, deps.catalog);
  }

  /**
   * Starts matching: the first start begins at what LMDB holds now (a monitor matches only what
   * becomes searchable after its creation), and events a crash left unpaid are charged.
   */
  async open(): Promise<void> {
    if (this.deps.monitors.through() === undefined) await this.deps.monitors.setThrough(this.#reach());
    await this.#settle(this.deps.monitors.unpaidBills(), true);
  }

  async create(account: string, keyId: string, req: CreateMonitor): Promise<{ monitor: MonitorView; secret: string | null }> {
    const shapes = (['text', 'vector', 'like'] as const).filter((k) => req[k] !== undefined);
    if (shapes.length !== 1)
      throw invalid(
        shapes.length === 0
          ? 'send one of text, vector or like: the query to monitor'
          : `${shapes.join(' and ')}: send one of text, vector or like, not several`,
      );
    if ((req.webhook_url === undefined) === (req.stream !== true)) throw invalid('send one delivery: webhook_url, or stream: true');
    if (req.sources && req.exclude_sources) throw invalid('sources and exclude_sources are mutually exclusive');
    if (req.vector !== undefined && req.model !== undefined && req.model !== 'bge-m3') throw invalid(`model: only "bge-m3" is accepted, got "${req.model}"`);
    // The operator's monitors have no plan, and their matches are recorded at price 0.
    if (account !== OPERATOR) {
      const sub = this.deps.billing.subscription(account, 'monitors');
      if (!sub)
        throw new AppError('not_subscribed', 'this account does not subscribe to monitors (newsmatch subscribe --account ID --product monitors --plan free)');
      const cap = MONITOR_LIMITS[sub.plan as CreditPlan]?.monitors ?? 0;
      if (this.deps.monitors.count(account) >= cap) {
        throw new AppError('monitor_limit', `the ${sub.plan} plan of monitors allows ${cap} monitors and this account has ${cap}: delete one or change plan`);
      }
    }
    // Refused here, not at the first window: a name that is neither a source nor an outlet.
    resolveSources(this.deps.store.listSources(), req.sources, req.exclude_sources, () => this.deps.outletNames?.() ?? new Set(), invalid);

    let vectors: Float32Array[];
    let excludeUrl: string | null = null;
    if (req.vector !== undefined) {
      const v = normalise(req.vector);
      if (!v) throw invalid('vector: an all-zero vector has no direction');
      vectors = [v];
    } else if (req.like !== undefined) {
      const like = likeQuery(this.deps.store, req.like);
      vectors = like.vectors;
      excludeUrl = this.deps.store.revisions.get([...like.exclude][0])!.url;
    } else {
      if (!this.deps.embedQuery) throw new AppError('text_mode_unavailable');
      vectors = [await this.deps.embedQuery(req.text!)];
    }
    const secret = req.webhook_url === undefined ? null : `whsec_${randomBytes(24).toString('base64url')}`;
    if (req.webhook_url !== undefined) await this.deps.checkWebhook(req.webhook_url, secret!);

    // From what is searchable now: POST /v1/match's seq at this moment.
    await this.deps.catchUp();
    const packed = new Uint8Array(vectors.length * DIMS * 4);
    vectors.forEach((v, i) => packed.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), i * DIMS * 4));
    const record = await this.deps.monitors.add({
      id: `mon_${randomBytes(10).toString('hex')}`,
      account,
      keyId,
      created: this.deps.clock(),
      query: req.text !== undefined ? { text: req.text } : req.like !== undefined ? { like: req.like } : { vector: true },
      vectors: packed,
      minScore: req.min_score ?? 0.5,
      sources: req.sources ?? null,
      excludeSources: req.exclude_sources ?? null,
      includeEdits: req.include_edits ?? false,
      excludeUrl,
      webhookUrl: req.webhook_url ?? null,
      secret,
      status: 'active',
      pausedReason: null,
      pausedSeq: null,
      startSeq: this.#reach(),
      failures: 0,
    });
    this.#invalidate();
    return { monitor: view(record), secret };
  }

  /** One of the account's monitors; another account's is 404 like a missing one (ids are not disclosed). */
  owned(account: string, id: string): MonitorRecord {
    const m = this.deps.monitors.get(id);
    if (!m || m.account !== account) throw new AppError('monitor_not_found', `no monitor ${JSON.stringify(id)} on this account`);
    return m;
  }

  list(account: string): MonitorView[] {
    return this.deps.monitors.list(account).map(view);
  }

  get(account: string, id: string): MonitorView {
    return view(this.owned(account, id));
  }

  async remove(account: string, id: string): Promise<void> {
    this.owned(account, id);
    await this.deps.monitors.remove(id);
    this.#invalidate();
  }

  /** Resumes a paused monitor from what is searchable now (what it missed: POST /v1/match after_seq=paused_seq). */
  async resume(account: string, id: string): Promise<MonitorView> {
    this.owned(account, id);
    await this.deps.catchUp();
    const startSeq = this.#reach();
    const m = await this.deps.monitors.update(id, (r) => {
      if (r.status === 'active') return;
      Object.assign(r, { status: 'active', pausedReason: null, failures: 0, startSeq: Math.max(r.startSeq, startSeq) });
    });
    if (!m) throw new AppError('monitor_not_found', `no monitor ${JSON.stringify(id)} on this account`);
    this.#invalidate();
    this.deps.onResume?.();
    return view(m);
  }

  /** A monitor changed outside this class (the deliverer paused it): rebuild the set. */
  changed(): void {
    this.#invalidate();
  }

  /**
   * The set is stale: it is rebuilt (on the engine's threads) once changes stop for a moment, so a
   * burst of creations prepares it once, and the next window finds it ready.
   */
  #invalidate(): void {
    this.#dirty = true;
    if (this.#closed) return;
    clearTimeout(this.#refreshTimer);
    this.#refreshTimer = setTimeout(() => void this.pump().catch((e) => this.deps.log.error({ err: e }, 'preparing monitors failed')), REFRESH_AFTER_MS);
    this.#refreshTimer.unref();
  }

  /**
   * An import is in flight until the returned function is called. Matching waits for it, for at
   * most `yieldMs` from the first window it held back, so a burst of imports runs at the rate it
   * has without monitors (the pump's writes and its share of the cores and memory bandwidth come
   * after it) and a steady stream of imports still gets matched, that much behind.
   */
  hold(): () => void {
    this.#imports++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#imports === 0) this.#wake?.();
    };
  }

  /**
   * Matches what became searchable since the last window, in windows of at most WINDOW labels;
   * one pump at a time (a call during one makes it go round once more). Resolves when caught up.
   */
  pump(): Promise<void> {
    if (this.#pumping) {
      this.#again = true;
      return this.#pumping;
    }
    this.#pumping = (async () => {
      try {
        do {
          this.#again = false;
          await this.#run();
        } while (this.#again && !this.#closed);
      } finally {
        this.#pumping = null;
      }
    })();
    return this.#pumping;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#refreshTimer);
    this.#wake?.();
    await this.#pumping?.catch(() => {});
    // Settled bills not yet written (a restart would find them in the ledger anyway).
    await this.deps.monitors.flushSettled(this.deps.clock());
  }

  /** How far the ingest sequence is in reach: labels both the catalog and the engine hold. */
  #reach(): number {
    return this.#boundary(Math.min(this.deps.catalog.labels, this.deps.engine.nextLabel));
  }

  #boundary(label: number): number {
    return this.deps.catalog.boundary(label, this.deps.store);
  }

  async #run(): Promise<void> {
    while (!this.#closed) {
      // Prepared before a window comes, so a new set's cost is not a window's.
      if (this.#dirty) await this.#refresh();
      const through = this.deps.monitors.through() ?? 0;
      const to = this.#boundary(Math.min(this.#reach(), through + WINDOW));
      if (to <= through) {
        this.#yieldingSince = undefined;
        return;
      }
      // After a wait, round again: what is in reach has grown.
      if (await this.#yieldToImports()) continue;
      this.#resolveSources();
      const t = performance.now();
      const columns = await this.#matcher.advanceColumns(through, to);
      const t1 = performance.now();
      const { window, bills } = this.#window(columns, through, to);
      await this.deps.monitors.commitWindow(to, window, bills.keys());
      const t2 = performance.now();
      await this.#settle([...bills.values()], false);
      this.stats.scoreMs += t1 - t;
      this.stats.writeMs += t2 - t1;
      this.stats.chargeMs += performance.now() - t2;
      this.stats.windows++;
      this.stats.events += window.nums.length;
      this.stats.matches += window.ords.length;
      this.stats.ms += performance.now() - t;
    }
  }

  /**
   * Waits while imports are in flight, within the burst's `yieldMs`; true when it waited (what is
   * in reach may have grown). A turn of the event loop first: an import that starts as the last
   * one returns (a loop of imports, the pump kicked by the first) takes its hold before this looks.
   */
  async #yieldToImports(): Promise<boolean> {
    const limit = this.deps.yieldMs ?? 0;
    if (limit <= 0) return false;
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.#imports === 0 || this.#closed) return false;
    const now = performance.now();
    this.#yieldingSince ??= now;
    const left = this.#yieldingSince + limit - now;
    if (left <= 0) return false;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, left);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.#wake = undefined;
    return true;
  }

  /** The matcher's set: every active monitor (prepared on the engine's threads). */
  async #refresh(): Promise<void> {
    this.#dirty = false;
    // In number order: the matcher's output is grouped in this order, which is a window's.
    const active = [...this.deps.monitors.all()].filter((m) => m.status === 'active').sort((a, b) => a.num - b.num);
    this.#specs = active.map((m) => ({
      id: m.id,
      vectors: unpack(m.vectors),
      minScore: m.minScore,
      domain: { includeEdits: m.includeEdits, sources: null },
    }));
    this.#bySpec = active;
    this.#sourceCount = -1;
    await this.#matcher.set(this.#specs);
  }

  /** Source filters name sources; a source first seen since is in or out of an exclude list by name. */
  #resolveSources(): void {
    // Counted from the store's cached names (one read a window), listed only when one was added.
    const count = this.deps.store.sourceNames().size;
    if (count === this.#sourceCount) return;
    this.#sourceCount = count;
    const sources = this.deps.store.listSources();
    const none = () => new Set<string>();
    for (const [i, spec] of this.#specs.entries()) {
      const m = this.#bySpec[i];
      spec.domain.sources = resolveSources(sources, m.sources ?? undefined, m.excludeSources ?? undefined, none, invalid);
    }
  }

  /**
   * The window's columns (monitors in number order, each one's matches) and a bill for each
   * account with matches: what commitWindow writes and settle charges. Typed arrays, no object a
   * match (a window may hold tens of thousands), and the work per monitor where none of its
   * matches needs a check.
   */
  #window(c: MatchColumns, from: number, to: number): { window: WindowMatches; bills: Map<string, WindowBill> } {
    const k = c.ords.length;
    const monitors = this.#bySpec;
    const created = this.deps.clock();
    let runs = 0;
    for (let i = 0; i < k; i++) if (i === 0 || c.spec[i] !== c.spec[i - 1]) runs++;
    const nums = new Uint32Array(runs);
    const starts = new Uint32Array(runs + 1);
    const bills = new Map<string, WindowBill>();
    // The matcher's columns (ours) compacted in place: usually nothing is dropped and nothing moves.
    const { ords, labels, scores } = c;
    let row = 0;
    let e = 0;
    // Entries come grouped by monitor (runs): each monitor with a kept entry is an event.
    for (let a = 0; a < k; ) {
      let b = a + 1;
      while (b < k && c.spec[b] === c.spec[a]) b++;
      const m = monitors[c.spec[a]];
      const start = row;
      if (m.startSeq <= from && m.excludeUrl === null) {
        if (row !== a) for (const col of [ords, labels, scores]) col.copyWithin(row, a, b);
        row += b - a;
      } else {
        for (let i = a; i < b; i++) {
          // Revisions searchable before the monitor was created (or resumed) are not its
          // matches; nor, for like, the liked article's own later revisions (they would match
          // themselves).
          if (labels[i] < m.startSeq) continue;
          if (m.excludeUrl !== null && this.deps.store.revisions.get(ords[i])!.url === m.excludeUrl) continue;
          ords[row] = ords[i];
          labels[row] = labels[i];
          scores[row++] = scores[i];
        }
      }
      a = b;
      if (row === start) continue;
      nums[e] = m.num;
      starts[e++] = start;
      let bill = bills.get(m.account);
      if (!bill) bills.set(m.account, (bill = { seq: to, from, created, account: m.account, monitors: [], units: 0 }));
      bill.monitors.push(m);
      bill.units += row - start;
    }
    starts[e] = row;
    const w: WindowMatches = {
      from,
      created,
      nums: nums.subarray(0, e),
      starts: starts.subarray(0, e + 1),
      ords: ords.subarray(0, row),
      labels: labels.subarray(0, row),
      scores: scores.subarray(0, row),
    };
    return { window: w, bills };
  }

  /**
   * Charges each account's matches in a window, a credit each, in one debit (request id
   * `mwin_<seq>`), and makes its events deliverable; a bill its wallet or plan cannot pay drops
   * its events and pauses its monitors there. `recovering`: a crash may have landed a debit but
   * not the settle: the ledger says which.
   */
  async #settle(bills: WindowBill[], recovering: boolean): Promise<void> {
    if (bills.length === 0) return;
    const outcomes = await Promise.all(
      bills.map(async (bill): Promise<{ bill: WindowBill; refused: string | null }> => {
        const requestId = `mwin_${bill.seq}`;
        if (recovering && this.deps.billing.entries(bill.account, bill.created - 60_000).some((x) => x.kind === 'debit' && x.requestId === requestId)) {
          return { bill, refused: null };
        }
        const [charged] = await this.deps.billing.chargeMany(bill.account, 'monitors', [{ requestId, keyId: bill.monitors[0].keyId, units: bill.units }]);
        if (!(charged instanceof AppError)) return { bill, refused: null };
        const refused = `${charged.code}: ${charged.message}`;
        this.deps.log.info({ account: bill.account, seq: bill.seq, monitors: bill.monitors.length }, `monitors paused: ${refused}`);
        return { bill, refused };
      }),
    );
    await this.deps.monitors.settle(outcomes, this.deps.clock());
    if (outcomes.some((o) => o.refused !== null)) this.#invalidate();
    const paid: EventRef[] = [];
    for (const o of outcomes) if (o.refused === null) for (const m of o.bill.monitors) paid.push({ monitor: m.id, seq: o.bill.seq });
    this.deps.feed.emit(paid);
  }
}

function unpack(bytes: Uint8Array): Float32Array[] {
  const all = new Float32Array(bytes.slice().buffer);
  const out: Float32Array[] = [];
  for (let i = 0; i < all.length; i += DIMS) out.push(all.subarray(i, i + DIMS));
  return out;
}

export function view(m: MonitorRecord): MonitorView {
  return {
    id: m.id,
    created: new Date(m.created).toISOString(),
    status: m.status,
    paused_reason: m.pausedReason,
    paused_seq: m.pausedSeq,
    query: m.query.vector ? { vector: true } : m.query.like !== undefined ? { like: m.query.like } : { text: m.query.text },
    min_score: m.minScore,
    sources: m.sources,
    exclude_sources: m.excludeSources,
    include_edits: m.includeEdits,
    delivery: m.webhookUrl === null ? { type: 'stream' } : { type: 'webhook', url: m.webhookUrl },
    start_seq: m.startSeq,
    failures: m.failures,
  };
}
