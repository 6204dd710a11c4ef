/**
 * Cluster mode (CLUSTER_NATS_URLS): this node on a NATS JetStream cluster. The revision log (a
 * stream replicated 3 ways) is the source of truth for the corpus; this node's LMDB is a view
 * of it that the applier keeps, and that a new or wiped node rebuilds by reading the log.
 * A node holds the vectors of every shard or of some (CLUSTER_SHARDS, shards.ts); a node holding
 * some sends its vector queries to the groups holding the others (router.ts). Where the groups
 * are, and which shards the log holds, is followed by watching two KV buckets.
 */
import { randomBytes } from 'node:crypto';
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { type KV, type KvEntry, KvWatchInclude, Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Billing, KeyRecord, KeyStore, SharedResponses, StoredResponse } from '../platform/index.js';
import type { RevisionInput, Store, Written } from '../store/index.js';
import { Applier } from './applier.js';
import { POLL_LEASE_SEC, PollSchedule } from './poll-schedule.js';
import { REVISION_STREAM, REVISION_SUBJECTS, RevisionLog, revisionFeed, takenAlready } from './revision-log.js';
import { type GroupRequest, QueryRouter, serveGroup, type ShardMap } from './router.js';
import { groupOf, parseShards, type ShardSet } from './shards.js';
import { NatsWalletSlots, retrying, WALLET_STREAM, WALLET_SUBJECTS, walletFeed } from './wallet.js';

const ARTICLES_BUCKET = 'nm-articles';
/** Every shard the revision log holds, a key each. */
const SHARDS_BUCKET = 'nm-shards';
const NODES_BUCKET = 'nm-nodes';
/** Settings every node shares: the cursor secret, so a cursor one node issued pages on any. */
const SHARED_BUCKET = 'nm-shared';
const POLLS_BUCKET = 'nm-polls';
/** Every key, by id: every node mirrors them into its store (`KeyStore.mirror`). */
const KEYS_BUCKET = 'nm-keys';
const POLL_LEASES_BUCKET = 'nm-poll-leases';
/** Responses kept for their Idempotency-Key, 24 h (IdempotencyStore): a retry on another node is replayed. */
const RESPONSES_BUCKET = 'nm-idempotency';
const RESPONSES_TTL_MS = 24 * 3600 * 1000;
/** How often a serving node reports itself in `nm-nodes` (what `newsmatch cluster status` lists). */
const HEARTBEAT_MS = 2000;
/** A node that has not reported for this long is not counted as serving (rate limits' shares). */
const NODE_LIVE_MS = 3 * HEARTBEAT_MS;
/** How long a KV watch's start may take before it is tried again. */
const FOLLOW_START_MS = 10_000;
/** How long opening keeps trying while JetStream is not answering (leaders being elected). */
const OPEN_RETRY_MS = 30_000;
/** How long a close waits for the connection to drain before it just closes it. */
const CLOSE_MS = 5000;
/** Replicas of the log and the buckets: three, or one where the NATS servers are not clustered. */
const REPLICAS = 3;

/** The cluster settings of a Config (cluster mode on: CLUSTER_NATS_URLS set); `nodeId` stands in where a command has none. */
export function clusterSettings(config: Pick<Config, 'clusterNatsUrls' | 'clusterNodeId' | 'clusterShards'>, nodeId = config.clusterNodeId): ClusterSettings {
  let shards: ShardSet;
  try {
    shards = parseShards(config.clusterShards);
  } catch (e) {
    throw new ClusterError(`CLUSTER_SHARDS: ${(e as Error).message}`);
  }
  return { urls: config.clusterNatsUrls, nodeId: nodeId!, shards };
}

export interface ClusterSettings {
  urls: string[];
  nodeId: string;
  /** The shards whose vectors this node holds (CLUSTER_SHARDS). */
  shards: ShardSet;
}

