#!/usr/bin/env node
/**
 * The `newsmatch` command. Every setting is an environment variable and a flag
 * (`--data-dir` ↔ `DATA_DIR`); see `newsmatch help`.
 */
import { parseArgs } from 'node:util';
import { ConfigError, flagName, loadConfig, settings } from '../config.js';
import { serve } from '../main.js';
import { importCommand, reindexCommand, embedCommand } from './corpus.js';
import { demoCommand } from './demo.js';
import { importJobsCommand, unknownSkillsCommand } from './jobs.js';
import { UsageError } from './output.js';
import { accountsCommand, creditsCommand, keysCommand, subscribeCommand, usageCommand, type PlatformFlags } from './platform.js';
import { quickstartCommand } from './quickstart.js';
import { ingestCommand, sourcesCommand } from './sources.js';

const USAGE = `Usage: newsmatch <command> [options]

Commands:
  quickstart                            Fetch bge-m3 when missing (about 2.2 GB, resumable, verified), add
                                        the shipped news outlets, serve with text mode and ingest on
  serve                                 Run the HTTP server
  demo [--force]                        Import a generated corpus (no model, no network needed), create a
                                        Bearer key, print a curl for each query mode (an empty store only)
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
${Object.values(settings)
  .map((s) => `  ${flagName(s.env).padEnd(26)} ${s.env.padEnd(22)} ${s.doc}`)
  .join('\n')}
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
    force: { type: 'boolean' },
  };
  for (const s of Object.values(settings)) options[flagName(s.env).slice(2)] = { type: 'string' };
  const parse = () => parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse();
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
    case 'quickstart':
      return quickstartCommand(config);
    case 'import':
      if (rest.length !== 1) throw new UsageError('import takes one file: newsmatch import <file.jsonl>');
      return importCommand(config, rest[0]);
    case 'demo':
      return demoCommand(config, rest, values);
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
