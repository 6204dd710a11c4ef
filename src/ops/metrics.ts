/**
 * The metrics of one app over one service, in Prometheus text format (prom-client).
 *
 * Each app has its own Registry, so tests that build several apps never collide on a name.
 * What the service holds (engine rows, queue depths, lag) is read at scrape time; events (an
 * outlet polled, a billing commit) are counted as they happen through the service's listener
 * sets, which `close()` leaves.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { LedgerEntry } from '../platform/index.js';
import type { Service } from '../service.js';
import { engineBehind, keywordBehind } from './readiness.js';
import { RequestMetrics } from './request-metrics.js';

/** Billing group commits: a local fsync is a few ms; seconds mean a disk in trouble. */
const COMMIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

let processRegistry: Registry | null = null;

/**
 * Node's own metrics (event-loop delay, heap, GC, CPU, handles): facts about the process, so
 * collected once per process however many apps it builds (each collector starts a monitor
 * that is never stopped).
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export class OpsMetrics {
  readonly registry = new Registry();
  /** Counts every response; `observe` is the request path's only metrics cost. */
  readonly requests = new RequestMetrics();
  readonly #creditsCharged = new Map<string, number>();
  readonly #creditsRefunded = new Map<string, number>();
  /** Outlet name → [ok, failed] polls. */
  readonly #polls = new Map<string, [number, number]>();
  readonly #commitSeconds: Histogram;
  readonly #onPolled = (outlet: string, ok: boolean): void => {
    let n = this.#polls.get(outlet);
    if (!n) this.#polls.set(outlet, (n = [0, 0]));
    n[ok ? 0 : 1]++;
  };
  readonly #onCommit = (seconds: number, landed: readonly LedgerEntry[]): void => {
    this.#commitSeconds.observe(seconds);
    for (const e of landed) {
      if (!e.product) continue;
      if (e.kind === 'debit' && e.credits < 0) add(this.#creditsCharged, e.product, -e.credits);
      else if (e.kind === 'refund' && e.credits > 0) add(this.#creditsRefunded, e.product, e.credits);
    }
  };

  constructor(readonly service: Service) {
    const registers = [this.registry];
    this.registry.registerMetric(this.requests.counter('newsmatch_http_requests_total', 'HTTP responses by method, route pattern and status.'));
    this.registry.registerMetric(
      this.requests.histogram(
        'newsmatch_http_request_duration_seconds',
        'HTTP response latency (request received to response sent) by method and route pattern.',
      ),
    );

    const { engine, search } = service;
    new Gauge({
      name: 'newsmatch_engine_rows',
      help: 'Chunks the search engine holds (searchable).',
      registers,
      collect() {
        this.set(engine.stats().nextLabel);
      },
    });
    new Gauge({
      name: 'newsmatch_engine_index_pending_rows',
      help: 'Chunks appended but not yet filed in the relevance index (scanned beside it meanwhile).',
      registers,
      collect() {
        this.set(engine.stats().indexPending);
      },
    });
    new Gauge({
      name: 'newsmatch_engine_segments',
      help: 'Sealed segments of the search engine (compacted past 8).',
      registers,
      collect() {
        this.set(engine.stats().segments);
      },
    });
    new Counter({
      name: 'newsmatch_engine_topk_plans_total',
      help: 'Top-k vector queries by how the planner answered them (scan, scan-far, index, index-then-scan).',
      labelNames: ['plan'],
      registers,
      collect() {
        this.reset();
        for (const [plan, n] of Object.entries(search.plans)) this.inc({ plan }, n);
      },
    });
    new Gauge({
      name: 'newsmatch_engine_behind_chunks',
      help: 'Chunks LMDB holds that the search engine has not appended yet (/readyz is 503 while above 0).',
      registers,
      collect() {
        this.set(engineBehind(service));
      },
    });
    if (service.cluster) {
      const cluster = service.cluster;
      new Gauge({
        name: 'newsmatch_cluster_applied_seq',
        help: "Cluster mode: the revision log's sequence this node's store holds everything up to.",
        registers,
        collect() {
          this.set(cluster.applier?.applied ?? 0);
        },
      });
      new Gauge({
        name: 'newsmatch_cluster_pending_revisions',
        help: 'Cluster mode: revisions in the log this node has not applied, as of its last batch (-1 before the first).',
        registers,
        collect() {
          this.set(cluster.applier?.pending ?? -1);
        },
      });
      new Gauge({
        name: 'newsmatch_cluster_wallet_applied_seq',
        help: "Cluster mode: the wallet log's sequence this node's billing journal holds everything up to.",
        registers,
        collect() {
          this.set(cluster.walletApplier?.applied ?? 0);
        },
      });
    }
    new Gauge({
      name: 'newsmatch_keyword_behind_records',
      help: 'Records LMDB holds that keyword search cannot see yet, news revisions and job postings (/readyz is 503 while above 0).',
      registers,
      collect() {
        this.set(keywordBehind(service));
      },
    });
    new Gauge({
      name: 'newsmatch_embed_queue_depth',
      help: 'Texts waiting for an embedding worker, by lane (query, bulk); absent when text mode is off.',
      labelNames: ['lane'],
      registers,
      collect() {
        const load = service.embedder?.load();
        if (!load) return;
        for (const [lane, n] of Object.entries(load.waiting)) this.set({ lane }, n);
      },
    });
    const polls = this.#polls;
    new Counter({
      name: 'newsmatch_ingest_outlet_polls_total',
      help: 'Outlet polls by outlet and result (failed: every feed of the outlet failed).',
      labelNames: ['outlet', 'result'],
      registers,
      collect() {
        this.reset();
        for (const [outlet, [ok, failed]] of polls) {
          this.inc({ outlet, result: 'ok' }, ok);
          this.inc({ outlet, result: 'failed' }, failed);
        }
      },
    });
    this.#commitSeconds = new Histogram({
      name: 'newsmatch_billing_commit_seconds',
      help: 'Billing group commits (one journal record, one fsync, many charges), from start to settled.',
      buckets: COMMIT_BUCKETS,
      registers,
    });
    const credits = (name: string, help: string, by: Map<string, number>) =>
      new Counter({
        name,
        help,
        labelNames: ['product'],
        registers,
        collect() {
          this.reset();
          for (const [product, n] of by) this.inc({ product }, n);
        },
      });
    credits('newsmatch_credits_charged_total', 'Credits debited by product (refunds are counted apart, not subtracted).', this.#creditsCharged);
    credits('newsmatch_credits_refunded_total', 'Credits returned by refunds (a 400, 422 or 5xx after the charge), by product.', this.#creditsRefunded);

    service.pollListeners.add(this.#onPolled);
    service.billing.commitListeners.add(this.#onCommit);
    // Started with the first app, so the first scrape's event-loop figures cover the time since.
    processMetrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The scrape: this app's metrics and the process's. */
  text(): Promise<string> {
    return Registry.merge([processMetrics(), this.registry]).metrics();
  }

  /** Stops listening to the service (the app is closing). */
  close(): void {
    this.service.pollListeners.delete(this.#onPolled);
    this.service.billing.commitListeners.delete(this.#onCommit);
  }
}

function add(m: Map<string, number>, key: string, n: number): void {
  m.set(key, (m.get(key) ?? 0) + n);
}
