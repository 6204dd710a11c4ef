/**
 * Start-up and memory of a served corpus: spawns `newsmatch serve` (the built CLI) over the
 * cached benchmark corpus (bench/big-corpus.ts, BENCH_CHUNKS, default 1,000,000), measures the
 * time until the first vector query answers, and reads the server's private and total RSS
 * from /proc: vectors should live in the page cache (shared, file-backed), not in the heap.
 * Baseline: the same for a server over an empty data directory.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KeyStore } from '../src/platform/index.js';
import { Store } from '../src/store/index.js';
import { benchChunks, benchDataDir, ensureBigCorpus } from './big-corpus.js';
import { printTable } from './corpus.js';

const CLI = path.resolve('dist/src/cli/index.js');
if (!fs.existsSync(CLI)) throw new Error('run `npm run build` first: this measures the built server');

function key(dataDir: string): string {
  fs.mkdirSync(dataDir, { recursive: true });
  const store = new Store(path.join(dataDir, 'lmdb'));
  const secret = new KeyStore(store).create({ scheme: 'bearer', name: 'bench-startup' }).secret;
  void store.close();
  return secret;
}

/**
 * MB from /proc/PID/smaps_rollup. `private` is anonymous memory (heap, stacks, malloc): what
 * the process owns. File-backed pages of the memory-mapped segments, index file and LMDB are
 * page cache the kernel can drop and share; smaps counts them as Private_Clean when no other
 * process maps them, so they are reported apart.
 */
function memory(pid: number): { rss: number; private: number } {
  const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
  return { rss: kb('Rss') / 1024, private: kb('Anonymous') / 1024 };
}

async function measure(dataDir: string, port: number): Promise<{ startMs: number; rss: number; priv: number }> {
  const secret = key(dataDir);
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, 'serve', '--port', String(port)], {
    env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const body = JSON.stringify({ vector: Array.from({ length: 1024 }, (_, i) => Math.sin(i)), order: 'relevance', limit: 50 });
  let startMs = -1;
  while (startMs < 0 && performance.now() - t0 < 120_000) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/v1/match`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body,
      });
      if (r.status === 200) startMs = performance.now() - t0;
    } catch {
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  // A few more queries of both kinds, then read memory.
  for (let i = 0; i < 20; i++) {
    const b = JSON.stringify({ vector: Array.from({ length: 1024 }, (_, j) => Math.sin(i * 7 + j)), min_score: 0.6, limit: 50 });
    await fetch(`http://127.0.0.1:${port}/v1/match`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: b,
    });
  }
  const m = memory(child.pid!);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return { startMs, rss: m.rss, priv: m.private };
}

const info = await ensureBigCorpus();
const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-empty-'));
const base = await measure(empty, 18_081);
const big = await measure(benchDataDir(benchChunks()), 18_082);
fs.rmSync(empty, { recursive: true, force: true });
printTable(`restart to first relevance answer (corpus: ${info.chunks} chunks)`, [
  { name: 'empty data directory (baseline)', ms: base.startMs, note: `RSS ${base.rss.toFixed(0)} MB, anon ${base.priv.toFixed(0)} MB` },
  { name: `${info.chunks} chunks`, ms: big.startMs, note: `RSS ${big.rss.toFixed(0)} MB, anon ${big.priv.toFixed(0)} MB` },
]);
console.log(`startup: start_ms=${big.startMs.toFixed(0)} private_rss_mb=${big.priv.toFixed(0)} rss_mb=${big.rss.toFixed(0)}`);
