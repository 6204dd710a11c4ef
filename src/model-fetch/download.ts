/**
 * One file's download: into `<target>.part`, resumed from what an earlier try left there (a
 * Range request), hashed as it arrives, and renamed to `<target>` only once its size and hash
 * are the hub's. So a file under its own name is always a verified one, and an interrupted
 * download leaves only a `.part`.
 */
import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { HttpClient } from '../net/index.js';
import { ModelFetchError, type HubFile } from './hub.js';

/** What a download tells the one who shows it. */
export interface DownloadEvents {
  /** A line of what happens. */
  say(line: string): void;
  /** The download of `name` begins with `from` of its `size` bytes on disk already (a resumed `.part`). */
  start?(name: string, size: number, from: number): void;
  /** `bytes` of the file are on disk now. */
  progress?(name: string, bytes: number): void;
  /** The download of `name` ended, well or not. */
  stop?(name: string): void;
}

/** The hashes the hub lists a file by, computed over the bytes as they come. */
class Sums {
  #sha256!: Hash;
  #git!: Hash;
  constructor(readonly file: HubFile) {
    this.reset();
  }
  reset(): void {
    this.#sha256 = createHash('sha256');
    // git's blob id hashes a header before the bytes.
    this.#git = createHash('sha1').update(`blob ${this.file.size}\0`);
  }
  update(chunk: Buffer): void {
    this.#sha256.update(chunk);
    this.#git.update(chunk);
  }
  /** Null when the file is what the hub lists; else why not. */
  mismatch(): string | null {
    const { sha256, gitOid } = this.file;
    const sum = this.#sha256.digest('hex');
    if (sha256 !== null && sum !== sha256) return `sha256 ${sum} differs from the hub's ${sha256}`;
    const oid = this.#git.digest('hex');
    if (gitOid !== null && oid !== gitOid) return `git blob id ${oid} differs from the hub's ${gitOid}`;
    return null;
  }
}

/** The size of `file`, or null when there is none. */
export function sizeOf(file: string): number | null {
  try {
    return fs.statSync(file).size;
  } catch {
    return null;
  }
}

/** Whether `target` is the hub's file: its size, then its hash. */
export async function verifyFile(target: string, file: HubFile): Promise<boolean> {
  if (sizeOf(target) !== file.size) return false;
  const sums = new Sums(file);
  for await (const chunk of fs.createReadStream(target)) sums.update(chunk as Buffer);
  return sums.mismatch() === null;
}

/**
 * Downloads `url` to `target`, held to `file`'s size and verified by its hash. A `.part` left
 * by an earlier try is continued with a Range request (started over when the server ignores
 * the range); a wrong size or hash deletes it and throws. Failures of the request are
 * net's FetchError (the `.part` kept, to resume); the rest ModelFetchError.
 */
export async function downloadFile(client: HttpClient, url: string, target: string, file: HubFile, events: DownloadEvents): Promise<void> {
  const part = `${target}.part`;
  let from = sizeOf(part) ?? 0;
  if (from > file.size) {
    fs.rmSync(part);
    from = 0;
  }
  const sums = new Sums(file);
  // The hash covers the whole file: the part already here first.
  if (from > 0) for await (const chunk of fs.createReadStream(part)) sums.update(chunk as Buffer);
  let have = from;
  events.start?.(file.name, file.size, from);
  try {
    if (from < file.size) {
      await client.stream(url, { from: from || undefined, maxBytes: file.size }, async (head, body) => {
        if (from > 0 && head.status === 200) {
          events.say(`${file.name}: the server ignored the range: starting over`);
          from = have = 0;
          sums.reset();
        } else if (from > 0 && head.range?.start !== from) {
          throw new ModelFetchError(
            `${head.url}: asked for bytes from ${from}, answered ${head.range ? `from ${head.range.start}` : 'without a Content-Range'}`,
          );
        }
        const count = async function* (source: AsyncIterable<Buffer>) {
          for await (const chunk of source) {
            if (have + chunk.length > file.size) throw new ModelFetchError(`${head.url}: more than the ${file.size} bytes the hub lists`);
            sums.update(chunk);
            have += chunk.length;
            events.progress?.(file.name, have);
            yield chunk;
          }
        };
        await pipeline(body, count, fs.createWriteStream(part, { flags: from > 0 ? 'a' : 'w' }));
      });
    }
  } finally {
    events.stop?.(file.name);
  }
  // A body that ended early (the server closed cleanly) is a part to resume, not a file.
  if (have !== file.size) throw new ModelFetchError(`${file.name}: got ${have} of ${file.size} bytes; run again to resume`);
  const why = sums.mismatch();
  if (why) {
    fs.rmSync(part, { force: true });
    throw new ModelFetchError(`${file.name}: ${why}; the download is deleted`);
  }
  fs.renameSync(part, target);
}