/** What one node last reported of itself. */
export interface NodeReport {
  node: string;
  /** The log sequence its store holds everything up to. */
  applied: number;
  /** Revisions in the log it has not applied (-1: not known yet). */
  pending: number;
  caughtUp: boolean;
  /** The wallet log's sequence its billing journal holds everything up to. */
  walletApplied?: number;
  /** Unix ms of the report. */
  at: number;
  /** The shards whose vectors it holds (CLUSTER_SHARDS, canonical), and their group. */
  shards?: string;
  group?: string;
}

export interface StreamStatus {
  messages: number;
  lastSeq: number;
  replicas: number;
  leader: string | null;
  replicasCurrent: number;
}

export interface ClusterStatus {
  servers: string[];
  stream: StreamStatus;
  wallet: StreamStatus;
  nodes: (NodeReport & { lag: number; walletLag: number; consumerPending: number | null })[];
}

/** Cluster mode cannot start: what is wrong with the NATS servers, in words for the operator. */
export class ClusterError extends Error {
  readonly name = 'ClusterError';
}

export class Cluster {
  applier: Applier | null = null;
  /** This node's copy of the wallet log into its billing journal. */
  walletApplier: Applier | null = null;
  #heartbeat: NodeJS.Timeout | null = null;
  /** Set by close: a report still in flight then fails quietly (the connection drains). */
  #closing = false;
  /** Every node's last report (`nm-nodes`, watched from the first heartbeat on), with its shards parsed. */
  readonly #reports = new Map<string, { report: NodeReport; shards: ShardSet | null }>();
  /** Every shard the log holds (`nm-shards`, watched from the first vector query routed on). */
  readonly #shards = new Set<string>();
  #shardsFollowed: Promise<unknown> | null = null;
  /** Each followed bucket's re-read, run every heartbeat (#follow). */
  readonly #rereads: (() => Promise<void>)[] = [];
  #watches: { stop(): void }[] = [];
  #groupSub: { unsubscribe(): void } | null = null;

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
    /** The accounts' chains: Billing's writer in cluster mode. */
    readonly wallet: NatsWalletSlots,
    readonly responses: SharedResponses,
    readonly shardList: KV,
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
    const clustered = nc.info?.cluster !== undefined;
    const replicas = await ensureStream(jsm, log, clustered, REVISION_STREAM, REVISION_SUBJECTS);
    await ensureStream(jsm, log, clustered, WALLET_STREAM, WALLET_SUBJECTS);
    const kvm = new Kvm(nc);
    const articles = await kvm.create(ARTICLES_BUCKET, { replicas, history: 1 });
    const shardList = await kvm.create(SHARDS_BUCKET, { replicas, history: 1 });
    const nodes = await kvm.create(NODES_BUCKET, { replicas, history: 1 });
    const shared = await kvm.create(SHARED_BUCKET, { replicas, history: 1 });
    const polls = new PollSchedule(
      await kvm.create(POLLS_BUCKET, { replicas, history: 1 }),
      await kvm.create(POLL_LEASES_BUCKET, { replicas, history: 1, ttl: POLL_LEASE_SEC * 1000 }),
      settings.nodeId,
    );
    const keys = await kvm.create(KEYS_BUCKET, { replicas, history: 1 });
    // Read from the stream's leader, not any replica (direct gets): a retry sent to another node
    // right after the answer must find the response the first node kept before answering.
    const responses = kvResponses(await kvm.create(RESPONSES_BUCKET, { replicas, history: 1, ttl: RESPONSES_TTL_MS, allow_direct: false }), log);
    return new Cluster(
      settings,
      nc,
      js,
      jsm,
      new RevisionLog(js, jsm, articles, shardList),
      nodes,
      shared,
      polls,
      keys,
      new NatsWalletSlots(js, jsm),
      responses,
      shardList,
      log,
    );
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
   * Shares a key made or revoked in `store` with every node (the wallet is one across nodes, so
   * every key is). Resolves once the KV bucket's replicas hold it.
   */
  async shareKey(store: KeyStore, id: string): Promise<boolean> {
    const record = store.record(id);
    if (!record) return false;
    // Through a leader election (a server just restarted), as the wallet's appends are.
    await retrying(() => this.keys.put(id, JSON.stringify(record)));
    return true;
  }

