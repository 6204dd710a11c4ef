/**
 * The core, assembled: LMDB store, catalog, native search engine, keys, cursors. Both the HTTP
 * server and the CLI commands work through one Service, never through each other.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { createLogger } from './log.js';
import type { Config } from './config.js';
import { Cluster, clusterSettings, type GroupRequest } from './cluster/index.js';
import { Embedder, embedRevisions, textOf, type ChunkSettings } from './embed/index.js';
import { liveScrapers, ParsePool, type LiveScrapers } from './live/index.js';
import { JobStore, skillVocabulary, type Vocabulary } from './jobs/index.js';
import { JobsIndex, KeywordDb, NewsIndex } from './keyword/index.js';
import { importFile, Outlets, Poller, type ImportHooks, type ImportSummary } from './ingest/index.js';
import { CursorCodec } from './cursor/index.js';
import { AccountEmails, SessionStore } from './dashboard/index.js';
import { likeQuery, localRows, PageCache, type MatchDeps } from './match/index.js';
import { checkWebhookUrl, MonitorFeed, Monitors, MonitorStore, WebhookDeliverer, type MonitorEvent } from './monitors/index.js';
import { HttpClient, liveScraping, politePolling, webhookDelivery } from './net/index.js';
import { Billing, IdempotencyStore, KeyStore, Metering, RateLimiter } from './platform/index.js';
import { Maintenance, SearchEngine, VectorSearch, type TopkOptions } from './search/index.js';
import { Catalog, Store, type RevisionInput, type RevisionWriter } from './store/index.js';

/** Revisions and chunks a catch-up slice reads in (each ~10 ms on the event loop, on this 2-core box). */
const CATCH_UP_REVISIONS = 1000;
const CATCH_UP_CHUNKS = 1024;

export interface Service extends MatchDeps {
  config: Config;
  log: Logger;
  engine: SearchEngine;
  maintenance: Maintenance;
  keys: KeyStore;
  /** Accounts, wallets, plans, the ledger. */
  billing: Billing;
  /** The metering path of every metered call (authorise, rate limit, charge, refund). */
  metering: Metering;
  /** The dashboard's sign-in links and sessions, and the addresses links may be mailed to. */
  sessions: SessionStore;
  emails: AccountEmails;
  idempotency: IdempotencyStore;
  /** Cluster mode's connection (CLUSTER_NATS_URLS), null on the embedded store alone. */
  cluster: Cluster | null;
  /** bge-m3 on ONNX Runtime; null when text mode is off (no BGE_M3_MODEL_DIR). */
  embedder: Embedder | null;
  chunking: ChunkSettings;
  /** The keyword index (SQLite FTS5 beside LMDB) and its news corpus. */
  keyword: KeywordDb;
  news: NewsIndex;
  /** Job postings (LMDB), their keyword index and the reviewed skill vocabulary. */
  jobs: JobStore;
  jobsIndex: JobsIndex;
  vocabulary: Vocabulary;
  /** Live scrapes: the page reader (deadline, proxy, cookies) and every scraper (an `engine=` each). */
  live: HttpClient;
  scrapers: LiveScrapers;
  parsers: ParsePool;
  /** The polled outlets and their state. */
  outlets: Outlets;
  /** A poller over the outlets (serve's background loop with INGEST=on, `newsmatch ingest`); stop() it when done. */
  createPoller(): Poller;
  /** Told of every outlet poll by this service's pollers (metrics listen: src/ops). */
  readonly pollListeners: Set<(outlet: string, ok: boolean) => void>;
  /** Monitors: their records, the pump that matches each new window, the feed of their events. */
  monitors: Monitors;
  monitorStore: MonitorStore;
  monitorFeed: MonitorFeed;
  /** Delivers webhook monitors' events (started by startBackground). */
  webhooks: WebhookDeliverer;
  /** serve's background work: catching up with writes from elsewhere and matching monitors (every MONITOR_PUMP_MS), delivering webhooks. */
  startBackground(): void;
  /** Imports a JSONL file, then indexes, seals and saves everything it added. */
  importFile(file: string, hooks?: ImportHooks & { onIndexProgress?: (done: number, total: number) => void }): Promise<ImportSummary>;
  close(): Promise<void>;
}

/**
 * Opens everything under DATA_DIR. `clock` (unix ms) drives plans, periods and rate limits:
 * tests move it instead of waiting.
 */
