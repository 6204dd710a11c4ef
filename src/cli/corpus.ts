/** `import`, `reindex --keyword` and `embed`: the article corpus, its keyword index and its vectors. */
import fs from 'node:fs';
import path from 'node:path';
import { SingleBar } from 'cli-progress';
import { isInteractive, type Config } from '../config.js';
import { importFile } from '../ingest/index.js';
import { EngineLockedError } from '../search/index.js';
import { chunkSettings, importEmbedHook, openEmbedder, openService, type Service } from '../service.js';
import { embedBacklog } from '../embed/index.js';
import { JobStore } from '../jobs/index.js';
import { JobsIndex, KeywordDb, NewsIndex } from '../keyword/index.js';
import { Store } from '../store/index.js';
import { UsageError, quietLevel, quietLog, printSummary } from './output.js';

export async function importCommand(config: Config, file: string): Promise<number> {
  if (!fs.existsSync(file)) throw new UsageError(`no such file: ${file}`);
  const size = fs.statSync(file).size;
  let service: Service;
  try {
    service = await openService({ ...config, logLevel: quietLevel(config) });
  } catch (e) {
    if (!(e instanceof EngineLockedError)) throw e;
    // A running server owns the search engine: write the records; it indexes them itself.
    process.stderr.write('a running server owns the search engine: importing records only; the server indexes them on its next request\n');
    const store = new Store(path.join(config.dataDir, 'lmdb'));
    const embedder = await openEmbedder(config, quietLog(config));
    try {
      const summary = await importFile(store, file, {
        embed: importEmbedHook(config, store, embedder),
        onReject: (line, reason) => process.stderr.write(`line ${line}: ${reason}\n`),
      });
      printSummary(file, summary);
      return summary.rejected > 0 ? 1 : 0;
    } finally {
      await embedder?.close();
      await store.close();
    }
  }
  const bar = isInteractive()
    ? new SingleBar({ format: '{phase} [{bar}] {percentage}% | {value}/{total} {unit}', stream: process.stderr, hideCursor: true })
    : null;
  bar?.start(size, 0, { phase: 'reading ', unit: 'bytes' });
  let indexing = false;
  try {
    const summary = await service.importFile(file, {
      onProgress: (bytes) => bar?.update(bytes),
      onReject: (line, reason) => process.stderr.write(`${bar ? '\n' : ''}line ${line}: ${reason}\n`),
      onIndexProgress: (done, total) => {
        if (!bar) return;
        if (!indexing) {
          indexing = true;
          bar.setTotal(total);
          bar.update(0, { phase: 'indexing', unit: 'chunks' });
        }
        bar.update(done);
      },
    });
    bar?.stop();
    printSummary(file, summary);
    return summary.rejected > 0 ? 1 : 0;
  } finally {
    bar?.stop();
    await service.close();
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
    const bar =
      isInteractive() && total > 0
        ? new SingleBar({ format: 'keyword index [{bar}] {percentage}% | {value}/{total} revisions | ETA {eta}s', stream: process.stderr, hideCursor: true })
        : null;
    bar?.start(total, 0);
    let done = 0;
    let lastLine = performance.now();
    for (let n: number; (n = news.catchUp(2_000)) > 0; ) {
      done += n;
      bar?.update(done);
      if (!bar && performance.now() - lastLine > 10_000) {
        lastLine = performance.now();
        process.stderr.write(`indexed ${done}/${total} revisions\n`);
      }
    }
    bar?.stop();
    const postings = new JobsIndex(keyword, new JobStore(store)).catchUp();
    process.stdout.write(`keyword index rebuilt: ${done} revisions, ${postings} job posting versions\n`);
    return 0;
  } finally {
    await keyword.close();
    await store.close();
  }
}

export async function embedCommand(config: Config): Promise<number> {
  if (config.modelDir === undefined) throw new UsageError('embed needs a model: set BGE_M3_MODEL_DIR (see "Text mode" in the README)');
  // Only LMDB is written, so this runs beside a server; the server indexes the new chunks itself.
  fs.mkdirSync(config.dataDir, { recursive: true });
  const store = new Store(path.join(config.dataDir, 'lmdb'));
  const embedder = (await openEmbedder(config, quietLog(config)))!;
  const total = store.unembeddedCount();
  const bar =
    isInteractive() && total > 0
      ? new SingleBar({ format: 'embedding [{bar}] {percentage}% | {value}/{total} revisions | ETA {eta}s', stream: process.stderr, hideCursor: true })
      : null;
  bar?.start(total, 0);
  let lastLine = 0;
  try {
    const done = await embedBacklog(store, embedder, chunkSettings(config), (n, of) => {
      bar?.update(n);
      // Without a terminal, a progress line every 10 seconds.
      if (!bar && performance.now() - lastLine > 10_000) {
        lastLine = performance.now();
        process.stderr.write(`embedded ${n}/${of} revisions\n`);
      }
    });
    bar?.stop();
    process.stdout.write(`embedded ${done.revisions} revisions into ${done.chunks} chunks; ${store.unembeddedCount()} left without vectors\n`);
    return 0;
  } finally {
    bar?.stop();
    await embedder.close();
    await store.close();
  }
}
