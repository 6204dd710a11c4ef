/** `import`, `reindex --keyword` and `embed`: the article corpus, its keyword index and its vectors. */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';
import { importFile, type ImportHooks, type ImportSummary } from '../ingest/index.js';
import { EngineLockedError } from '../search/index.js';
import { Cluster, clusterSettings } from '../cluster/index.js';
import { chunkSettings, clusterWriter, importEmbedHook, openEmbedder, openService, type Service } from '../service.js';
import { embedBacklog } from '../embed/index.js';
import { JobStore } from '../jobs/index.js';
import { JobsIndex, KeywordDb, NewsIndex } from '../keyword/index.js';
import { Store } from '../store/index.js';
import { UsageError, quietLevel, quietLog, printSummary } from './output.js';
import { startProgress, type Progress } from './progress.js';

/**
 * Where an import writes: the whole service, or, while a running server owns the search
 * engine, the store alone (the server indexes the records on its next request).
 */
export async function openForImport(config: Config): Promise<{ service: Service } | { store: Store }> {
  try {
    return { service: await openService({ ...config, logLevel: quietLevel(config) }) };
  } catch (e) {
    if (!(e instanceof EngineLockedError)) throw e;
    process.stderr.write('a running server owns the search engine: importing records only; the server indexes them on its next request\n');
    return { store: new Store(path.join(config.dataDir, 'lmdb')) };
  }
}

export async function importCommand(config: Config, file: string): Promise<number> {
  if (!fs.existsSync(file)) throw new UsageError(`no such file: ${file}`);
  const size = fs.statSync(file).size;
  if (config.clusterNatsUrls.length > 0) return clusterImport(config, file, size);
  const opened = await openForImport(config);
  if ('store' in opened) {
    const { store } = opened;
    const embedder = await openEmbedder(config, quietLog(config));
    return importWithProgress(
      file,
      size,
      'imported',
      (hooks) => importFile(store, file, { embed: importEmbedHook(config, store, embedder), ...hooks }),
      async () => {
        await embedder?.close();
        await store.close();
      },
    );
  }
  const { service } = opened;
  const reading = startProgress({ label: 'importing', verb: 'imported', unit: 'lines', total: size });
  let indexing: Progress | null = null;
  let current = reading;
  try {
    const summary = await service.importFile(file, {
      onProgress: (bytes, lines) => reading.update(bytes, lines),
      onReject: (line, reason) => current.log(`line ${line}: ${reason}`),
      onIndexProgress: (done, total) => {
        if (indexing === null) {
          reading.stop();
          indexing = startProgress({ label: 'indexing', verb: 'indexed', unit: 'chunks', total });
          current = indexing;
        }
        indexing.update(done);
      },
    });
    reading.stop();
    (indexing as Progress | null)?.stop();
    printSummary(file, summary);
    return summary.rejected > 0 ? 1 : 0;
  } finally {
    reading.stop();
    (indexing as Progress | null)?.stop();
    await service.close();
  }
}

/**
 * Cluster mode: the file goes to the cluster's revision log, from any machine that reaches the
 * NATS servers; the nodes apply it to their stores. Every line reported done is acknowledged
 * by the log's replicas.
 */
async function clusterImport(config: Config, file: string, size: number): Promise<number> {
  const log = quietLog(config);
  const cluster = await Cluster.open(clusterSettings(config), log);
  const embedder = await openEmbedder(config, log).catch(async (e) => {
    await cluster.close();
    throw e;
  });
  return importWithProgress(
    file,
    size,
    'appended',
    (hooks) => importFile(null, file, { write: clusterWriter(cluster, embedder, chunkSettings(config)), ...hooks }),
    async () => {
      await embedder?.close();
      await cluster.close();
    },
  );
}

/** An import with a progress bar and its summary printed (exit 1 when a line was refused); `done` closes what it used. */
async function importWithProgress(
  file: string,
  size: number,
  verb: string,
  run: (hooks: Pick<ImportHooks, 'onProgress' | 'onReject'>) => Promise<ImportSummary>,
  done: () => Promise<void>,
): Promise<number> {
  const progress = startProgress({ label: 'importing', verb, unit: 'lines', total: size });
  try {
    const summary = await run({
      onProgress: (bytes, lines) => progress.update(bytes, lines),
      onReject: (line, reason) => progress.log(`line ${line}: ${reason}`),
    });
    progress.stop();
    printSummary(file, summary);
    return summary.rejected > 0 ? 1 : 0;
  } finally {
    progress.stop();
    await done();
  }
}

/** Empties the keyword index and rebuilds it from LMDB, with progress. */
export async function reindexCommand(config: Config): Promise<number> {
  fs.mkdirSync(config.dataDir, { recursive: true });
  const store = new Store(path.join(config.dataDir, 'lmdb'));
  const keyword = new KeywordDb(path.join(config.dataDir, 'keyword.sqlite'), store.storeId());
  try {
    keyword.reset('news');
    keyword.reset('jobs');
    const news = new NewsIndex(keyword, store);
    const total = news.behind();
    const progress = startProgress({ label: 'keyword index', verb: 'indexed', unit: 'revisions', total });
    let done = 0;
    try {
      for (let n: number; (n = news.catchUp(2_000)) > 0; ) {
        done += n;
        progress.update(done);
      }
    } finally {
      progress.stop();
    }
    const postings = new JobsIndex(keyword, new JobStore(store)).catchUp();
    process.stdout.write(`keyword index rebuilt: ${done} revisions, ${postings} job posting versions\n`);
    return 0;
  } finally {
    await keyword.close();
    await store.close();
  }
}

export async function embedCommand(config: Config): Promise<number> {
  if (config.clusterNatsUrls.length > 0) {
    // Embedding here would change this node's store outside the log, and no other node's.
    throw new UsageError(
      'embed: in cluster mode every revision in the revision log carries its vectors (a line without chunks is embedded before it is appended), and a node holding some shards keeps only the text of the others: there is nothing to embed',
    );
  }
  if (config.modelDir === undefined) throw new UsageError('embed needs a model: set BGE_M3_MODEL_DIR (see "Text mode" in the README)');
  // Only LMDB is written, so this runs beside a server; the server indexes the new chunks itself.
  fs.mkdirSync(config.dataDir, { recursive: true });
  const store = new Store(path.join(config.dataDir, 'lmdb'));
  const embedder = (await openEmbedder(config, quietLog(config)))!;
  const total = store.unembeddedCount();
  const progress = startProgress({ label: 'embedding', verb: 'embedded', unit: 'revisions', total });
  try {
    const done = await embedBacklog(store, embedder, chunkSettings(config), (n) => progress.update(n));
    progress.stop();
    process.stdout.write(`embedded ${done.revisions} revisions into ${done.chunks} chunks; ${store.unembeddedCount()} left without vectors\n`);
    return 0;
  } finally {
    progress.stop();
    await embedder.close();
    await store.close();
  }
}