export async function openService(config: Config, opts: { log?: Logger; clock?: () => number } = {}): Promise<Service> {
  // Keys never reach a log line (src/log.ts).
  const log = opts.log ?? createLogger(config.logLevel, 1, config.logFormat);
  const clock = opts.clock ?? Date.now;
  fs.mkdirSync(config.dataDir, { recursive: true });
  const store = new Store(path.join(config.dataDir, 'lmdb'));
  // Once per store written by an older version: each revision rendered as responses show it (Store.rendered).
  const rendered = store.renderArticles((done, total) => {
    if (done === total || done % 100_000 === 0) log.info(`rendering stored articles as JSON for responses: ${done} of ${total} revisions`);
  });
  if (rendered > 0) log.info(`rendered ${rendered} stored articles as JSON`);
  if (config.renderedMemoryMb > 0) {
    const t0 = performance.now();
    store.mirrorRendered(config.renderedMemoryMb * 2 ** 20).then(
      ({ count, bytes }) => {
        // A small store gets no copying thread (Store.mirrorRendered): nothing to tell.
        if (count > 0)
          log.info(`${count} articles as responses show them kept in memory (${Math.round(bytes / 2 ** 20)} MB) in ${Math.round(performance.now() - t0)} ms`);
      },
      (e: unknown) => log.warn(`articles are read from LMDB only: copying them into memory failed: ${(e as Error).message}`),
    );
  }
  let cluster: Cluster | null = null;
  if (config.clusterNatsUrls.length > 0) {
    try {
      cluster = await Cluster.open(clusterSettings(config), log);
    } catch (e) {
      await store.close();
      throw e;
    }
  }
  const catalog = new Catalog();
  const catalogFile = path.join(config.dataDir, 'catalog.bin');
  // A saved catalog makes a start cost milliseconds instead of a decode of every revision.
  if (!catalog.load(catalogFile, store) && fs.existsSync(catalogFile)) log.info(`${catalogFile} is stale: rebuilding the catalog from LMDB`);
  catalog.catchUp(store);
  let engine: SearchEngine;
  try {
    engine = openEngine(path.join(config.dataDir, 'engine'), store, config, log);
  } catch (e) {
    await cluster?.close();
    await store.close();
    throw e;
  }
  const maintenance = new Maintenance(store, catalog, engine, log, topkOptions(config));
  const behind = store.nextLabel() - engine.nextLabel;
  if (behind > 0) log.info(`search engine is behind LMDB by ${behind} chunks: catching up`);
  maintenance.sync();
  const search = new VectorSearch(catalog, engine, { maxMatches: config.matchMaxMatches, topk: topkOptions(config) }, log);
  let embedder: Embedder | null = null;
  try {
    embedder = await openEmbedder(config, log);
  } catch (e) {
    await cluster?.close();
    await maintenance.close();
    engine.close();
    await store.close();
    throw e;
  }
  const chunking = chunkSettings(config);
  // Cluster mode: revisions go to the revision log with their vectors (embedded here when a line has none), and come back through the applier.
  const write = cluster ? clusterWriter(cluster, embedder, chunking) : undefined;
  // Searches on reader threads, indexing on a writer thread: the event loop does neither.
  const keyword = new KeywordDb(path.join(config.dataDir, 'keyword.sqlite'), store.storeId(), { readThreads: config.keywordReadThreads, store: store.path });
  const news = new NewsIndex(keyword, store, log);
  const jobs = new JobStore(store);
  const live = new HttpClient(
    liveScraping({
      timeoutMs: config.liveTimeoutMs,
      maxBytes: config.liveMaxBytes,
      userAgent: config.liveUserAgent,
      proxyUrl: config.liveProxyUrl,
      allowPrivate: config.liveAllowPrivate === 'on',
    }),
  );
  const parsers = new ParsePool(config.liveParseThreads);
  const outlets = new Outlets(store);
  // Cluster mode: one wallet across nodes, each account's ledger a chain in the wallet log.
  const billing = new Billing(store, clock, log, undefined, cluster?.wallet);
  const disabled = new Set(config.productsDisabled);
  const metering = new Metering(billing, new RateLimiter(clock), {
    disabled,
    maxInflight: (p) => config[`maxInflight_${p}`],
    nodes: cluster ? () => cluster.liveNodes() : undefined,
  });

  const pollListeners = new Set<(outlet: string, ok: boolean) => void>();
  const sync = () => {
    catalog.catchUp(store);
    maintenance.sync();
  };
  // The same, a slice at a time with the event loop free between slices (a large import beside
  // the server takes seconds to read in). One run at a time, shared by every waiting request;
  // a request that finds the store ahead of that run's last look starts another.
  let catching: Promise<void> | null = null;
  let closed = false;
  const lagging = () => {
    if (closed) return false;
    const labels = store.nextLabel();
    return catalog.size < store.nextOrd() || catalog.labels < labels || engine.nextLabel < labels;
  };
  const catchUpSlices = async () => {
    try {
      // A slice never runs after close() began (the engine may be closed by then).
      while (!closed) {
        const revisions = catalog.catchUp(store, CATCH_UP_REVISIONS);
        if (revisions === 0 && maintenance.sync(CATCH_UP_CHUNKS) === 0) break;
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      catching = null;
    }
  };
  const catchUp = async () => {
    while (lagging()) await (catching ??= catchUpSlices());
  };

  const monitorStore = new MonitorStore(store);
  // Webhook URLs are named by callers: public addresses only, unless LIVE_ALLOW_PRIVATE=on.
  const webhookClient = new HttpClient(
    webhookDelivery({ timeoutMs: config.monitorWebhookTimeoutMs, allowPrivate: config.liveAllowPrivate === 'on', userAgent: 'newsmatch-webhooks/1' }),
  );
  const monitorFeed = new MonitorFeed();
  const embedQuery = embedder ? (text: string) => embedder.embedQuery(text) : undefined;
  const outletNames = () =>
    new Set(
      outlets
        .list()
        .filter((o) => o.enabled)
        .map((o) => o.name),
    );
  const monitors = new Monitors({
    store,
    catalog,
    engine,
    monitors: monitorStore,
    feed: monitorFeed,
    billing,
    log,
    clock,
    catchUp,
    embedQuery,
    outletNames,
    checkWebhook: (url, secret) => checkWebhookUrl(webhookClient, url, secret, clock()),
    onResume: () => webhooks.kick(),
    yieldMs: config.monitorYieldMs,
  });
  // What close() closes after matching and delivery have stopped, in order. close() also saves
  // the catalog for a fast next start; a start that failed need not.
  const closeParts = async (saveCatalog: boolean) => {
    // Searches already taken are answered first: their requests then charge and render.
    await engine.drain();
    // Charges still being appended to the wallet log land before its connection goes.
    await billing.drain();
    await cluster?.close();
    await webhookClient.close();
    await live.close();
    await parsers.close();
    news.close();
    await keyword.close();
    await embedder?.close();
    await maintenance.close();
    if (saveCatalog) {
      catalog.catchUp(store);
      catalog.save(catalogFile, store);
    }
    engine.close();
    await billing.close();
    await store.close();
  };
  try {
    await monitors.open();
  } catch (e) {
    // A failed start holds no lock or thread.
    await closeParts(false);
    throw e;
  }
  const webhooks = new WebhookDeliverer({
    store: monitorStore,
    feed: monitorFeed,
    client: webhookClient,
    clock,
    log,
    retryHours: config.monitorRetryHours,
    // A given-up event's matches were never delivered: their credits go back.
    onGivenUp: (event, monitor) => refundEvent(billing, event, monitor.account, `webhook given up after ${config.monitorRetryHours} h`, log),
    onPaused: () => monitors.changed(),
  });
  // Matching runs after every write this process makes, and on a timer for writes from elsewhere.
  const keys = new KeyStore(store);
  const pumpMonitors = () => void monitors.pump().catch((e) => log.error({ err: e }, 'matching monitors failed'));
  let background: NodeJS.Timeout | null = null;
  // Cluster mode: one secret for every node, so a cursor pages on whichever node the next request reaches.
  let secret: Buffer;
  try {
    secret = cluster ? await cluster.cursorSecret() : cursorSecret(config.dataDir);
  } catch (e) {
    await closeParts(false);
    throw e;
  }

  return {
    config,
    log,
    store,
    catalog,
    engine,
    maintenance,
    search,
    keys,
    cluster,
    billing,
    metering,
    sessions: new SessionStore(store, clock),
    emails: new AccountEmails(store),
    idempotency: new IdempotencyStore(store, clock, cluster?.responses),
    embedder,
    chunking,
    embedQuery,
    outlets,
    outletNames,
    keyword,
    news,
    jobs,
    jobsIndex: new JobsIndex(keyword, jobs),
    live,
    scrapers: liveScrapers(config, clock),
    parsers,
    vocabulary: skillVocabulary(),
    createPoller: () =>
      createPoller(
        config,
        store,
        outlets,
        embedder,
        log,
        () => {
          void catchUp()
            .then(pumpMonitors)
            .catch((e) => log.error({ err: e }, "catching up with the poller's writes failed"));
          news.catchUpSoon();
        },
        (outlet, ok) => pollListeners.forEach((f) => f(outlet, ok)),
        cluster && write ? { write, schedule: cluster.polls } : undefined,
      ),
    pollListeners,
    cursors: new CursorCodec(secret),
    pages: new PageCache(config.pageCacheEntries),
    sync,
    catchUp,
    monitors,
    monitorStore,
    monitorFeed,
    webhooks,
    startBackground(this: Service) {
      if (background) return;
      webhooks.start();
      background = setInterval(() => {
        if (!closed) void catchUp().then(pumpMonitors, (e) => log.error({ err: e }, 'catching up failed'));
      }, config.monitorPumpMs);
      background.unref();
      // Cluster mode: the store follows the revision log; each applied batch is searched and matched like an import's.
      cluster
        ?.startApplying(store, () => {
          void catchUp().then(pumpMonitors, (e) => log.error({ err: e }, 'catching up with the revision log failed'));
          news.catchUpSoon();
        })
        .catch((e) => log.error({ err: e }, 'cluster: starting to apply the revision log failed'));
      cluster?.mirrorKeys(keys).catch((e) => log.error({ err: e }, 'cluster: mirroring the shared keys failed'));
      cluster?.startWallet(billing).catch((e) => log.error({ err: e }, 'cluster: starting to apply the wallet log failed'));
      // A node holding some shards' vectors sends vector queries to the groups holding them, and answers its own group's.
      if (cluster) {
        const answer = (r: GroupRequest) =>
          r.kind === 'rows' ? localRows(this, r.q) : Promise.resolve(likeQuery(store, r.id).vectors.map((v) => Array.from(v)));
        this.shards = cluster.shardRouter(answer) ?? undefined;
        void cluster.serveShards(answer);
      }
    },
    async importFile(file, hooks = {}) {
      // Matched behind the import, not beside it (MONITOR_YIELD_MS): `monitors.pump()` resolves once caught up.
      const release = monitors.hold();
      try {
        const summary = await importFile(store, file, { embed: importEmbedHook(config, store, embedder), write, ...hooks });
        // Cluster mode: answered once this node's store holds what the import appended (when this node applies the log).
        await cluster?.applied();
        sync();
        news.catchUp();
        await maintenance.flush(hooks.onIndexProgress);
        return summary;
      } finally {
        // The keyword index's share of the import (on its writer thread) is ingest too: matching waits for it.
        void news
          .fresh()
          .catch(() => undefined)
          .finally(release);
        pumpMonitors();
      }
    },
    async close() {
      closed = true;
      if (background) clearInterval(background);
      await webhooks.stop();
      // The pump finishes before the store goes.
      await monitors.close();
      await closeParts(true);
    },
  };
}

/** The embedder when a model directory is configured (text mode), else null. */
export async function openEmbedder(config: Config, log: Logger): Promise<Embedder | null> {
  if (config.modelDir === undefined) return null;
  return Embedder.open(
    {
      modelDir: config.modelDir,
      device: config.embedDevice,
      threads: config.embedThreads,
      maxTokens: config.embedMaxTokens,
      maxBatchTokens: config.embedMaxBatchTokens,
      queueMax: config.embedQueueMax,
      timeoutMs: config.embedTimeoutMs,
    },
    log,
  );
}

/** The import hook that embeds revisions just stored without vectors; undefined in text mode off. */
export function importEmbedHook(config: Config, store: Store, embedder: Embedder | null): ((ords: number[]) => Promise<void>) | undefined {
  if (!embedder) return undefined;
  return async (ords) => void (await embedRevisions(store, embedder, ords, chunkSettings(config)));
}

/**
 * A poller over LMDB's outlets: the service's (whose `onWritten` catches the search index up),
 * or the CLI's when a running server owns the index.
 */
export function createPoller(
  config: Config,
  store: Store,
  outlets: Outlets,
  embedder: Embedder | null,
  log: Logger,
  onWritten?: () => void,
  onPolled?: (outlet: string, ok: boolean) => void,
  cluster?: { write: RevisionWriter; schedule: Cluster['polls'] },
): Poller {
  return new Poller({
    store,
    outlets,
    fetcher: new HttpClient(
      politePolling({
        timeoutMs: config.ingestTimeoutMs,
        maxBytes: config.ingestMaxBytes,
        maxRedirects: config.ingestMaxRedirects,
        userAgent: config.ingestUserAgent,
        concurrency: config.ingestConcurrency,
        // INGEST_ALLOW_PRIVATE: the hosts of the outlets' own feed URLs may be private; nothing else.
        privateFeeds: config.ingestAllowPrivate === 'on' ? () => outlets.list().flatMap((o) => o.feeds) : undefined,
      }),
    ),
    log,
    revisitHours: config.ingestRevisitHours,
    embed: embedder ? (docs) => embedder.embedDocs(docs, chunkSettings(config)) : undefined,
    onWritten,
    parseThreads: config.ingestParseThreads,
    onPolled,
    write: cluster?.write,
    schedule: cluster?.schedule,
  });
}

/** Cluster mode's writer: revisions go to the revision log with their vectors, embedded here when a line has none (text mode on). */
export const clusterWriter =
  (cluster: Cluster, embedder: Embedder | null, chunking: ChunkSettings): RevisionWriter =>
  async (inputs) =>
    cluster.write(await embedMissing(inputs, embedder, chunking));

/** Inputs with their chunks, embedding those that have none (when text mode is on; else left for the writer to refuse). */
async function embedMissing(inputs: RevisionInput[], embedder: Embedder | null, chunking: ChunkSettings): Promise<RevisionInput[]> {
  const missing = inputs.filter((i) => i.chunks.length === 0);
  if (!embedder || missing.length === 0) return inputs;
  const chunks = await embedder.embedDocs(
    missing.map((i) => ({ title: i.title, text: textOf(i.body, i.text) })),
    chunking,
  );
  const byInput = new Map(missing.map((input, j) => [input, chunks[j]]));
  return inputs.map((i) => (byInput.has(i) ? { ...i, chunks: byInput.get(i)! } : i));
}

export const chunkSettings = (config: Config): ChunkSettings => ({ minTokens: config.chunkMinTokens, maxTokens: config.chunkMaxTokens });

/** The top-k planner's settings. */
export const topkOptions = (config: Config): TopkOptions => ({
  scanMaxRows: config.exactScanMaxChunks,
  probeDelta: config.indexProbeDelta,
  probeMaxRows: config.indexProbeMaxChunks,
  farScore: config.indexFarScore,
});

/** Opens the engine; one ahead of LMDB (a replaced store) is rebuilt from LMDB. */
function openEngine(dir: string, store: Store, config: Config, log: Logger): SearchEngine {
  const options = {
    lists: config.indexLists,
    indexMinRows: config.indexMinChunks,
    threads: config.searchThreads,
    // A pass already runs on every thread; a second one at once would only take turns with it.
    passes: 1,
    topkBatches: 2,
  };
  const fresh = !fs.existsSync(path.join(dir, 'manifest'));
  let engine = new SearchEngine(dir, options);
  if (engine.stats().nextLabel > store.nextLabel()) {
    log.warn(`search engine in ${dir} holds chunks LMDB does not: rebuilding it from LMDB`);
    engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
    engine = new SearchEngine(dir, options);
  } else if (fresh && store.nextLabel() > 0) {
    log.info(`search engine in ${dir} is missing: rebuilding from LMDB (${store.nextLabel()} chunks)`);
  }
  return engine;
}

/** The HMAC secret for cursors, created once per data directory (so cursors survive restarts). */
function cursorSecret(dataDir: string): Buffer {
  const file = path.join(dataDir, 'cursor.key');
  try {
    fs.writeFileSync(file, randomBytes(32), { flag: 'wx', mode: 0o600 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const secret = fs.readFileSync(file);
  if (secret.length < 32) throw new Error(`${file} is damaged (shorter than 32 bytes); delete it to issue new cursors`);
  return secret;
}

/** Gives back a given-up webhook event's credits: its matches' part of its window's debit (request id `mwin_<seq>`). */
async function refundEvent(billing: Billing, event: MonitorEvent, account: string, reason: string, log: Logger): Promise<void> {
  try {
    await billing.refundUnits(account, `mwin_${event.seq}`, event.items.length, `${reason}: ${event.id}`, event.created - 60_000);
  } catch (e) {
    log.error({ err: e, event: event.id }, 'refunding a given-up webhook event failed');
  }
}
