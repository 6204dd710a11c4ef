/** `sources` and `ingest --once`: the polled outlets. */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';
import { OutletError, Outlets } from '../ingest/index.js';
import { formatTime } from '../time.js';
import { EngineLockedError } from '../search/index.js';
import { Cluster, clusterSettings } from '../cluster/index.js';
import { chunkSettings, clusterWriter, createPoller, openEmbedder, openService, type Service } from '../service.js';
import { Store } from '../store/index.js';
import { UsageError, quietLevel, quietLog, printReports } from './output.js';

export async function sourcesCommand(config: Config, rest: string[], values: Record<string, unknown>): Promise<number> {
  const [sub, name] = rest;
  // Outlets live in LMDB alone, so this works beside a running server (it reads them each round).
  fs.mkdirSync(config.dataDir, { recursive: true });
  const store = new Store(path.join(config.dataDir, 'lmdb'));
  const outlets = new Outlets(store);
  try {
    switch (sub) {
      case 'add': {
        if (typeof values.name !== 'string' || typeof values.homepage !== 'string') throw new UsageError('sources add needs --name and --homepage');
        const o = outlets.add({
          name: values.name,
          homepage: values.homepage,
          feeds: (values.feed as string[] | undefined) ?? [],
          fetchArticles: values['fetch-articles'] === true,
          interval: values.interval as string | undefined,
          language: values.language as string | undefined,
          country: values.country as string | undefined,
        });
        process.stdout.write(
          `added outlet "${o.name}": ${o.feeds.length} feed(s), every ${o.intervalSec} s${o.fetchArticles ? ', fetching article pages' : ''}\n`,
        );
        return 0;
      }
      case 'list': {
        const counts = new Map(store.listSources().map((s) => [s.name, s.articleCount]));
        for (const o of outlets.list()) {
          const when = (t: number | null | undefined) => (t ? formatTime(t) : 'never');
          process.stdout.write(
            `${o.name}  ${o.enabled ? 'enabled' : 'disabled'}  every ${o.intervalSec} s  articles ${counts.get(o.name) ?? 0}  last success ${when(o.lastSuccessAt)}` +
              `  last error ${o.lastError ? `${when(o.lastError.at)} ${o.lastError.message}` : 'none'}\n` +
              o.feeds.map((f) => `    feed ${f}\n`).join(''),
          );
        }
        return 0;
      }
      case 'disable':
      case 'enable':
      case 'remove': {
        if (!name) throw new UsageError(`sources ${sub} takes an outlet name`);
        const ok = sub === 'remove' ? outlets.remove(name) : outlets.setEnabled(name, sub === 'enable');
        if (!ok) {
          process.stderr.write(`newsmatch: no outlet named "${name}"\n`);
          return 1;
        }
        process.stdout.write(`${sub === 'remove' ? 'removed' : `${sub}d`} outlet "${name}"\n`);
        return 0;
      }
      default:
        throw new UsageError('sources takes add, list, disable, enable or remove');
    }
  } catch (e) {
    if (e instanceof OutletError) throw new UsageError(e.message);
    throw e;
  } finally {
    await store.close();
  }
}

export async function ingestCommand(config: Config): Promise<number> {
  let service: Service;
  try {
    service = await openService({ ...config, logLevel: quietLevel(config) });
  } catch (e) {
    if (!(e instanceof EngineLockedError)) throw e;
    process.stderr.write('a running server owns the search engine: it indexes what this round stores on its next request\n');
    return ingestBesideServer(config);
  }
  const poller = service.createPoller();
  try {
    const reports = await poller.round({ force: true });
    service.sync();
    await service.maintenance.flush();
    return printReports(reports);
  } finally {
    await poller.stop();
    await service.close();
  }
}

/** `ingest --once` while `serve` runs: LMDB only, as `import` does. */
async function ingestBesideServer(config: Config): Promise<number> {
  const store = new Store(path.join(config.dataDir, 'lmdb'));
  const log = quietLog(config);
  const embedder = await openEmbedder(config, log);
  // Cluster mode: what the round finds goes to the revision log, like the server's own rounds.
  const cluster = config.clusterNatsUrls.length > 0 ? await Cluster.open(clusterSettings(config), log) : null;
  const write = cluster ? clusterWriter(cluster, embedder, chunkSettings(config)) : undefined;
  const poller = createPoller(
    config,
    store,
    new Outlets(store),
    embedder,
    log,
    undefined,
    undefined,
    cluster && write ? { write, schedule: cluster.polls } : undefined,
  );
  try {
    return printReports(await poller.round({ force: true }));
  } finally {
    await poller.stop();
    await cluster?.close();
    await embedder?.close();
    await store.close();
  }
}
