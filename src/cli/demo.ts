/**
 * `newsmatch demo`: a generated corpus for a machine without the bge-m3 model or internet
 * (src/demo/), imported as `newsmatch import` imports a file, then a Bearer key and one curl a
 * query mode, ready to paste.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { settings, type Config } from '../config.js';
import { DEMO_MIN_SCORE, DEMO_SOURCES, DEMO_TOPICS, generateDemoCorpus, newestOfTopic, writeDemoJsonl, type DemoTopic } from '../demo/index.js';
import { importFile, type ImportSummary } from '../ingest/index.js';
import { KeyStore } from '../platform/index.js';
import { Store } from '../store/index.js';
import { openForImport } from './corpus.js';
import { UsageError } from './output.js';

/** The topic of the printed queries: the vector is its newest article's headline, `q` its word. */
const QUERY_TOPIC = 'strike';

const out = (s = '') => process.stdout.write(`${s}\n`);

export async function demoCommand(config: Config, rest: string[], flags: { force?: boolean }): Promise<number> {
  if (rest.length > 0) throw new UsageError('demo takes no arguments: newsmatch demo [--force]');
  fs.mkdirSync(config.dataDir, { recursive: true });
  const store = new Store(path.join(config.dataDir, 'lmdb'));
  let held: number;
  try {
    held = store.articles.getCount();
  } finally {
    await store.close();
  }
  if (held > 0 && !flags.force) {
    // One line, exit 2: the demo is for an empty store; --force adds it beside what is there.
    process.stderr.write(
      `newsmatch: ${config.dataDir} already holds ${held} articles: demo fills an empty store (another --data-dir, or --force to add the demo articles beside them)\n`,
    );
    return 2;
  }

  const started = performance.now();
  const corpus = generateDemoCorpus();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-demo-'));
  const file = path.join(tmp, 'demo.jsonl');
  let summary: ImportSummary;
  let beside: boolean;
  let secret: string | undefined;
  let importMs: number;
  try {
    writeDemoJsonl(corpus, file);
    const importing = performance.now();
    ({ summary, beside, secret } = await importDemo(config, file));
    importMs = performance.now() - importing;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  if (summary.rejected > 0 || secret === undefined) {
    for (const r of summary.rejections.slice(0, 5)) process.stderr.write(`demo line ${r.line}: ${r.reason}\n`);
    return 1;
  }

  const topic = DEMO_TOPICS.find((t) => t.key === QUERY_TOPIC)!;
  const article = newestOfTopic(corpus, QUERY_TOPIC);
  const vector = Array.from(article.revisions[0].chunks[0].vector, (x) => Number(x.toPrecision(7)));
  const dataDir = path.resolve(config.dataDir);
  const timeFile = path.join(dataDir, 'demo-query.json');
  const relevanceFile = path.join(dataDir, 'demo-query-relevance.json');
  fs.writeFileSync(timeFile, `${JSON.stringify({ vector, min_score: DEMO_MIN_SCORE, limit: 10 })}\n`);
  fs.writeFileSync(relevanceFile, `${JSON.stringify({ vector, order: 'relevance', limit: 10 })}\n`);

  const days = Math.round((corpus.anchor - Math.min(...corpus.articles.map((a) => a.revisions[0].publishedAt))) / 86_400);
  out(
    `demo corpus: ${summary.articles} articles (${summary.newRevisions} new revisions, ${summary.unchanged} unchanged) on ${DEMO_TOPICS.length} topics ` +
      `from ${DEMO_SOURCES.length} outlets over the last ${days} days; ${corpus.chunks} chunks; imported in ${(importMs / 1000).toFixed(1)} s, ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s in all`,
  );
  out(`topics: ${DEMO_TOPICS.map((t) => `${t.name} ("${t.word}")`).join(', ')}`);
  out('a Bearer key of the operator account was created (named demo); its secret is shown only now.');
  // Beside a running server the keyword index catches up in the background (README, "Keyword search").
  const cluster = config.clusterNatsUrls.length > 0;
  out(
    cluster
      ? `Every node serves them once it has applied the revision log (/readyz), and knows the key; paste (${hostForUrl(config.host)}:${config.port} standing for any node):`
      : beside
        ? 'The running server indexes them at its next request (/v1/news answers "partial": true until it has caught up); paste:'
        : `Start the server (${startCommand(config)}), then paste:`,
  );
  out();
  for (const line of demoCurls(config, secret, topic, article.revisions[0].title, timeFile, relevanceFile)) out(line);
  return 0;
}

/**
 * As `newsmatch import` does (through the service, or, beside a running server, records only:
 * it indexes them), then a Bearer key of the operator account; in cluster mode the corpus goes
 * through the revision log and the key to every node (README, "Cluster mode"). No key when a
 * line was rejected.
 */
async function importDemo(config: Config, file: string): Promise<{ summary: ImportSummary; beside: boolean; secret?: string }> {
  const opened = await openForImport(config);
  if ('store' in opened) {
    try {
      const summary = await importFile(opened.store, file);
      return { summary, beside: true, secret: summary.rejected > 0 ? undefined : new KeyStore(opened.store).create(DEMO_KEY).secret };
    } finally {
      await opened.store.close();
    }
  }
  const { service } = opened;
  try {
    const summary = await service.importFile(file);
    if (summary.rejected > 0) return { summary, beside: false };
    const key = service.keys.create(DEMO_KEY);
    await service.cluster?.shareKey(service.keys, key.id);
    return { summary, beside: false, secret: key.secret };
  } finally {
    await service.close();
  }
}

const DEMO_KEY = { scheme: 'bearer', name: 'demo' } as const;

/** The lines to paste: the key, then a comment and a curl for each query mode. */
export function demoCurls(config: Config, secret: string, topic: DemoTopic, title: string, timeFile: string, relevanceFile: string): string[] {
  const base = `http://${hostForUrl(config.host)}:${config.port}`;
  const auth = '-H "Authorization: Bearer $KEY"';
  const json = `${auth} -H 'Content-Type: application/json'`;
  const lines = [
    `KEY=${secret}`,
    '# No query: the corpus newest first',
    `curl -s ${base}/v1/match ${json} -d '{"limit": 5}'`,
    `# order=time: every article scoring ${DEMO_MIN_SCORE} or more, newest first; the vector is the headline chunk of "${title}" (${topic.name})`,
    `curl -s ${base}/v1/match ${json} -d @${shellQuote(timeFile)}`,
    '# order=relevance: the same vector, the 10 best articles by score',
    `curl -s ${base}/v1/match ${json} -d @${shellQuote(relevanceFile)}`,
    `# Keyword search: "${topic.word}", newest first`,
    `curl -s '${base}/v1/news?q=${encodeURIComponent(topic.word)}&limit=5' ${auth}`,
    '# The outlets, for source filters',
    `curl -s ${base}/v1/sources ${auth}`,
  ];
  if (config.modelDir !== undefined) {
    lines.push(
      '# Text (text mode): embedded by the server',
      `curl -s ${base}/v1/match ${json} -d '${JSON.stringify({ text: topic.phrase, order: 'relevance', limit: 10 })}'`,
    );
  }
  return lines;
}

/** `npm start`, with the settings this run was given that differ from the defaults. */
function startCommand(config: Config): string {
  const env = [
    config.dataDir === settings.dataDir.default ? '' : `DATA_DIR=${shellQuote(config.dataDir)}`,
    config.port === settings.port.default ? '' : `PORT=${config.port}`,
  ].filter(Boolean);
  return [...env, 'npm start'].join(' ');
}

/** The address a local client reaches the server at: a wildcard bind is reached on loopback. */
function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/** A path as one shell word (single quotes only where it needs them). */
function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
