/**
 * Cluster mode (CLUSTER_NATS_URLS): this node on a NATS JetStream cluster. The revision log (a
 * stream replicated 3 ways) is the source of truth for the corpus; this node's LMDB is a view
 * of it that the applier keeps, and that a new or wiped node rebuilds by reading the log.
 * Every node serves every shard (a full replica): queries are answered from the local view.
 */
import { randomBytes } from 'node:crypto';
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { type KV, Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { isSharedKey, type KeyRecord, type KeyStore } from '../platform/index.js';
import type { RevisionInput, Store, Written } from '../store/index.js';
import { Applier } from './applier.js';
import { POLL_LEASE_SEC, PollSchedule } from './poll-schedule.js';
import { REVISION_STREAM, REVISION_SUBJECTS, RevisionLog, takenAlready } from './revision-log.js';

const ARTICLES_BUCKET = 'nm-articles';
const NODES_BUCKET = 'nm-nodes';
/** Settings every node shares: the cursor secret, so a cursor one node issued pages on any. */
const SHARED_BUCKET = 'nm-shared';
const POLLS_BUCKET = 'nm-polls';
/** Gateway and operator keys, by id: every node mirrors them into its store (`KeyStore.mirror`). */
const KEYS_BUCKET = 'nm-keys';
const POLL_LEASES_BUCKET = 'nm-poll-leases';
/** How often a serving node reports itself in `nm-nodes` (what `newsmatch cluster status` lists). */
const HEARTBEAT_MS = 2000;
/** How long opening keeps trying while JetStream is not answering (leaders being elected). */
const OPEN_RETRY_MS = 30_000;
/** How long a close waits for the connection to drain before it just closes it. */
const CLOSE_MS = 5000;
/** Replicas of the log and the buckets: three, or one where the NATS servers are not clustered. */
const REPLICAS = 3;

/** The cluster settings of a Config (cluster mode on: CLUSTER_NATS_URLS set); `nodeId` stands in where a command has none. */
export const clusterSettings = (config: Pick<Config, 'clusterNatsUrls' | 'clusterNodeId'>, nodeId = config.clusterNodeId): ClusterSettings => ({
  urls: config.clusterNatsUrls,
  nodeId: nodeId!,
});

export interface ClusterSettings {
  urls: string[];
  nodeId: string;
}

/** What one node last reported of itself. */
export interface NodeReport {
  node: string;
  /** The log sequence its store holds everything up to. */
  applied: number;
  /** Revisions in the log it has not applied (-1: not known yet). */
  pending: number;
  caughtUp: boolean;
  /** Unix ms of the report. */
  at: number;
}

export interface ClusterStatus {
  servers: string[];
  stream: { messages: number; lastSeq: number; replicas: number; leader: string | null; replicasCurrent: number };
  nodes: (NodeReport & { lag: number; consumerPending: number | null })[];
}

/** Cluster mode cannot start: what is wrong with the NATS servers, in words for the operator. */
export class ClusterError extends Error {
  readonly name = 'ClusterError';
}

export class Cluster {
  applier: Applier | null = null;
  #heartbeat: NodeJS.Timeout | null = null;
  #keyWatch: { stop(): void } | null = null;

  private constructor(
    readonly settings: ClusterSettings,
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    readonly revisions: RevisionLog,
    readonly nodes: KV,
    readonly shared: KV,
    readonly polls: PollSchedule,
    readonly keys: KV,
    readonly log: Logger,
  ) {}

  /** Connects, and makes the stream and buckets where they do not exist yet. */
  static async open(settings: ClusterSettings, log: Logger): Promise<Cluster> {
    // URLs may hold credentials: messages name the hosts only.
    const hosts = settings.urls.map((u) => new URL(u).host).join(', ');
    let nc: NatsConnection;
    try {
      nc = await connect({
        servers: settings.urls,
        name: `newsmatch-${settings.nodeId}`,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        noAsyncTraces: true,
      });
    } catch (e) {
      throw new ClusterError(`cluster mode: no NATS server answered at ${hosts} (${(e as Error).message})`);
    }
    // JetStream may be electing its leaders (a server just restarted, a cluster just formed):
    // setting up is tried again for a while before the node gives up.
    const deadline = Date.now() + OPEN_RETRY_MS;
    for (;;) {
      try {
        return await Cluster.#setUp(settings, nc, log);
      } catch (e) {
        const transient = /jetstream (is )?not enabled|timeout|temporarily unavailable|no suitable peers|insufficient resources/i.test(String(e));
        if (transient && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 500));
          continue;
        }
        await nc.close();
        if (transient) {
          throw new ClusterError(
            `cluster mode: the NATS servers at ${hosts} have no working JetStream (start them with JetStream and, for replicas, routes to each other): ${(e as Error).message}`,
          );
        }
        throw e;
      }
    }
  }

  static async #setUp(settings: ClusterSettings, nc: NatsConnection, log: Logger): Promise<Cluster> {
    const jsm = await jetstreamManager(nc);
    const js = jetstream(nc);
    const replicas = await ensureStream(jsm, log, nc.info?.cluster !== undefined);
    const kvm = new Kvm(nc);
    const articles = await kvm.create(ARTICLES_BUCKET, { replicas, history: 1 });
    const nodes = await kvm.create(NODES_BUCKET, { replicas, history: 1 });
    const shared = await kvm.create(SHARED_BUCKET, { replicas, history: 1 });
    const polls = new PollSchedule(
      await kvm.create(POLLS_BUCKET, { replicas, history: 1 }),
      await kvm.create(POLL_LEASES_BUCKET, { replicas, history: 1, ttl: POLL_LEASE_SEC * 1000 }),
      settings.nodeId,
    );
    const keys = await kvm.create(KEYS_BUCKET, { replicas, history: 1 });
    return new Cluster(settings, nc, js, jsm, new RevisionLog(js, jsm, articles), nodes, shared, polls, keys, log);
  }

  /** The cluster's cursor secret: made by the first node that asks, read by the others. */
  async cursorSecret(): Promise<Buffer> {
    for (;;) {
      const entry = await this.shared.get('cursor-secret');
      if (entry?.operation === 'PUT') return Buffer.from(entry.string(), 'base64');
      try {
        await this.shared.create('cursor-secret', randomBytes(32).toString('base64'));
      } catch (e) {
        // Made by another node between the read and the create: read it.
        if (!takenAlready(e)) throw e;
      }
    }
  }

  /**
   * Shares a key made or revoked in `store` with every node (gateway and operator keys; an
   * account's stay on their node). Resolves once the KV bucket's replicas hold it.
   */
  async shareKey(store: KeyStore, id: string): Promise<boolean> {
    const record = store.record(id);
    if (!record || !isSharedKey(record)) return false;
    await this.keys.put(id, JSON.stringify(record));
    return true;
  }

  /** Mirrors the shared keys into `store`, now and as they change, until close. */
  async mirrorKeys(store: KeyStore): Promise<void> {
    const watch = await this.keys.watch();
    this.#keyWatch = watch;
    void (async () => {
      for await (const e of watch) {
        if (e.operation !== 'PUT') continue;
        try {
          store.mirror(e.json<KeyRecord>());
        } catch (err) {
          this.log.error({ err, key: e.key }, 'cluster: mirroring a shared key failed');
        }
      }
    })();
  }

  /** Appends revisions to the log: import's and the poller's writer in cluster mode. */
  write(inputs: RevisionInput[]): Promise<Written[]> {
    return this.revisions.write(inputs, this.nc.info?.max_payload ?? 1024 * 1024);
  }

  /** Starts applying the log to `store` (serve); `onApplied` hears after each batch. */
  async startApplying(store: Store, onApplied: () => void): Promise<void> {
    if (this.applier) return;
    this.applier = new Applier(this.js, this.jsm, store, this.settings.nodeId, this.log, onApplied);
    await this.applier.start();
    const report = () =>
      void this.nodes.put(this.settings.nodeId, JSON.stringify(this.#report())).catch((e) => this.log.warn({ err: e }, 'cluster: reporting this node failed'));
    report();
    this.#heartbeat = setInterval(report, HEARTBEAT_MS);
    this.#heartbeat.unref();
  }

  /** Resolves once this node's store holds every revision this node appended (now if it applies none). */
  async applied(): Promise<void> {
    await this.applier?.waitFor(this.revisions.lastSeq);
  }

  /** Readiness: what keeps this node from answering as the log says it should. */
  unmet(): string[] {
    if (!this.applier) return [];
    if (!this.applier.caughtUp) {
      const p = this.applier.pending;
      return [
        p >= 0
          ? `the store is catching up with the cluster's revision log (${p} revisions to apply)`
          : "the store has not yet caught up with the cluster's revision log",
      ];
    }
    return [];
  }

  async status(): Promise<ClusterStatus> {
    const info = await this.jsm.streams.info(REVISION_STREAM);
    const nodes: ClusterStatus['nodes'] = [];
    for await (const key of await this.nodes.keys()) {
      const entry = await this.nodes.get(key);
      if (entry?.operation !== 'PUT') continue;
      const r = JSON.parse(entry.string()) as NodeReport;
      const consumer = await this.jsm.consumers.info(REVISION_STREAM, r.node).catch(() => null);
      nodes.push({
        ...r,
        lag: Math.max(0, info.state.last_seq - r.applied),
        consumerPending: consumer ? consumer.num_pending + consumer.num_ack_pending : null,
      });
    }
    nodes.sort((a, b) => a.node.localeCompare(b.node));
    const cl = info.cluster;
    return {
      servers: this.nc.info?.connect_urls ?? [],
      stream: {
        messages: info.state.messages,
        lastSeq: info.state.last_seq,
        replicas: info.config.num_replicas,
        leader: cl?.leader ?? null,
        replicasCurrent: 1 + (cl?.replicas ?? []).filter((r) => r.current).length,
      },
      nodes,
    };
  }

  #report(): NodeReport {
    const a = this.applier!;
    return { node: this.settings.nodeId, applied: a.applied, pending: a.pending, caughtUp: a.caughtUp, at: Date.now() };
  }

  async close(): Promise<void> {
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    this.#keyWatch?.stop();
    await this.applier?.stop();
    // A drain waits on the servers; one that never answers does not hold a shutdown.
    const drained = this.nc.drain().then(
      () => true,
      () => false,
    );
    if (!(await Promise.race([drained, new Promise<boolean>((r) => setTimeout(() => r(false), CLOSE_MS).unref())])))
      await this.nc.close().catch(() => undefined);
  }
}

/** Makes the revision stream if missing; returns the replica count in use. */
async function ensureStream(jsm: JetStreamManager, log: Logger, clustered: boolean): Promise<number> {
  const existing = await jsm.streams.info(REVISION_STREAM).catch(() => null);
  if (existing) return existing.config.num_replicas;
  const config = { name: REVISION_STREAM, subjects: [REVISION_SUBJECTS], storage: StorageType.File, duplicate_window: 120_000_000_000 };
  try {
    await jsm.streams.add({ ...config, num_replicas: REPLICAS });
    return REPLICAS;
  } catch (e) {
    // A single NATS server (development): one copy, said loudly. A cluster short of servers
    // is not one: opening waits for them (never a log with fewer copies than asked).
    if (clustered || !/replicas > 1 not supported|insufficient resources/i.test(String(e))) throw e;
    log.warn(`cluster: the NATS servers cannot keep ${REPLICAS} replicas; the revision log has one copy (development only)`);
    await jsm.streams.add({ ...config, num_replicas: 1 });
    return 1;
  }
}
