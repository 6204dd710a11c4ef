#!/usr/bin/env node
/**
 * The `newsmatch` command. Every setting is an environment variable and a flag
 * (`--data-dir` ↔ `DATA_DIR`); see `newsmatch help`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SingleBar } from 'cli-progress';
import { destination, pino } from 'pino';
import { ConfigError, flagName, isInteractive, loadConfig, settings, type Config } from './config.js';
import { serve } from './main.js';
import { accountsCommand, creditsCommand, keysCommand, subscribeCommand, UsageError, usageCommand, type PlatformFlags } from './cli-platform.js';
import { importFile, OutletError, Outlets, type ImportSummary, type OutletReport } from './ingest/index.js';
import { formatTime } from './time.js';
import { EngineLockedError } from './search/index.js';
import { chunkSettings, createPoller, importEmbedHook, openEmbedder, openService, type Service } from './service.js';
import { embedBacklog } from './embed/index.js';
import { importJobsFile, JobStore, skillVocabulary } from './jobs/index.js';
import { JobsIndex, KeywordDb, NewsIndex } from './keyword/index.js';
import { Store } from './store/index.js';

const USAGE = `Usage: newsmatch <command> [options]

Commands:
  serve                                 Run the HTTP server
  import <file.jsonl>                   Import article revisions (one JSON object per line); lines
                                        without chunks are chunked and embedded in text mode
  import-jobs <file.jsonl>              Import job postings (url, title, company, location, remote,
                                        employment_type, salary_min/max/currency, skills, description,
                                        posted_at, source); skills are filed under the vocabulary's names
  jobs unknown-skills                   Skill names seen at import that the vocabulary lacks, by count
  reindex --keyword                     Rebuild the keyword index (news and jobs) from LMDB
  embed                                 Embed every stored revision that has no vectors yet (after a
                                        model is added); safe to interrupt and run again
  sources add --name NAME --homepage URL --feed URL [--feed URL…] [--fetch-articles] [--interval 5m]
              [--language en] [--country GB]
                                        Add an outlet to poll (its name is the source name queries filter on)
  sources list                          Outlets with their feeds, last success, last error, article count
  sources disable|enable|remove NAME    Stop or restart polling an outlet (remove keeps its articles)
  ingest --once                         Poll every enabled outlet now, ignoring intervals, then exit
                                        (serve polls in the background with INGEST=on)
  accounts create [--name NAME]         Create an account (250 free credits, free plans); prints its id last
  accounts show ID                      Credits by kind, subscriptions, this period's usage and limits
  keys create [--account ID] [--scope PRODUCT…] [--name NAME]
                                        Create a Bearer key (of the operator account without --account);
                                        the secret is printed once, as the last line
  keys create --scheme gateway [--rate N/s] [--scope PRODUCT…] [--name NAME]
                                        Create a gateway key (charged to no wallet; 429 rate_limited past --rate)
  keys list                             List keys (never their secrets)
  keys revoke <ID>                      Revoke a key
  subscribe --account ID --product P --plan PLAN
                                        Change a product's plan (credit products: free, pro, ultra, mega;
                                        marketplace: free, pro, ultra, mega, payg; none to unsubscribe)
  credits grant --account ID --credits N
                                        Subscription credits: spent first, expire at the period's end
  credits buy --account ID --credits N  Purchased credits: never expire
  usage --account ID [--period current|previous|YYYY-MM|all]
                                        The account as accounts show, then its ledger
  help                                  This text

Settings (flag or environment variable):
${Object.values(settings).map((s) => `  ${flagName(s.env).padEnd(26)} ${s.env.padEnd(22)} ${s.doc}`).join('\n')}
`;


async function main(argv: string[]): Promise<number> {
  // Everything the service writes (LMDB, segments, the keyword index, the billing journal)
  // holds keys' hashes, ledgers and articles: readable by its owner only.
  process.umask(0o077);
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = {
    scheme: { type: 'string' },
    name: { type: 'string' },
    homepage: { type: 'string' },
    feed: { type: 'string', multiple: true },
    'fetch-articles': { type: 'boolean' },
    interval: { type: 'string' },
    language: { type: 'string' },
    country: { type: 'string' },
    keyword: { type: 'boolean' },
    once: { type: 'boolean' },
    account: { type: 'string' },
    scope: { type: 'string', multiple: true },
    rate: { type: 'string' },
    product: { type: 'string' },
    plan: { type: 'string' },
    credits: { type: 'string' },
    period: { type: 'string' },
  };
  for (const s of Object.values(settings)) options[flagName(s.env).slice(2)] = { type: 'string' };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { positionals } = parsed;
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') {
    process.stdout.write(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  const flags: Record<string, string | undefined> = {};
  for (const s of Object.values(settings)) flags[s.env] = values[flagName(s.env).slice(2)] as string | undefined;
  const config = loadConfig(undefined, flags);

  switch (command) {
    case 'serve':
      await serve(config);
      return -1; // keeps running
    case 'import':
      if (rest.length !== 1) throw new UsageError('import takes one file: newsmatch import <file.jsonl>');
      return importCommand(config, rest[0]);
    case 'import-jobs':
      if (rest.length !== 1) throw new UsageError('import-jobs takes one file: newsmatch import-jobs <file.jsonl>');
      return importJobsCommand(config, rest[0]);
    case 'jobs':
      if (rest[0] !== 'unknown-skills' || rest.length !== 1) throw new UsageError('jobs takes unknown-skills');
      return unknownSkillsCommand(config);
    case 'reindex':
      if (!values.keyword || rest.length !== 0) throw new UsageError('reindex rebuilds the keyword index: newsmatch reindex --keyword');
      return reindexCommand(config);
    case 'embed':
      if (rest.length !== 0) throw new UsageError('embed takes no arguments');
      return embedCommand(config);
    case 'sources':
      return sourcesCommand(config, rest, values);
    case 'ingest':
      if (!values.once) throw new UsageError('ingest runs one round: newsmatch ingest --once (serve polls in the background with INGEST=on)');
      return ingestCommand(config);
    case 'keys':
      return keysCommand(config, rest, values as PlatformFlags);
    case 'accounts':
      return accountsCommand(config, rest, values as PlatformFlags);
    case 'subscribe':
      return subscribeCommand(config, values as PlatformFlags);
    case 'credits':
      return creditsCommand(config, rest, values as PlatformFlags);
    case 'usage':
      return usageCommand(config, values as PlatformFlags);
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

async function importCommand(config: Config, file: string): Promise<number> {
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
      const summary = await importFile(store, file, { embed: importEmbedHook(config, store, embedder), onReject: (line, reason) => process.stderr.write(`line ${line}: ${reason}\n`) });
      printSummary(file, summary);
      return summary.rejected > 0 ? 1 : 0;
    } finally {
      await embedder?.close();
      await store.close();
    }
  }
  const bar = isInteractive() ? new SingleBar({ format: '{phase} [{bar}] {percentage}% | {value}/{total} {unit}', stream: process.stderr, hideCursor: true }) : null;
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

/** Job postings into LMDB, then the keyword index caught up (both safe beside a running server). */
async function importJobsCommand(config: Config, file: string): Promise<number> {
  if (!fs.existsSync(file)) throw new UsageError(`no such file: ${file}`);
  fs.mkdirSync(config.dataDir, { recursive: true });
  const store = new Store(path.join(config.dataDir, 'lmdb'));
  let keyword: KeywordDb | undefined;
  try {
    const jobs = new JobStore(store);
    const s = await importJobsFile(jobs, skillVocabulary(), file, (line, reason) => process.stderr.write(`line ${line}: ${reason}\n`));
    keyword = new KeywordDb(path.join(config.dataDir, 'keyword.sqlite'), store.storeId());
    new JobsIndex(keyword, jobs).catchUp();
    process.stdout.write(
      `${file}: ${s.lines} lines, ${s.newPostings} new postings, ${s.updated} updated, ${s.unchanged} unchanged, ${s.rejected} rejected; ` +
        `${s.unknownSkills} skill names outside the vocabulary (newsmatch jobs unknown-skills)\n`,
    );
    return s.rejected > 0 ? 1 : 0;
  } finally {
    await keyword?.close();
    await store.close();
  }
}