  /** Mirrors the shared keys into `store`, now and as they change, until close. */
  async mirrorKeys(store: KeyStore): Promise<void> {
    const watch = await this.keys.watch();
    this.#watches.push(watch);
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
    this.applier = new Applier(this.js, this.jsm, revisionFeed(store, this.settings.shards), this.settings.nodeId, this.log, onApplied);
    await this.applier.start();
    // Beside the heartbeat, never before it: a node that cannot read the others still reports.
    const follow = (): void =>
      void this.#follow(this.nodes, NODES_BUCKET, (e) => {
        if (e.operation !== 'PUT') return void this.#reports.delete(e.key);
        const report = e.json<NodeReport>();
        this.#reports.set(e.key, { report, shards: report.shards ? parseShards(report.shards) : null });
      }).catch((err) => {
        if (this.#closing) return;
        this.log.warn({ err }, 'cluster: reading the node reports failed; reading them again');
        setTimeout(follow, HEARTBEAT_MS).unref();
      });
    follow();
    const report = () => {
      void this.nodes.put(this.settings.nodeId, JSON.stringify(this.#report())).catch((e) => {
        if (!this.#closing) this.log.warn({ err: e }, 'cluster: reporting this node failed');
      });
      for (const reread of this.#rereads)
        void reread().catch((e) => {
          if (!this.#closing) this.log.warn({ err: e }, 'cluster: reading a bucket again failed');
        });
    };
    report();
    this.#heartbeat = setInterval(report, HEARTBEAT_MS);
    this.#heartbeat.unref();
  }

  /** Starts copying the wallet log into `billing`'s journal (serve). */
  async startWallet(billing: Billing): Promise<void> {
    if (this.walletApplier) return;
    this.walletApplier = new Applier(this.js, this.jsm, walletFeed(billing), `${this.settings.nodeId}-wallet`, this.log, () => undefined);
    await this.walletApplier.start();
  }

  /**
   * A node that holds some shards' vectors: where its vector queries go (null: it holds them
   * all, and answers alone).
   */
  shardRouter(local: (r: GroupRequest) => Promise<unknown>): QueryRouter | null {
    const own = this.settings.shards;
    if (!own.ranges) return null;
    // Both from watched buckets, not a read a query: a group or a shard is known as soon as
    // it is written; a group ages out NODE_LIVE_MS after its last report.
    const map: ShardMap = {
      groups: async () => this.#live().groups,
      known: async () => {
        // A failed start (NATS unreachable) is not kept: the next query tries again.
        this.#shardsFollowed ??= this.#follow(this.shardList, SHARDS_BUCKET, (e) => {
          if (e.operation === 'PUT') this.#shards.add(e.key);
          else this.#shards.delete(e.key);
        }).catch((e) => {
          this.#shardsFollowed = null;
          throw e;
        });
        await this.#shardsFollowed;
        return [...this.#shards];
      },
    };
    return new QueryRouter(this.nc, own, map, local);
  }

  /** Answers this node's group's vector queries with `handle`, once its store has caught up with the log (it has all its group's rows). */
  async serveShards(handle: (r: GroupRequest) => Promise<unknown>): Promise<void> {
    while (!this.applier?.caughtUp) {
      if (this.#closing) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    if (!this.#closing) this.#groupSub = serveGroup(this.nc, this.settings.shards, handle, this.log);
  }

  /** The nodes serving now: those that reported within NODE_LIVE_MS (at least this one). */
  liveNodes(): number {
    return this.#live().nodes;
  }

  /** The nodes that reported within NODE_LIVE_MS (this one always), and their groups of shards (group id → its shards). */
  #live(): { nodes: number; groups: Map<string, ShardSet> } {
    const now = Date.now();
    const groups = new Map<string, ShardSet>();
    let nodes = 0;
    for (const { report, shards } of this.#reports.values()) {
      if (report.node !== this.settings.nodeId && now - report.at >= NODE_LIVE_MS) continue;
      nodes++;
      if (shards && report.group) groups.set(report.group, shards);
    }
    return { nodes: Math.max(1, nodes), groups };
  }

  /**
   * Follows `kv` (KV bucket `bucket`) until close: every value it holds, then every change,
   * each to `apply`, a key's entries in the order they were written. Resolves once the values
   * held are applied. The watch starts first and the listing follows, so a change between the
   * two is seen, by one or both: an entry older than one already applied for its key is
   * skipped. The bucket is also listed again every heartbeat, which heals whatever a watch
   * missed: right after a NATS server was lost, a node once counted another as gone while it
   * was reporting (`test/cluster.test.ts`, rate limits, one run in four).
   */
  async #follow(kv: KV, bucket: string, apply: (e: KvEntry) => void): Promise<void> {
    const newest = new Map<string, number>();
    const next = (e: KvEntry) => {
      if ((newest.get(e.key) ?? 0) >= e.revision) return;
      newest.set(e.key, e.revision);
      apply(e);
    };
    let rereading = false;
    const reread = async () => {
      if (rereading) return;
      rereading = true;
      try {
        for (const e of await this.#list(kv, bucket)) next(e);
      } finally {
        rereading = false;
      }
    };
    let watch: { stop(): void } | undefined;
    const stop = () => {
      watch?.stop();
      this.#watches = this.#watches.filter((w) => w !== watch);
    };
    const setUp = (async () => {
      const w = await kv.watch({ include: KvWatchInclude.UpdatesOnly });
      watch = w;
      this.#watches.push(w);
      void (async () => {
        for await (const e of w) next(e);
      })().catch((err) => {
        if (!this.#closing) this.log.error({ err }, 'cluster: watching a bucket failed');
      });
      await reread();
    })();
    let timer: NodeJS.Timeout | undefined;
    try {
      // A start that neither ends nor fails (a node starting beside an import once never got
      // past it) is given up and tried again by the caller.
      await Promise.race([
        setUp,
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`following KV bucket ${bucket}: no answer within ${FOLLOW_START_MS / 1000} s`)), FOLLOW_START_MS);
        }),
      ]);
    } catch (e) {
      stop();
      // One that ends later is stopped then.
      setUp.then(stop, stop);
      throw e;
    } finally {
      clearTimeout(timer);
    }
    this.#rereads.push(reread);
  }

  /** What every node last reported of itself, read now (`cluster status`). */
  async #listReports(): Promise<NodeReport[]> {
    return (await this.#list(this.nodes, NODES_BUCKET)).filter((e) => e.operation === 'PUT').map((e) => e.json<NodeReport>());
  }

  /**
   * The entries `kv` (KV bucket `bucket`) holds now, a key each (deleted ones as their
   * deletion): listed from the stream's subjects (one request, paged) and read one by one,
   * requests that answer or time out, where `kv.keys()`'s consumer waits to be told it has
   * seen every key.
   */
  async #list(kv: KV, bucket: string): Promise<KvEntry[]> {
    const prefix = `$KV.${bucket}.`;
    const info = await this.jsm.streams.info(`KV_${bucket}`, { subjects_filter: `${prefix}>` });
    const out: KvEntry[] = [];
    for (const subject of Object.keys(info.state.subjects ?? {})) {
      const e = await kv.get(subject.slice(prefix.length));
      if (e) out.push(e);
    }
    return out;
  }

  /** Resolves once this node's store holds every revision this node appended (now if it applies none). */
  async applied(): Promise<void> {
    await this.applier?.waitFor(this.revisions.lastSeq);
  }

  /** Readiness: what keeps this node from answering as the log says it should. */
  unmet(): string[] {
    const unmet: string[] = [];
    for (const [a, what] of [
      [this.applier, 'revision'],
      [this.walletApplier, 'wallet'],
    ] as const) {
      if (!a || a.caughtUp) continue;
      unmet.push(
        a.pending >= 0
          ? `the store is catching up with the cluster's ${what} log (${a.pending} records to apply)`
          : `the store has not yet caught up with the cluster's ${what} log`,
      );
    }
    return unmet;
  }

  async status(): Promise<ClusterStatus> {
    const info = await this.jsm.streams.info(REVISION_STREAM);
    const wallet = await this.jsm.streams.info(WALLET_STREAM);
    const nodes: ClusterStatus['nodes'] = [];
    for (const r of await this.#listReports()) {
      const consumer = await this.jsm.consumers.info(REVISION_STREAM, r.node).catch(() => null);
      nodes.push({
        ...r,
        lag: Math.max(0, info.state.last_seq - r.applied),
        walletLag: Math.max(0, wallet.state.last_seq - (r.walletApplied ?? 0)),
        consumerPending: consumer ? consumer.num_pending + consumer.num_ack_pending : null,
      });
    }
    nodes.sort((a, b) => a.node.localeCompare(b.node));
    const streamStatus = (i: typeof info): StreamStatus => ({
      messages: i.state.messages,
      lastSeq: i.state.last_seq,
      replicas: i.config.num_replicas,
      leader: i.cluster?.leader ?? null,
      replicasCurrent: 1 + (i.cluster?.replicas ?? []).filter((r) => r.current).length,
    });
    return { servers: this.nc.info?.connect_urls ?? [], stream: streamStatus(info), wallet: streamStatus(wallet), nodes };
  }

  #report(): NodeReport {
    const a = this.applier!;
    return {
      node: this.settings.nodeId,
      applied: a.applied,
      pending: a.pending,
      caughtUp: a.caughtUp && (this.walletApplier?.caughtUp ?? true),
      walletApplied: this.walletApplier?.applied,
      at: Date.now(),
      shards: this.settings.shards.spec,
      group: groupOf(this.settings.shards),
    };
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.#groupSub?.unsubscribe();
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    for (const w of this.#watches) w.stop();
    await this.applier?.stop();
    await this.walletApplier?.stop();
    // A drain waits on the servers; one that never answers does not hold a shutdown.
    const drained = this.nc.drain().then(
      () => true,
      () => false,
    );
    if (!(await Promise.race([drained, new Promise<boolean>((r) => setTimeout(() => r(false), CLOSE_MS).unref())])))
      await this.nc.close().catch(() => undefined);
  }
}

