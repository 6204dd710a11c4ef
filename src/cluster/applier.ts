/**
 * A node's side of a log (the revision log, the wallet log): a durable consumer named after
 * the node, read in batches and applied to the local store in one transaction with the
 * sequence applied up to, then acknowledged. The store, not the consumer, says where to
 * resume: a batch applied but not acknowledged (a kill -9 between the two) is skipped when it
 * comes again, and a store wiped or restored from an older copy has its consumer made again
 * from the store's own position.
 */
import { AckPolicy, type ConsumerMessages, DeliverPolicy, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import type { Logger } from 'pino';

/** A log as one node applies it. */
export interface Feed {
  stream: string;
  subjects: string;
  /** What the log holds, in words ("revisions"). */
  what: string;
  /** The log sequence the store holds everything up to. */
  position(): number;
  /** Stores `batch` (dense, from `position() + 1`) and its last sequence as the position, in one transaction. */
  apply(batch: JsMsg[]): void;
}

/** Revisions applied in one transaction at most (~10 ms of the event loop with ten chunks each). */
const BATCH = 128;
/** How long a fetch waits for new revisions before it asks again (and how long a stop may wait). */
const FETCH_MS = 1000;

export class Applier {
  /** The log sequence this node's store holds everything up to. */
  applied: number;
  /** Revisions in the log not applied yet, as of the last batch (-1: not known yet). */
  pending = -1;
  /** Whether the store has held everything in the log at some point since start. */
  caughtUp = false;
  #stopped = false;
  #fetch: ConsumerMessages | null = null;
  #loop: Promise<void> | null = null;
  #waiters: { seq: number; resolve: () => void }[] = [];

  constructor(
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    readonly feed: Feed,
    /** The durable consumer's name: the node's. */
    readonly name: string,
    readonly log: Logger,
    readonly onApplied: () => void,
  ) {
    this.applied = feed.position();
  }

  async start(): Promise<void> {
    const info = await this.jsm.consumers.info(this.feed.stream, this.name).catch(() => null);
    // The consumer acknowledged past what this store holds: a wiped or restored store.
    if (info && info.ack_floor.stream_seq > this.applied) {
      this.log.warn(
        `cluster: this store holds the log up to ${this.applied}, its consumer was at ${info.ack_floor.stream_seq}: reading from ${this.applied + 1}`,
      );
      await this.#reset();
    } else if (!info) await this.#create();
    this.#loop = this.#run();
  }

  /** The consumer, made to deliver from the store's position on. */
  async #create(): Promise<void> {
    await this.jsm.consumers.add(this.feed.stream, {
      durable_name: this.name,
      filter_subject: this.feed.subjects,
      ack_policy: AckPolicy.All,
      ...(this.applied > 0 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: this.applied + 1 } : { deliver_policy: DeliverPolicy.All }),
      max_ack_pending: 10 * BATCH,
    });
  }

  /**
   * Made again from the store's position. After a failed fetch the server would go on after
   * the last revision it delivered, not the last applied, and acknowledging a later batch
   * (AckPolicy.All) would acknowledge the ones between: so a gap is never skipped, it is read again.
   */
  async #reset(): Promise<void> {
    await this.jsm.consumers.delete(this.feed.stream, this.name).catch(() => undefined);
    await this.#create();
  }

  /** Resolves once the store holds the log up to `seq`. */
  waitFor(seq: number): Promise<void> {
    if (this.applied >= seq || this.#stopped) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ seq, resolve }));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#fetch?.stop();
    // The loop ends within a fetch's wait, or a request's timeout when a server is gone.
    await this.#loop;
    for (const w of this.#waiters.splice(0)) w.resolve();
  }

  async #run(): Promise<void> {
    let reset = false;
    while (!this.#stopped) {
      try {
        if (reset) await this.#reset();
        reset = false;
        const consumer = await this.js.consumers.get(this.feed.stream, this.name);
        this.#fetch = await consumer.fetch({ max_messages: BATCH, expires: FETCH_MS });
        let batch: JsMsg[] = [];
        let seen = 0;
        for await (const m of this.#fetch) {
          seen++;
          // The log's sequences are dense (one kind of record, never deleted): anything else is a gap.
          const next = this.applied + batch.length + 1;
          if (m.seq > next) throw new Error(`the ${this.feed.what} log skipped from ${next - 1} to ${m.seq}`);
          if (m.seq === next) batch.push(m);
          if (m.info.pending === 0 || batch.length >= BATCH) {
            this.#apply(batch, m);
            batch = [];
          }
        }
        if (batch.length > 0) this.#apply(batch, batch[batch.length - 1]);
        // A fetch that waited its time out and found nothing: the store holds the whole log.
        if (seen === 0 && !this.#stopped) {
          this.pending = 0;
          this.#markCaughtUp();
        }
      } catch (e) {
        if (this.#stopped) break;
        // A server lost, a leader being elected, a fetch cut short: read again from the store's position.
        this.log.warn({ err: e }, `cluster: reading the ${this.feed.what} log failed; reading again from the last applied record`);
        reset = true;
        await new Promise((r) => setTimeout(r, 500));
      } finally {
        this.#fetch = null;
      }
    }
  }

  /** Stores `batch` (dense, from `applied + 1`) with its position, then acknowledges up to `last` (which may be a redelivery past it). */
  #apply(batch: JsMsg[], last: JsMsg): void {
    if (batch.length > 0) {
      this.feed.apply(batch);
      this.applied = batch[batch.length - 1].seq;
    }
    // AckPolicy.All: acknowledging the last acknowledges everything before it, all applied.
    if (last.seq <= this.applied) last.ack();
    this.pending = last.info.pending;
    if (this.pending === 0) this.#markCaughtUp();
    const ready = this.#waiters.filter((w) => w.seq <= this.applied);
    this.#waiters = this.#waiters.filter((w) => w.seq > this.applied);
    for (const w of ready) w.resolve();
    if (batch.length > 0) this.onApplied();
  }

  #markCaughtUp(): void {
    if (!this.caughtUp) this.log.info(`cluster: caught up with the ${this.feed.what} log (sequence ${this.applied})`);
    this.caughtUp = true;
  }
}
