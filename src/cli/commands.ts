/**
 * Every `newsmatch` command: one entry each (name, positionals, summary, its own options with
 * their defaults, the settings that matter to it, the handler). Adding a command is adding an
 * entry; `newsmatch help` and `<command> --help` are made from this table.
 */
import { isProduct, parseRate, PRODUCT_NAMES } from '../platform/index.js';
import { serve } from '../main.js';
import type { Command, OptionSpec, SettingKey } from './command.js';
import { clusterStatusCommand } from './cluster.js';
import { embedCommand, importCommand, reindexCommand } from './corpus.js';
import { demoCommand } from './demo.js';
import { importJobsCommand, unknownSkillsCommand } from './jobs.js';
import { UsageError } from './output.js';
import { accountsCommand, creditsCommand, keysCommand, subscribeCommand, usageCommand, type PlatformFlags } from './platform.js';
import { quickstartCommand } from './quickstart.js';
import { ingestCommand, sourcesCommand } from './sources.js';

const positiveWhole = (raw: string, flag: string): void => {
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)) || Number(raw) <= 0) throw new UsageError(`${flag} must be a positive whole number, got ${raw}`);
};
const oneOf =
  (...values: string[]) =>
  (raw: string, flag: string): void => {
    if (!values.includes(raw)) throw new UsageError(`${flag} must be one of ${values.join(', ')}, got ${raw}`);
  };

const EMBEDDING: SettingKey[] = ['modelDir', 'embedDevice', 'embedThreads', 'embedMaxTokens', 'embedMaxBatchTokens', 'chunkMinTokens', 'chunkMaxTokens'];
const LOGS: SettingKey[] = ['logLevel', 'logFormat'];
const STORE: SettingKey[] = ['dataDir'];
const CLUSTER: SettingKey[] = ['clusterNatsUrls', 'clusterNodeId', 'clusterShards'];

const account: OptionSpec = { type: 'string', value: 'ID', doc: 'The account (newsmatch accounts create prints its id).', required: true };
const name: OptionSpec = { type: 'string', value: 'NAME', doc: 'A name to recognise it by.' };
const scope: OptionSpec = {
  type: 'string',
  value: 'PRODUCT',
  multiple: true,
  doc: `Products the key may call (repeat the flag); none: every product. Products: ${PRODUCT_NAMES.join(', ')}.`,
  check: (raw, flag) => {
    if (!isProduct(raw)) throw new UsageError(`${flag}: unknown product ${raw}; products: ${PRODUCT_NAMES.join(', ')}`);
  },
};

const flags = (opts: Record<string, unknown>): PlatformFlags => opts as PlatformFlags;