async function unknownSkillsCommand(config: Config): Promise<number> {
  const store = new Store(path.join(config.dataDir, 'lmdb'));
  try {
    const unknown = new JobStore(store).unknownSkills();
    for (const u of unknown) process.stdout.write(`${String(u.postings).padStart(7)}  ${u.name}\n`);
    if (unknown.length === 0) process.stdout.write('every imported skill is in the vocabulary\n');
    return 0;
  } finally {
    await store.close();
  }
}

/** Empties the keyword index and rebuilds it from LMDB, with progress. */
async function reindexCommand(config: Config): Promise<number> {
  fs.mkdirSync(config.dataDir, { recursive: true });
  const store = new Store(path.join(config.dataDir, 'lmdb'));
  const keyword = new KeywordDb(path.join(config.dataDir, 'keyword.sqlite'), store.storeId());
  try {
    keyword.reset('news');
    keyword.reset('jobs');
    const news = new NewsIndex(keyword, store);
    const total = news.behind();
    const bar = isInteractive() && total > 0 ? new SingleBar({ format: 'keyword index [{bar}] {percentage}% | {value}/{total} revisions | ETA {eta}s', stream: process.stderr, hideCursor: true }) : null;
    bar?.start(total, 0);
    let done = 0;
    let lastLine = performance.now();
    for (let n; (n = news.catchUp(2_000)) > 0; ) {
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

async function embedCommand(config: Config): Promise<number> {
  if (config.modelDir === undefined) throw new UsageError('embed needs a model: set BGE_M3_MODEL_DIR (see "Text mode" in the README)');
  // Only LMDB is written, so this runs beside a server; the server indexes the new chunks itself.
  fs.mkdirSync(config.dataDir, { recursive: true });
  const store = new Store(path.join(config.dataDir, 'lmdb'));
  const embedder = (await openEmbedder(config, quietLog(config)))!;
  const total = store.unembeddedCount();
  const bar = isInteractive() && total > 0 ? new SingleBar({ format: 'embedding [{bar}] {percentage}% | {value}/{total} revisions | ETA {eta}s', stream: process.stderr, hideCursor: true }) : null;
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

async function sourcesCommand(config: Config, rest: string[], values: Record<string, unknown>): Promise<number> {
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
        process.stdout.write(`added outlet "${o.name}": ${o.feeds.length} feed(s), every ${o.intervalSec} s${o.fetchArticles ? ', fetching article pages' : ''}\n`);
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
          process.stderr.write(`no outlet named "${name}"\n`);
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

async function ingestCommand(config: Config): Promise<number> {
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
  const poller = createPoller(config, store, new Outlets(store), embedder, log);
  try {
    return printReports(await poller.round({ force: true }));
  } finally {
    await poller.stop();
    await embedder?.close();
    await store.close();
  }
}

/** One line per outlet on stdout, its errors on stderr; exit 1 if anything failed. */
function printReports(reports: OutletReport[]): number {
  for (const r of reports) {
    process.stdout.write(
      `${r.outlet}: ${r.feeds} feed(s) (${r.notModified} not modified), ${r.items} items, ${r.newArticles} new articles, ` +
        `${r.newRevisions} new revisions, ${r.unchanged} unchanged, ${r.pagesFetched} pages fetched, ${r.errors.length} errors\n`,
    );
    for (const e of r.errors) process.stderr.write(`  ${r.outlet}: ${e}\n`);
  }
  if (reports.length === 0) process.stdout.write('no enabled outlets: add one with `newsmatch sources add`\n');
  return reports.some((r) => r.errors.length > 0) ? 1 : 0;
}

/** The CLI logs warnings and errors only, unless LOG_LEVEL asks for more detail than `info`. */
const quietLevel = (config: Config): Config['logLevel'] => (config.logLevel === 'info' ? 'warn' : config.logLevel);

function quietLog(config: Config) {
  return pino({ level: quietLevel(config) }, destination(2));
}

function printSummary(file: string, s: ImportSummary): void {
  process.stdout.write(`imported ${file}: ${s.articles} articles, ${s.newRevisions} new revisions, ${s.unchanged} unchanged, ${s.rejected} rejected\n`);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (e) => {
    if (e instanceof UsageError || e instanceof ConfigError) {
      process.stderr.write(`newsmatch: ${e.message}\n\n${e instanceof UsageError ? 'Run "newsmatch help" for usage.\n' : ''}`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`newsmatch: ${(e as Error).stack ?? e}\n`);
      process.exitCode = 1;
    }
  },
);
