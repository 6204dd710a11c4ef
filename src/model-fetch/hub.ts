/**
 * The hub's side: where a repository's files are listed and served. A Hugging Face hub (or a
 * mirror of its API) lists a folder at `/api/models/{repo}/tree/{revision}/{folder}`:
 *
 *   [{ "type": "file", "path": "onnx/model.onnx_data", "size": 2266820608, "oid": "<git sha1 of the pointer>",
 *      "lfs": { "oid": "<sha256 of the file>", "size": 2266820608, "pointerSize": 135 } },
 *    { "type": "file", "path": "onnx/tokenizer_config.json", "size": 1173, "oid": "<git blob sha1 of the file>" },
 *    { "type": "directory", "path": "onnx", ... }]
 *
 * and serves a file at `/{repo}/resolve/{revision}/{path}`, usually by a redirect to its CDN.
 */
import type { HttpClient } from '../net/index.js';

/** Where the model comes from (MODEL_HUB_URL, MODEL_HUB_REPO, MODEL_HUB_REVISION, MODEL_HUB_SUBDIR). */
export interface HubSource {
  hub: string;
  repo: string;
  revision: string;
  /** The folder holding model.onnx; '' for the repository's root. */
  subdir: string;
}

/** A file as the hub lists it, with what it can be verified by. */
export interface HubFile {
  /** The file's name in the model directory (its base name). */
  name: string;
  /** Its path in the repository. */
  path: string;
  size: number;
  /** An LFS file's SHA-256 (hex); null for a file kept in git itself. */
  sha256: string | null;
  /** A file kept in git: its blob id (SHA-1 of `blob <size>\0` and the bytes); null for an LFS file. */
  gitOid: string | null;
}

/** The model fetch's own failures (the hub's answer is not what a model needs, a hash differs); the requests' are net's FetchError. */
export class ModelFetchError extends Error {
  readonly name = 'ModelFetchError';
}

const segments = (p: string) => p.split('/').map(encodeURIComponent).join('/');
const base = (s: HubSource) => s.hub.replace(/\/+$/, '');

/** The URL a file of the repository is downloaded from. */
export const fileUrl = (s: HubSource, path: string): string => `${base(s)}/${segments(s.repo)}/resolve/${encodeURIComponent(s.revision)}/${segments(path)}`;

/** One entry of a listing, before it is checked. */
type Entry = { type?: unknown; path?: unknown; size?: unknown; oid?: unknown; lfs?: { oid?: unknown; size?: unknown } | null };

const HEX64 = /^[0-9a-f]{64}$/;
const HEX40 = /^[0-9a-f]{40}$/;

/** The files of the repository's root and of `subdir`, by base name; the subfolder's win (the tokenizer may be in either). */
export async function listFiles(client: HttpClient, s: HubSource): Promise<Map<string, HubFile>> {
  const files = new Map<string, HubFile>();
  for (const folder of s.subdir ? ['', s.subdir] : ['']) {
    const url = `${base(s)}/api/models/${segments(s.repo)}/tree/${encodeURIComponent(s.revision)}${folder ? `/${segments(folder)}` : ''}`;
    const page = await client.get(url);
    let entries: unknown;
    try {
      entries = JSON.parse(page.html);
    } catch {
      throw new ModelFetchError(`${url}: the listing is not JSON`);
    }
    if (!Array.isArray(entries)) throw new ModelFetchError(`${url}: the listing is not a JSON array`);
    for (const e of entries as (Entry | null)[]) {
      if (e?.type !== 'file' || typeof e.path !== 'string') continue;
      const lfs = e.lfs && typeof e.lfs === 'object' ? e.lfs : null;
      const size = lfs?.size ?? e.size;
      if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) throw new ModelFetchError(`${url}: ${e.path} has no size`);
      const name = e.path.split('/').pop()!;
      files.set(name, {
        name,
        path: e.path,
        size,
        sha256: typeof lfs?.oid === 'string' && HEX64.test(lfs.oid) ? lfs.oid : null,
        gitOid: !lfs && typeof e.oid === 'string' && HEX40.test(e.oid) ? e.oid : null,
      });
    }
  }
  return files;
}
