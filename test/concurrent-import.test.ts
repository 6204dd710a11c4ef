/**
 * `newsmatch import` beside a running server: the server owns the search engine (a lock on
 * its directory), so the import writes records only and the server indexes them on its next
 * request. `keys create` needs no engine and works beside it too.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/http/app.js';
import { openService } from '../src/service.js';
import { generateCorpus, writeCorpusJsonl } from './helpers/corpus.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-concurrent-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const CLI = ['--import', 'tsx', path.resolve('src/cli/index.ts')];

describe('import while a server runs', () => {
  it('writes records only, and the server serves them on its next request', async () => {
    const dataDir = path.join(root, 'data');
    const service = await openService(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }));
    const app = await buildApp(service);
    try {
      const key = spawnSync(process.execPath, [...CLI, 'keys', 'create', '--scheme', 'bearer'], {
        env: { ...process.env, DATA_DIR: dataDir },
        encoding: 'utf8',
      });
      expect(key.status, key.stderr).toBe(0);
      const secret = key.stdout.trim().split('\n').pop()!;

      const corpus = generateCorpus({ seed: 5, articles: 60 });
      const file = path.join(root, 'c.jsonl');
      writeCorpusJsonl(corpus, file);
      const r = spawnSync(process.execPath, [...CLI, 'import', file], { env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' }, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/running server owns the search engine/);
      expect(r.stdout).toMatch(new RegExp(`${corpus.revisions.length} new revisions`));

      // A vector query must see the new chunks: they reach the engine from LMDB on this request.
      const q = Array.from(corpus.revisions[0].chunks[0].raw);
      const res = await app.inject({
        method: 'POST',
        url: '/v1/match',
        headers: { authorization: `Bearer ${secret}` },
        payload: { vector: q, order: 'relevance', limit: 1, include_edits: true },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().items[0].source_url).toBe(corpus.revisions[0].url);
      expect(res.json().items[0].score).toBeGreaterThan(0.999);
    } finally {
      await app.close();
      await service.close();
    }
  });
});