export const commands: Command[] = [
  {
    name: 'quickstart',
    summary:
      'Fetch bge-m3 when missing (about 2.2 GB, resumable, verified), add the shipped news outlets, create an operator key if there is none, then serve with text mode and ingest on.',
    settings: [
      ...STORE,
      'modelDir',
      'modelHubUrl',
      'modelHubRepo',
      'modelHubRevision',
      'modelHubSubdir',
      'modelHubAllowPrivate',
      'modelHubTimeoutMs',
      'quickstartOutlets',
      'host',
      'port',
      ...LOGS,
    ],
    run: ({ config }) => quickstartCommand(config),
  },
  {
    name: 'demo',
    summary: 'Import a generated corpus (no model, no network needed) into an empty store, create a Bearer key and print a curl for each query mode.',
    options: { force: { type: 'boolean', doc: 'Add the demo beside the articles already stored (the same day twice: unchanged).' } },
    settings: [...STORE, 'host', 'port', ...LOGS],
    run: ({ config, args, opts }) => demoCommand(config, args, opts as { force?: boolean }),
  },
  {
    name: 'serve',
    summary: 'Run the HTTP server (until SIGTERM or SIGINT).',
    settings: 'all',
    run: async ({ config }) => {
      await serve(config);
      return -1;
    },
  },
  {
    name: 'import',
    args: ['<file.jsonl>'],
    summary: 'Import article revisions (one JSON object per line); lines without chunks are chunked and embedded in text mode.',
    settings: [...STORE, ...EMBEDDING, 'searchThreads', 'indexMinChunks', 'indexLists', ...CLUSTER, ...LOGS],
    run: ({ config, args }) => importCommand(config, args[0]),
  },
  {
    name: 'import-jobs',
    args: ['<file.jsonl>'],
    summary:
      'Import job postings (url, title, company, location, remote, employment_type, salary_min/max/currency, skills, description, posted_at, source); skills are filed under the vocabulary’s names.',
    settings: [...STORE],
    run: ({ config, args }) => importJobsCommand(config, args[0]),
  },
  {
    name: 'jobs unknown-skills',
    summary: 'Skill names seen at import that the vocabulary lacks, by count.',
    settings: [...STORE],
    run: ({ config }) => unknownSkillsCommand(config),
  },
  {
    name: 'reindex',
    summary: 'Rebuild the keyword index (news and jobs) from LMDB.',
    options: { keyword: { type: 'boolean', doc: 'Rebuild the keyword index (the one index this rebuilds).', required: true } },
    settings: [...STORE],
    run: ({ config }) => reindexCommand(config),
  },
  {
    name: 'embed',
    summary: 'Embed every stored revision that has no vectors yet (after a model is added); safe to interrupt and run again.',
    settings: [...STORE, ...EMBEDDING, ...LOGS],
    run: ({ config }) => embedCommand(config),
  },
  {
    name: 'sources add',
    summary: 'Add an outlet to poll (its name is the source name queries filter on).',
    options: {
      name: { type: 'string', value: 'NAME', doc: 'The source name its articles get.', required: true },
      homepage: { type: 'string', value: 'URL', doc: 'Its home page.', required: true },
      feed: { type: 'string', value: 'URL', multiple: true, doc: 'An RSS or Atom feed (repeat the flag for more).' },
      'fetch-articles': { type: 'boolean', doc: 'Also fetch each item’s page and extract its text.', default: 'off' },
      interval: { type: 'string', value: 'DURATION', doc: 'Time between polls (30s, 5m, 1h).', default: '5m' },
      language: { type: 'string', value: 'CODE', doc: 'ISO 639-1 language of its articles (en).' },
      country: { type: 'string', value: 'CODE', doc: 'ISO 3166-1 alpha-2 country (GB).' },
    },
    settings: [...STORE],
    run: ({ config, args, opts }) => sourcesCommand(config, ['add', ...args], opts),
  },
  {
    name: 'sources list',
    summary: 'Outlets with their feeds, last success, last error, article count.',
    settings: [...STORE],
    run: ({ config }) => sourcesCommand(config, ['list'], {}),
  },
  ...(['disable', 'enable', 'remove'] as const).map(
    (sub): Command => ({
      name: `sources ${sub}`,
      args: ['<name>'],
      summary: { disable: 'Stop polling an outlet.', enable: 'Poll an outlet again.', remove: 'Forget an outlet (its articles stay).' }[sub],
      settings: [...STORE],
      run: ({ config, args }) => sourcesCommand(config, [sub, args[0]], {}),
    }),
  ),
  {
    name: 'ingest',
    summary: 'Poll every enabled outlet now, ignoring intervals, then exit (serve polls in the background with INGEST=on).',
    options: { once: { type: 'boolean', doc: 'One round, then exit (the only mode).', required: true } },
    settings: [
      ...STORE,
      'ingestConcurrency',
      'ingestRevisitHours',
      'ingestTimeoutMs',
      'ingestMaxBytes',
      'ingestMaxRedirects',
      'ingestUserAgent',
      'ingestParseThreads',
      'ingestAllowPrivate',
      ...EMBEDDING,
      ...CLUSTER,
      ...LOGS,
    ],
    run: ({ config }) => ingestCommand(config),
  },
  {
    name: 'cluster status',
    summary: "Cluster mode: the revision log (revisions, replicas, leader) and every node's last report (applied, lag, caught up).",
    options: { json: { type: 'boolean', doc: 'Print it as JSON.' } },
    settings: [...CLUSTER, ...LOGS],
    run: ({ config, opts }) => clusterStatusCommand(config, opts.json === true),
  },
  {
    name: 'accounts create',
    summary: 'Create an account (250 free credits, free plans); prints its id last.',
    options: { name },
    settings: [...STORE],
    run: ({ config, opts }) => accountsCommand(config, ['create'], flags(opts)),
  },
  {
    name: 'accounts show',
    args: ['<id>'],
    summary: 'Credits by kind, subscriptions, this period’s usage and limits.',
    settings: [...STORE],
    run: ({ config, args }) => accountsCommand(config, ['show', args[0]], {}),
  },
  {
    name: 'accounts login-link',
    args: ['<id>'],
    summary: 'A one-time link that signs the account holder in to the dashboard (valid 15 minutes, used once); prints it last, under PUBLIC_URL.',
    settings: [...STORE, 'publicUrl', 'host', 'port'],
    run: ({ config, args }) => accountsCommand(config, ['login-link', args[0]], {}),
  },
  {
    name: 'accounts logout',
    args: ['<id>'],
    summary: 'End every dashboard session of the account at once, and void its unused sign-in links.',
    settings: [...STORE],
    run: ({ config, args }) => accountsCommand(config, ['logout', args[0]], {}),
  },
  {
    name: 'accounts email',
    args: ['<id>', '<address>'],
    summary: 'The address the dashboard\'s "email me a link" form mails the account\'s sign-in links to (with SMTP_URL set); none removes it.',
    settings: [...STORE],
    run: ({ config, args }) => accountsCommand(config, ['email', args[0], args[1]], {}),
  },
  {
    name: 'keys create',
    summary:
      'Create a key: a Bearer key (of the operator account without --account) or, with --scheme gateway, a gateway key (charged to no wallet; 429 rate_limited past --rate). The secret is printed once, as the last line.',
    options: {
      scheme: { type: 'string', value: 'bearer|gateway', doc: 'The kind of key.', default: 'bearer', check: oneOf('bearer', 'gateway') },
      account: { ...account, required: false, doc: 'The account a Bearer key spends (default: the operator account).' },
      scope,
      rate: {
        type: 'string',
        value: 'N/UNIT',
        doc: 'Gateway keys: requests allowed (10/s, 600/min, 5000/h).',
        check: (raw, flag) => {
          if (parseRate(raw) === null) throw new UsageError(`${flag} must look like 10/s, 600/min or 5000/h, got ${raw}`);
        },
      },
      name,
    },
    settings: [...STORE, ...CLUSTER],
    run: ({ config, opts }) => keysCommand(config, ['create'], flags(opts)),
  },
  {
    name: 'keys list',
    summary: 'List keys (never their secrets).',
    settings: [...STORE],
    run: ({ config }) => keysCommand(config, ['list'], {}),
  },
  {
    name: 'keys revoke',
    args: ['<id>'],
    summary: 'Revoke a key.',
    settings: [...STORE, ...CLUSTER],
    run: ({ config, args }) => keysCommand(config, ['revoke', args[0]], {}),
  },
  {
    name: 'subscribe',
    summary: 'Change a product’s plan (credit products: free, pro, ultra, mega; marketplace: free, pro, ultra, mega, payg; none to unsubscribe).',
    options: {
      account,
      product: { type: 'string', value: 'PRODUCT', doc: `One of ${PRODUCT_NAMES.join(', ')}.`, required: true },
      plan: { type: 'string', value: 'PLAN', doc: 'free, pro, ultra, mega, payg (marketplace) or none.', required: true },
    },
    settings: [...STORE],
    run: ({ config, opts }) => subscribeCommand(config, flags(opts)),
  },
  ...(['grant', 'buy'] as const).map(
    (sub): Command => ({
      name: `credits ${sub}`,
      summary: sub === 'grant' ? 'Subscription credits: spent first, expire at the period’s end.' : 'Purchased credits: never expire.',
      options: { account, credits: { type: 'string', value: 'N', doc: 'How many (a positive whole number).', required: true, check: positiveWhole } },
      settings: [...STORE],
      run: ({ config, opts }) => creditsCommand(config, [sub], flags(opts)),
    }),
  ),
  {
    name: 'usage',
    summary: 'The account as accounts show, then its ledger.',
    options: {
      account,
      period: {
        type: 'string',
        value: 'PERIOD',
        doc: 'current, previous, YYYY-MM or all.',
        default: 'all',
        check: (raw, flag) => {
          if (!/^(all|current|previous|\d{4}-(0[1-9]|1[0-2]))$/.test(raw))
            throw new UsageError(`${flag} must be all, current, previous or YYYY-MM, got ${raw}`);
        },
      },
    },
    settings: [...STORE],
    run: ({ config, opts }) => usageCommand(config, flags(opts)),
  },
];
