/**
 * The core, assembled: LMDB store, catalog, vector index, keys, cursors. Both the HTTP
 * server and the CLI commands work through one Service, never through each other.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import type { Config } from './config.js';
import { importFile, type ImportHooks, type ImportSummary } from './ingest/index.js';
import { CursorCodec, type MatchDeps } from './match/index.js';
import { KeyStore } from './platform/index.js';
import { HnswIndex, VectorSearch } from './search/index.js';
import { Catalog, Store } from './store/index.js';

export interface Service extends MatchDeps {
  config: Config;
  log: Logger;
  hnsw: HnswIndex;
  keys: KeyStore;
  /** Imports a JSONL file, then brings the index up to date and saves it. */
  importFile(file: string, hooks?: ImportHooks & { onIndexProgress?: (done: number, total: number) => void }): Promise<ImportSummary>;
  close(): Promise<void>;
}

export async function openService(config: Config, opts: { log?: Logger } = {}): Promise<Service> {
  const log = opts.log ?? pino({ level: config.logLevel });
  fs.mkdirSync(config.dataDir, { recursive: true });
  const store = new Store(path.join(config.dataDir, 'lmdb'));
  const catalog = new Catalog();
  catalog.catchUp(store);
  const hnsw = HnswIndex.open(
    path.join(config.dataDir, 'chunks.usearch'),
    store,
    { connectivity: config.hnswConnectivity, expansionAdd: config.hnswExpansionAdd, expansionSearch: config.hnswExpansionSearch },
    (msg) => log.info(msg),
  );
  const search = new VectorSearch(store, catalog, hnsw, {
    exactScanMaxChunks: config.exactScanMaxChunks,
    maxMatches: config.matchMaxMatches,
  });

  const sync = (onIndexProgress?: (done: number, total: number) => void) => {
    catalog.catchUp(store);
    const added = hnsw.catchUp(store, onIndexProgress);
    if (added > 1000) log.info(`vector index caught up with ${added} new chunks`);
  };

  return {
    config,
    log,
    store,
    catalog,
    hnsw,
    search,
    keys: new KeyStore(store),
    cursors: new CursorCodec(cursorSecret(config.dataDir)),
    sync: () => sync(),
    async importFile(file, hooks = {}) {
      const summary = await importFile(store, file, hooks);
      sync(hooks.onIndexProgress);
      hnsw.save();
      return summary;
    },
    async close() {
      hnsw.save();
      await store.close();
    },
  };
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
