/**
 * `newsmatch quickstart`: the whole service in one command. It fetches bge-m3 where the
 * model directory lacks it (resumable, each file verified against the hub's hashes), adds the
 * shipped outlet list (or QUICKSTART_OUTLETS) as `sources add` would, makes an operator key
 * when there is none, and serves with text mode and ingest on, saying what it does at each step.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SingleBar } from 'cli-progress';
import { isInteractive, type Config } from '../config.js';
import { checkModelDir } from '../embed/index.js';
import { addOutletList, DEFAULT_OUTLETS_FILE, OutletError, Outlets, readOutletList } from '../ingest/index.js';
import { serve } from '../main.js';
import { completeModel, fetchModel, formatBytes, hasPartial, ModelFetchError, type DownloadEvents } from '../model-fetch/index.js';
import { FetchError, HttpClient, modelHub } from '../net/index.js';
import { KeyStore, OPERATOR } from '../platform/index.js';
import { Store } from '../store/index.js';

const out = (s: string) => process.stdout.write(`${s}\n`);

/** The model's step: where it is, fetched when missing. False when the fetch failed (said on stderr). */
export async function ensureModel(config: Config, dir: string): Promise<boolean> {
  const done = completeModel(dir);
  if (done) {
    out(`    complete: ${done.repo}@${done.revision}, fetched ${done.fetchedAt} and verified then; nothing to download`);
    return true;
  }
  if (config.modelDir !== undefined && !hasPartial(dir) && usable(dir)) {
    out('    holds a model newsmatch did not fetch (no newsmatch-model.json): used as it is');
    return true;
  }
  out(`    downloading from ${config.modelHubUrl} (the bge-m3 ONNX export is about 2.2 GB; run again after an interruption to resume)`);
  const client = new HttpClient(
    modelHub({ hubUrl: config.modelHubUrl, allowPrivateHub: config.modelHubAllowPrivate === 'on', timeoutMs: config.modelHubTimeoutMs }),
  );
  const source = { hub: config.modelHubUrl, repo: config.modelHubRepo, revision: config.modelHubRevision, subdir: config.modelHubSubdir };
  try {
    await fetchModel(dir, source, client, progress());
    out(`    bge-m3 is in ${dir}`);
    return true;
  } catch (e) {
    if (!(e instanceof FetchError || e instanceof ModelFetchError)) throw e;
    process.stderr.write(
      `model download: ${e.message}\n(needs access to MODEL_HUB_URL, or a mirror there; what arrived is kept in ${dir}: run again to resume)\n`,
    );
    return false;
  } finally {
    await client.close();
  }
}

const usable = (dir: string): boolean => {
  try {
    checkModelDir(dir);
    return true;
  } catch {
    return false;
  }
};

/** Indented lines; on a terminal a bar with bytes, rate and ETA, else a line every 10 s. */
export function progress(): DownloadEvents {
  const tty = isInteractive();
  let bar: SingleBar | null = null;
  let size = 0;
  let from = 0;
  let began = 0;
  let lastLine = 0;
  const rate = (bytes: number) => (bytes - from) / Math.max((Date.now() - began) / 1000, 0.001);
  return {
    say: (line) => out(`    ${line}`),
    start(name, total, at) {
      [size, from, began, lastLine] = [total, at, Date.now(), Date.now()];
      if (!tty) return;
      bar = new SingleBar({
        format: '    {file} [{bar}] {percentage}% | {done} of {size} | {rate}/s | ETA {eta_formatted}',
        stream: process.stderr,
        hideCursor: true,
        etaBuffer: 200,
      });
      bar.start(total, at, { file: name, done: formatBytes(at), size: formatBytes(total), rate: '…' });
    },
    progress(name, bytes) {
      if (bar) return bar.update(bytes, { done: formatBytes(bytes), rate: formatBytes(rate(bytes)) });
      if (Date.now() - lastLine < 10_000) return;
      lastLine = Date.now();
      const left = (size - bytes) / Math.max(rate(bytes), 1);
      out(
        `    ${name}: ${formatBytes(bytes)} of ${formatBytes(size)} (${Math.floor((100 * bytes) / size)}%), ${formatBytes(rate(bytes))}/s, about ${Math.ceil(left)} s left`,
      );
    },
    stop() {
      bar?.stop();
      bar = null;
    },
  };
}

/** Adds the outlet list and, when the operator has no live Bearer key, one named "quickstart" (its secret returned, to print once). */
async function prepareStore(config: Config): Promise<{ added: number; present: number; from: string; secret: string | null }> {
  const list = readOutletList(config.quickstartOutlets);
  fs.mkdirSync(config.dataDir, { recursive: true });
  const store = new Store(path.join(config.dataDir, 'lmdb'));
  try {
    const { added, present } = addOutletList(new Outlets(store), list);
    const keys = new KeyStore(store);
    const haveKey = keys.list().some((k) => k.scheme === 'bearer' && k.revokedAt === null && (k.account ?? OPERATOR) === OPERATOR);
    const secret = haveKey ? null : keys.create({ scheme: 'bearer', name: 'quickstart' }).secret;
    return { added: added.length, present: present.length, from: config.quickstartOutlets ?? DEFAULT_OUTLETS_FILE, secret };
  } finally {
    await store.close();
  }
}

export async function quickstartCommand(config: Config): Promise<number> {
  const dir = config.modelDir ?? path.join(config.dataDir, 'model');
  out('newsmatch quickstart: the bge-m3 model, a list of news outlets, then the server with text mode and ingest on');
  out(`1/3 model: bge-m3 in ${dir} (${config.modelDir !== undefined ? 'BGE_M3_MODEL_DIR' : 'DATA_DIR/model; BGE_M3_MODEL_DIR puts it elsewhere'})`);
  if (!(await ensureModel(config, dir))) return 1;

  let prepared: Awaited<ReturnType<typeof prepareStore>>;
  try {
    prepared = await prepareStore(config);
  } catch (e) {
    if (!(e instanceof OutletError)) throw e;
    process.stderr.write(`newsmatch quickstart: ${e.message}\n`);
    return 1;
  }
  const { added, present, from, secret } = prepared;
  out(`2/3 outlets from ${from}: ${added} added, ${present} already there (left as they are); \`newsmatch sources list\` shows their polls`);
  out(
    secret
      ? `    key: created the operator Bearer key "quickstart", shown this once: ${secret}`
      : '    key: the operator has a Bearer key already (`newsmatch keys create` makes another)',
  );

  out(`3/3 serving with text mode (bge-m3 from ${dir}) and ingest on, in ${config.dataDir}`);
  const address = await serve({ ...config, modelDir: dir, ingest: 'on' });
  out(`    listening on ${address}; articles become searchable as the outlets are polled, each on its interval (\`newsmatch sources list\`)`);
  out(
    `    try: curl -s ${address}/v1/match -H 'authorization: Bearer ${secret ?? '<key>'}' -H 'content-type: application/json' ` +
      `-d '{"text": "central bank raises interest rates", "order": "relevance"}'`,
  );
  return -1;
}
