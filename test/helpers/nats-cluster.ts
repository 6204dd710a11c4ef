/**
 * A real three-server NATS cluster with JetStream on loopback, for the cluster tests: Debian's
 * `nats-server` (installed by .ci/run when missing), each server with its own store directory
 * and routes to the other two. `kill(i)` is a `kill -9`; `start(i)` brings the server back on
 * its old ports and store.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

export const NATS_SERVER = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'].find((p) => fs.existsSync(p)) ?? 'nats-server';

export interface NatsCluster {
  /** Client URLs, one per server. */
  urls: string[];
  /** kill -9 server i (0-based). */
  kill(i: number): void;
  /** Starts server i again on its ports and store; resolves once it accepts connections. */
  start(i: number): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function accepting(port: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = net.connect(port, '127.0.0.1');
      c.once('connect', () => {
        c.destroy();
        resolve(true);
      });
      c.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nats-server on port ${port} did not start in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  const probe = spawnSync(NATS_SERVER, ['--version'], { encoding: 'utf8' });
  if (probe.status !== 0) throw new Error(`nats-server is not installed (${NATS_SERVER}): .ci/run installs it with apt-get`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nm-nats-'));
  const ports = await Promise.all(Array.from({ length: size }, async () => ({ client: await freePort(), route: await freePort() })));
  const procs: (ChildProcess | null)[] = ports.map(() => null);
  const conf = (i: number) => {
    const file = path.join(dir, `n${i}.conf`);
    const routes = ports.filter((_, j) => j !== i).map((p) => `nats-route://127.0.0.1:${p.route}`);
    fs.writeFileSync(
      file,
      [
        `server_name: n${i}`,
        `listen: 127.0.0.1:${ports[i].client}`,
        'max_payload: 8MB',
        `jetstream { store_dir: "${path.join(dir, `n${i}`)}", max_memory_store: 64MB, max_file_store: 4GB }`,
        `cluster { name: nm, listen: 127.0.0.1:${ports[i].route}, routes: [${routes.join(', ')}] }`,
      ].join('\n'),
    );
    return file;
  };
  const start = async (i: number) => {
    const p = spawn(NATS_SERVER, ['-c', conf(i)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr?.on('data', (d) => {
      err = (err + d).slice(-4000);
    });
    p.once('exit', (code) => {
      if (procs[i] === p && code !== null && code !== 0) console.error(`nats-server n${i} exited ${code}: ${err}`);
    });
    procs[i] = p;
    await accepting(ports[i].client, 10_000);
  };
  await Promise.all(ports.map((_, i) => start(i)));
  const urls = ports.map((p) => `nats://127.0.0.1:${p.client}`);
  await jetStreamReady(urls, 30_000);
  return {
    urls,
    kill(i) {
      procs[i]?.kill('SIGKILL');
      procs[i] = null;
    },
    start,
    async stop() {
      const running = procs.splice(0, procs.length, ...procs.map(() => null));
      await Promise.all(
        running.map(
          (p) =>
            p &&
            new Promise<void>((resolve) => {
              // A JetStream server's orderly stop may take a while on a busy box: 5 s, then kill -9.
              const hard = setTimeout(() => p.kill('SIGKILL'), 5000);
              p.once('exit', () => {
                clearTimeout(hard);
                resolve();
              });
              p.kill('SIGTERM');
            }),
        ),
      );
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves once the servers have elected a JetStream meta leader (its API answers). */
export async function jetStreamReady(urls: string[], ms: number): Promise<void> {
  const nc = await connect({ servers: urls });
  const deadline = Date.now() + ms;
  try {
    for (;;) {
      try {
        await jetstreamManager(nc, { timeout: 1000 });
        return;
      } catch (e) {
        if (Date.now() > deadline) throw new Error(`JetStream did not come up in ${ms} ms: ${e}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  } finally {
    await nc.close();
  }
}

/** Resolves once `f` holds, asking every 50 ms; throws naming `what` after `ms`. */
export async function eventually(f: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms / 1000} s: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
