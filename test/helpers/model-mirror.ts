/**
 * A loopback stand-in for the Hugging Face hub: the tree API (`/api/models/{repo}/tree/{rev}/{folder}`)
 * listing the files of a model directory with their sizes, LFS SHA-256 and git blob ids, and
 * `/{repo}/resolve/{rev}/{path}`, which redirects (as the hub does, to its CDN) to `/cdn/{path}`,
 * which serves the bytes with Range support. A test can make a file's next answers misbehave
 * (`faults`) and reads every request in `log`.
 *
 *   const hub = await startModelMirror('test/bge-m3', { 'onnx/model.onnx': bytes, 'tokenizer.json': bytes, … });
 *   hub.faults.set('onnx/model.onnx_data', ['cut']);   // the next answer breaks off halfway
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How one answer for a file misbehaves: `cut` sends half the body and drops the connection; `corrupt` flips a byte; `ignore-range` answers 200 with the whole file. */
export type Fault = 'cut' | 'corrupt' | 'ignore-range';

export interface MirrorHit {
  path: string;
  range: string | null;
  status: number;
}

export interface ModelMirror {
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** Per repository path, the faults its next answers take, first first. */
  faults: Map<string, Fault[]>;
  log: MirrorHit[];
  close(): Promise<void>;
}

/** Files kept in git (not LFS) are listed by their git blob id, as the hub lists small files. */
const IN_GIT = (path: string) => path.endsWith('_config.json');

export async function startModelMirror(repo: string, files: Record<string, Buffer>): Promise<ModelMirror> {
  const faults = new Map<string, Fault[]>();
  const log: MirrorHit[] = [];
  const listing = (folder: string) => {
    const entries: object[] = [];
    const dirs = new Set<string>();
    for (const [path, body] of Object.entries(files)) {
      const parent = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
      if (parent !== folder) {
        if (folder === '' && parent !== '') dirs.add(parent.split('/')[0]);
        continue;
      }
      const gitOid = createHash('sha1').update(`blob ${body.length}\0`).update(body).digest('hex');
      if (IN_GIT(path)) entries.push({ type: 'file', path, size: body.length, oid: gitOid });
      else
        entries.push({
          type: 'file',
          path,
          size: body.length,
          oid: createHash('sha1').update('pointer').update(path).digest('hex'),
          lfs: { oid: createHash('sha256').update(body).digest('hex'), size: body.length, pointerSize: 134 },
        });
    }
    for (const d of dirs) entries.push({ type: 'directory', path: d, size: 0, oid: '0'.repeat(40) });
    return entries;
  };
  const tree = `/api/models/${repo}/tree/main`;
  const resolve = `/${repo}/resolve/main/`;

  const server: Server = createServer((req, res) => {
    const url = decodeURIComponent((req.url ?? '/').split('?')[0]);
    const range = typeof req.headers.range === 'string' ? req.headers.range : null;
    const hit: MirrorHit = { path: url, range, status: 0 };
    log.push(hit);
    const send = (status: number, headers: Record<string, string>, body: Buffer | string = '') => {
      hit.status = status;
      res.writeHead(status, headers).end(body);
    };
    if (url === tree || url.startsWith(`${tree}/`)) {
      const folder = url.slice(tree.length + 1);
      if (folder !== '' && !Object.keys(files).some((p) => p.startsWith(`${folder}/`))) return send(404, {}, 'no such folder');
      return send(200, { 'content-type': 'application/json' }, JSON.stringify(listing(folder)));
    }
    if (url.startsWith(resolve)) return send(302, { location: `/cdn/${url.slice(resolve.length)}` });
    const path = url.slice('/cdn/'.length);
    const file = url.startsWith('/cdn/') ? files[path] : undefined;
    if (!file) return send(404, {}, 'not found');
    const fault = faults.get(path)?.shift();
    let body = file;
    if (fault === 'corrupt') {
      body = Buffer.from(file);
      body[body.length >> 1] ^= 0xff;
    }
    const m = /^bytes=(\d+)-$/.exec(range ?? '');
    if (m && fault !== 'ignore-range') {
      const start = Number(m[1]);
      if (start >= body.length) return send(416, { 'content-range': `bytes */${body.length}` });
      hit.status = 206;
      res.writeHead(206, { 'content-length': String(body.length - start), 'content-range': `bytes ${start}-${body.length - 1}/${body.length}` });
      body = body.subarray(start);
    } else {
      hit.status = 200;
      res.writeHead(200, { 'content-length': String(body.length), 'content-type': 'application/octet-stream' });
    }
    if (fault !== 'cut') return void res.end(body);
    // Half the body, then the connection drops (a lost network, not a clean end).
    res.write(body.subarray(0, body.length >> 1), () => setTimeout(() => res.destroy(), 50));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    faults,
    log,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
