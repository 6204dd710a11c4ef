/**
 * Nothing acknowledged is lost: an import killed with SIGKILL mid-write, then re-run, leaves
 * exactly the state of one clean import; a server stopped with SIGTERM saves its index; a
 * server started over a data directory whose index is behind LMDB catches up.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { openService } from '../src/service.js';
import { Store } from '../src/store/index.js';
import { generateCorpus, writeCorpusJsonl } from './helpers/corpus.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-crash-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const CLI = ['--import', 'tsx', path.resolve('src/cli/index.ts')];
const corpus = generateCorpus({ seed: 99, articles: 900 });
const file = path.join(root, 'corpus.jsonl');
writeCorpusJsonl(corpus, file);
const totalChunks = corpus.revisions.reduce((n, r) => n + r.chunks.length, 0);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dataFile = (dataDir: string) => path.join(dataDir, 'lmdb', 'data.mdb');

describe('crash safety', () => {
  it('SIGKILL during an import, then a re-run: every revision exactly once, index complete', async () => {
    const dataDir = path.join(root, 'killed');
    // A small training threshold, so the run builds and files the relevance index as well.
    const env = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', INDEX_MIN_CHUNKS: '1000' };
    const child = spawn(process.execPath, [...CLI, 'import', file], { env, stdio: 'ignore' });
    // Kill once LMDB has taken some batches (or the import has finished: the end state must hold either way).
    const exited = new Promise((r) => child.once('exit', r));
    let done = false;
    void exited.then(() => (done = true));
    while (!done && !fs.existsSync(dataFile(dataDir))) await sleep(20);
    const watcher = new Store(path.join(dataDir, 'lmdb'));
    while (!done && watcher.nextOrd() < 300) await sleep(5);
    child.kill('SIGKILL');
    await watcher.close();
    await exited;

    const rerun = spawnSync(process.execPath, [...CLI, 'import', file], { env, encoding: 'utf8' });
    expect(rerun.status, rerun.stderr).toBe(0);
    const m = /(\d+) new revisions, (\d+) unchanged, 0 rejected/.exec(rerun.stdout);
    expect(m, rerun.stdout).not.toBeNull();
    expect(Number(m![1]) + Number(m![2])).toBe(corpus.revisions.length);
    console.log(`killed import had stored ${m![2]} of ${corpus.revisions.length} revisions; the re-run added ${m![1]}`);

    const service = await openService(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', INDEX_MIN_CHUNKS: '1000' }));
    try {
      await service.maintenance.flush();
      expect(service.store.nextOrd()).toBe(corpus.revisions.length);
      expect(service.store.nextLabel()).toBe(totalChunks);
      const stats = service.engine.stats();
      expect(stats.segmentRows + stats.deltaRows).toBe(totalChunks);
      expect(stats.indexRows).toBe(totalChunks);
      expect(stats.indexPending).toBe(0);
      expect(service.store.timeAll.getKeysCount()).toBe(corpus.revisions.length);
      expect(service.store.timeFirst.getKeysCount()).toBe(corpus.articles.length);
    } finally {
      await service.close();
    }
  });

  it('a relevance index file dropped at open (gone, damaged or of an older version) is trained again at once, with nothing appended', async () => {
    const dataDir = path.join(root, 'no-index');
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', INDEX_MIN_CHUNKS: '1000' });
    let service = await openService(config);
    await service.importFile(file);
    expect(service.engine.stats()).toMatchObject({ indexRows: totalChunks, indexPending: 0 });
    await service.close();
    const index = path.join(dataDir, 'engine', 'index.nmi');
    for (const drop of [() => fs.rmSync(index), () => fs.writeFileSync(index, Buffer.alloc(4096, 7))]) {
      drop();
      service = await openService(config);
      try {
        // Nothing is imported or appended: the open alone must start the rebuild.
        const until = Date.now() + 20_000;
        while (service.engine.stats().indexPending > 0 && Date.now() < until) await sleep(50);
        expect(service.engine.stats()).toMatchObject({ indexRows: totalChunks, indexPending: 0 });
        expect(service.engine.stats().indexLists).toBeGreaterThan(0);
      } finally {
        await service.close();
      }
    }
  }, 60_000);

  it('a server rebuilds a missing search engine from LMDB, and SIGTERM seals it and exits 0', async () => {
    const dataDir = path.join(root, 'behind');
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const service = await openService(config);
    await service.importFile(file);
    await service.close();
    // Drop the search engine (segments + the relevance index): the records alone must be enough.
    fs.rmSync(path.join(dataDir, 'engine'), { recursive: true });

    const child = spawn(process.execPath, [...CLI, 'serve', '--port', '0'], {
      env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    while (!/Server listening/.test(out) && child.exitCode === null) await sleep(50);
    expect(out).toMatch(/search engine in .* is missing: rebuilding from LMDB/);
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(fs.readdirSync(path.join(dataDir, 'engine')).some((f) => f.startsWith('seg-'))).toBe(true);

    const reopened = await openService(config);
    try {
      const stats = reopened.engine.stats();
      expect(stats.segmentRows).toBe(totalChunks);
      expect(stats.deltaRows).toBe(0);
    } finally {
      await reopened.close();
    }
  });
});