/** Makes a stream if missing; returns the replica count in use. */
async function ensureStream(jsm: JetStreamManager, log: Logger, clustered: boolean, name: string, subjects: string): Promise<number> {
  const existing = await jsm.streams.info(name).catch(() => null);
  if (existing) return existing.config.num_replicas;
  const config = { name, subjects: [subjects], storage: StorageType.File, duplicate_window: 120_000_000_000 };
  try {
    await jsm.streams.add({ ...config, num_replicas: REPLICAS });
    return REPLICAS;
  } catch (e) {
    // A single NATS server (development): one copy, said loudly. A cluster short of servers
    // is not one: opening waits for them (never a log with fewer copies than asked).
    if (clustered || !/replicas > 1 not supported|insufficient resources/i.test(String(e))) throw e;
    log.warn(`cluster: the NATS servers cannot keep ${REPLICAS} replicas; the log ${name} has one copy (development only)`);
    await jsm.streams.add({ ...config, num_replicas: 1 });
    return 1;
  }
}

/** Kept responses in a KV bucket whose entries expire after 24 h; each read and write tried again through a leader election, as the wallet's appends are. */
const kvResponses = (kv: KV, log: Logger): SharedResponses => ({
  async get(id) {
    const e = await retrying(() => kv.get(id)).catch((err) => {
      log.warn({ err }, 'cluster: reading a kept response failed; the call runs');
      return null;
    });
    return e?.operation === 'PUT' ? e.json<StoredResponse>() : null;
  },
  async put(id, r) {
    await retrying(() => kv.put(id, JSON.stringify(r))).catch((err) => log.warn({ err }, 'cluster: sharing a kept response failed; only this node replays it'));
  },
});
