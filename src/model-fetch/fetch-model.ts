/**
 * A bge-m3 model directory fetched from the hub: `model.onnx` (and `model.onnx_data` where the
 * export keeps its weights outside, as the 2.2 GB bge-m3 export does), `tokenizer.json` and
 * `tokenizer_config.json`, each downloaded and verified (download.ts), then a manifest,
 * written last, that says the directory is complete:
 *
 *   DIR/newsmatch-model.json
 *   { "hub": "https://huggingface.co", "repo": "BAAI/bge-m3", "revision": "main", "fetchedAt": "2026-05-01T08:00:00.000Z",
 *     "files": [{ "name": "model.onnx", "path": "onnx/model.onnx", "size": 724923, "sha256": "…", "gitOid": null }, …] }
 *
 * With the manifest and its files at their sizes, nothing is asked of the hub again.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { HttpClient } from '../net/index.js';
import { downloadFile, sizeOf, verifyFile, type DownloadEvents } from './download.js';
import { fileUrl, listFiles, ModelFetchError, type HubFile, type HubSource } from './hub.js';

export const MANIFEST = 'newsmatch-model.json';

/** The files of a model directory, in download order: the tokenizer last, so text mode's check (embed's MODEL_FILES) fails until all are in. */
const WANTED = ['model.onnx', 'model.onnx_data', 'tokenizer.json', 'tokenizer_config.json'];
/** Small exports keep their weights inside model.onnx. */
const OPTIONAL = new Set(['model.onnx_data']);

export interface Manifest {
  hub: string;
  repo: string;
  revision: string;
  fetchedAt: string;
  files: HubFile[];
}

/** `dir`'s manifest when it and every file it lists (at its size) are there; else null. */
export function completeModel(dir: string): Manifest | null {
  let m: Manifest;
  try {
    m = JSON.parse(fs.readFileSync(path.join(dir, MANIFEST), 'utf8')) as Manifest;
  } catch {
    return null;
  }
  if (!Array.isArray(m.files) || m.files.length === 0) return null;
  return m.files.every((f) => sizeOf(path.join(dir, f.name)) === f.size) ? m : null;
}

/** Whether `dir` holds a `.part` of an interrupted download. */
export const hasPartial = (dir: string): boolean => fs.existsSync(dir) && fs.readdirSync(dir).some((f) => f.endsWith('.part'));

/** 2266820608 → "2.27 GB"; 1173 → "1.2 kB" (decimal units, as the hub shows sizes). */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = -1;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} ${units[u]}`;
}

/**
 * Fetches the model into `dir` from `source`, through `client` (the model hub's policy):
 * files already there and verified are kept, a `.part` is resumed, each download is verified,
 * and the manifest is written once all are in. Throws net's FetchError (a request failed;
 * what arrived is kept to resume) or ModelFetchError.
 */
export async function fetchModel(dir: string, source: HubSource, client: HttpClient, events: DownloadEvents): Promise<Manifest> {
  fs.mkdirSync(dir, { recursive: true });
  const listed = await listFiles(client, source);
  const where = `${source.repo}@${source.revision}${source.subdir ? ` (/${source.subdir})` : ''}`;
  const files: HubFile[] = [];
  for (const name of WANTED) {
    const f = listed.get(name);
    if (f) files.push(f);
    else if (!OPTIONAL.has(name)) throw new ModelFetchError(`${where} on ${source.hub} has no ${name} in / or /${source.subdir}`);
  }
  const total = files.reduce((n, f) => n + f.size, 0);
  events.say(`${where}: ${files.map((f) => `${f.name} ${formatBytes(f.size)}`).join(', ')}; ${formatBytes(total)} in all`);
  for (const f of files) {
    const target = path.join(dir, f.name);
    if (fs.existsSync(target)) {
      if (await verifyFile(target, f)) {
        events.say(`${f.name}: already here, verified`);
        continue;
      }
      // Not the hub's: gone before the download, so no unverified file sits under the name meanwhile.
      fs.rmSync(target);
    }
    const from = sizeOf(`${target}.part`) ?? 0;
    const url = fileUrl(source, f.path);
    const resume = from > 0 && from <= f.size ? `, resuming at ${formatBytes(from)}` : '';
    events.say(`${f.name}: ${formatBytes(f.size)} from ${url}${resume}`);
    await downloadFile(client, url, target, f, events);
    events.say(`${f.name}: ${f.sha256 ? 'sha256' : f.gitOid ? 'git blob id' : 'size (the hub lists no hash)'} verified`);
  }
  const manifest: Manifest = { hub: source.hub, repo: source.repo, revision: source.revision, fetchedAt: new Date().toISOString(), files };
  const tmp = path.join(dir, `${MANIFEST}.tmp`);
  fs.writeFileSync(tmp, `${JSON.stringify(manifest, null, 2)}\n`);
  fs.renameSync(tmp, path.join(dir, MANIFEST));
  return manifest;
}
