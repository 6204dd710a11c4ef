/**
 * `newsmatch quickstart` end to end against a loopback mirror: a hub-like tree API serving a
 * tiny bge-m3 stand-in with its hashes (helpers/model-mirror.ts), and a feed site whose
 * outlets replace the shipped list (QUICKSTART_OUTLETS). The command fetches the model, adds
 * the outlets, serves, and answers `text` queries with the polled articles; a second run asks
 * nothing of the hub and leaves the outlets as they are. Then the download itself, in process:
 * a broken-off download leaves only a `.part` and is resumed with a Range request; a wrong hash
 * is refused and its file deleted; a server that ignores the range is started over; a private
 * hub is refused without MODEL_HUB_ALLOW_PRIVATE.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkModelDir } from '../src/embed/index.js';
import { completeModel, fetchModel, ModelFetchError, type DownloadEvents, type HubSource } from '../src/model-fetch/index.js';
import { FetchError, HttpClient, modelHub } from '../src/net/index.js';
import { childEnv, cli, ROOT } from './helpers/cli.js';
import { RSS, rss2, startFeedServer, type FeedEntry, type FeedServer } from './helpers/feed-server.js';
import { startModelMirror, type ModelMirror } from './helpers/model-mirror.js';
import { writeTinyModel } from './helpers/tiny-model.js';

const REPO = 'test/bge-m3';
const root = mkdtempSync(join(tmpdir(), 'quickstart-'));
const source = writeTinyModel(join(root, 'source-model'), { seed: 11, externalData: true });
const bytes = (name: string) => readFileSync(join(source, name));
/** As the hub lays out BAAI/bge-m3: the export under onnx/, a tokenizer at the root too (the subfolder's wins). */
const FILES: Record<string, Buffer> = {
  'onnx/model.onnx': bytes('model.onnx'),
  'onnx/model.onnx_data': bytes('model.onnx_data'),
  'onnx/tokenizer.json': bytes('tokenizer.json'),
  'onnx/tokenizer_config.json': bytes('tokenizer_config.json'),
  'tokenizer.json': Buffer.from('{"not": "the tokenizer the onnx folder has"}'),
  'README.md': Buffer.from('# test/bge-m3\n'),
};
const NOW = Math.floor(Date.now() / 1000);

let hub: ModelMirror;
let site: FeedServer;

beforeAll(async () => {
  hub = await startModelMirror(REPO, FILES);
  site = await startFeedServer();
});

afterAll(async () => {
  await hub?.close();
  await site?.close();
  rmSync(root, { recursive: true, force: true });
});

/** The model directory holds exactly the source model's files, byte for byte. */
function expectSameModel(dir: string): void {
  for (const name of ['model.onnx', 'model.onnx_data', 'tokenizer.json', 'tokenizer_config.json']) {
    expect(readFileSync(join(dir, name)).equals(bytes(name)), name).toBe(true);
  }
}

/** `newsmatch quickstart` as a child; resolves once it is listening (or has exited). */
async function startQuickstart(env: Record<string, string>) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'quickstart'], {
    cwd: ROOT,
    env: childEnv(env),
  });
  const run = { child, stdout: '', stderr: '', exit: new Promise<number | null>((r) => child.once('exit', r)) };
  child.stdout.on('data', (d) => (run.stdout += d));
  child.stderr.on('data', (d) => (run.stderr += d));
  await vi.waitFor(
    () => {
      if (child.exitCode !== null) return;
      if (!/listening on http:\/\/\S+/.test(run.stdout)) throw new Error(`not listening yet:\n${run.stdout}\n${run.stderr}`);
    },
    { timeout: 50_000, interval: 50 },
  );
  return run;
}

describe('newsmatch quickstart', () => {
  const dataDir = join(root, 'data');
  const listFile = join(root, 'outlets.json');
  const wires: { name: string; items: FeedEntry[] }[] = [
    {
      name: 'Harbour Wire',
      items: [
        { title: 'rail workers strike over pay talks', link: '', description: 'union and government talks failed on monday', date: NOW - 3600 },
        { title: 'storm and flood hit farmers in the north', link: '', description: 'heavy rain and snow this week', date: NOW - 7200 },
      ],
    },
    {
      name: 'Market Desk',
      items: [
        { title: 'bank rates rose after inflation report', link: '', description: 'the central bank said prices rose', date: NOW - 1800 },
        { title: 'football team won the league cup', link: '', description: 'the coach praised the players', date: NOW - 900 },
      ],
    },
  ];
  const env = () => ({
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'warn',
    MODEL_HUB_URL: hub.base,
    MODEL_HUB_REPO: REPO,
    // The mirror and the feeds are on loopback: the operator's allowances for both.
    MODEL_HUB_ALLOW_PRIVATE: 'on',
    INGEST_ALLOW_PRIVATE: 'on',
    QUICKSTART_OUTLETS: listFile,
    EMBED_DEVICE: 'cpu',
    EMBED_THREADS: '1',
  });

  beforeAll(() => {
    const outlets = wires.map((w, i) => {
      w.items.forEach((it, j) => (it.link = `${site.base}/w${i}/story-${j}`));
      site.set(`/w${i}/feed.xml`, { body: rss2(w.name, w.items), type: RSS });
      return { name: w.name, homepage: `${site.base}/w${i}/`, feeds: [`${site.base}/w${i}/feed.xml`], language: 'en', country: 'GB' };
    });
    writeFileSync(listFile, JSON.stringify({ interval: '10m', outlets }));
  });

  it('fetches the model, adds the outlets, serves text queries over what it polls; SIGTERM stops it', async () => {
    const run = await startQuickstart(env());
    try {
      expect(run.child.exitCode, run.stderr).toBeNull();
      const modelDir = join(dataDir, 'model');
      expect(run.stdout).toContain(`1/3 model: bge-m3 in ${modelDir} (DATA_DIR/model`);
      expect(run.stdout).toMatch(new RegExp(`model\\.onnx_data: [\\d.]+ MB from ${hub.base}/${REPO}/resolve/main/onnx/model\\.onnx_data`));
      expect(run.stdout).toContain('model.onnx_data: sha256 verified');
      expect(run.stdout).toContain('tokenizer_config.json: git blob id verified');
      expect(run.stdout).toContain(`2/3 outlets from ${listFile}: 2 added, 0 already there`);
      expectSameModel(modelDir);
      expect(completeModel(modelDir)?.repo).toBe(REPO);
      expect(readdirSync(modelDir).filter((f) => f.endsWith('.part'))).toEqual([]);

      const address = /listening on (http:\/\/\S+?);/.exec(run.stdout)![1];
      const key = /shown this once: (nmb_\S+)/.exec(run.stdout)![1];
      const target = wires[1].items[0];
      const body = await vi.waitFor(
        async () => {
          const res = await fetch(`${address}/v1/match`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ text: target.title, order: 'relevance', limit: 10, min_score: -1 }),
          });
          const json = (await res.json()) as any;
          expect(res.status, JSON.stringify(json)).toBe(200);
          expect(json.items, 'the feeds are not polled yet').toHaveLength(4);
          return json;
        },
        { timeout: 40_000, interval: 250 },
      );
      expect(body.items[0].source_url).toBe(target.link);
      expect(body.items[0].title).toBe(target.title);
      expect(new Set(body.items.map((it: any) => it.source_name))).toEqual(new Set(wires.map((w) => w.name)));
    } finally {
      run.child.kill('SIGTERM');
    }
    expect(await run.exit, run.stderr).toBe(0);
  });

  it('a second run asks nothing of the hub and leaves the outlets as the operator left them', async () => {
    const disabled = cli(['sources', 'disable', wires[0].name], { DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
    expect(disabled.status, disabled.stderr).toBe(0);
    const asked = hub.log.length;
    const run = await startQuickstart(env());
    try {
      expect(run.child.exitCode, run.stderr).toBeNull();
      expect(run.stdout).toMatch(/complete: test\/bge-m3@main, fetched .* nothing to download/);
      expect(run.stdout).toContain('0 added, 2 already there (left as they are)');
      expect(run.stdout).toContain('key: the operator has a Bearer key already');
      expect(hub.log.slice(asked)).toEqual([]);
    } finally {
      run.child.kill('SIGTERM');
    }
    expect(await run.exit, run.stderr).toBe(0);
    const list = cli(['sources', 'list'], { DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
    expect(list.stdout).toContain(`${wires[0].name}  disabled`);
    expect(list.stdout).toContain(`${wires[1].name}  enabled`);
  });
});

describe('the model download', () => {
  const src: HubSource = { hub: '', repo: REPO, revision: 'main', subdir: 'onnx' };
  const lines: string[] = [];
  const events: DownloadEvents = { say: (l) => void lines.push(l) };
  let client: HttpClient;
  let n = 0;
  const freshDir = () => join(root, `fetch-${n++}`);
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => expect.unreachable('the fetch succeeded'),
      (e: Error) => e,
    );
  const hits = (path: string) => hub.log.filter((h) => h.path === `/cdn/${path}`);

  beforeAll(() => {
    src.hub = hub.base;
    client = new HttpClient(modelHub({ hubUrl: hub.base, allowPrivateHub: true, timeoutMs: 5000 }));
  });
  afterAll(() => client?.close());

  it('a download that breaks off leaves only a .part; the next run resumes it with a Range and verifies the whole', async () => {
    const dir = freshDir();
    const data = FILES['onnx/model.onnx_data'];
    hub.faults.set('onnx/model.onnx_data', ['cut']);
    const e = await failure(fetchModel(dir, src, client, events));
    expect(e).toBeInstanceOf(FetchError);
    expect(e.message).toMatch(/model\.onnx_data: the download broke off/);
    // Nothing passes for complete: no file under its name, no manifest, text mode's check fails.
    const part = statSync(join(dir, 'model.onnx_data.part')).size;
    expect(part).toBeGreaterThan(0);
    expect(part).toBeLessThan(data.length);
    expect(existsSync(join(dir, 'model.onnx_data'))).toBe(false);
    expect(completeModel(dir)).toBeNull();
    expect(() => checkModelDir(dir)).toThrow(/lacks tokenizer\.json, tokenizer_config\.json/);

    const before = hits('onnx/model.onnx_data').length;
    await fetchModel(dir, src, client, events);
    const resumed = hits('onnx/model.onnx_data').slice(before);
    expect(resumed).toEqual([{ path: '/cdn/onnx/model.onnx_data', range: `bytes=${part}-`, status: 206 }]);
    expect(lines).toContain(
      `model.onnx_data: ${(data.length / 1e6).toFixed(2)} MB from ${hub.base}/${REPO}/resolve/main/onnx/model.onnx_data, resuming at ${(part / 1e6).toFixed(2)} MB`,
    );
    // model.onnx was verified and kept, not fetched again.
    expect(lines).toContain('model.onnx: already here, verified');
    expectSameModel(dir);
    expect(completeModel(dir)?.files.map((f) => f.name)).toEqual(['model.onnx', 'model.onnx_data', 'tokenizer.json', 'tokenizer_config.json']);
  });

  it.each([
    ['onnx/tokenizer.json', 'tokenizer.json', /tokenizer\.json: sha256 [0-9a-f]{64} differs from the hub's [0-9a-f]{64}; the download is deleted/],
    ['onnx/tokenizer_config.json', 'tokenizer_config.json', /tokenizer_config\.json: git blob id [0-9a-f]{40} differs from the hub's [0-9a-f]{40}/],
  ])("a file whose bytes are not the hub's (%s) is refused and deleted", async (path, name, why) => {
    const dir = freshDir();
    hub.faults.set(path, ['corrupt']);
    const e = await failure(fetchModel(dir, src, client, events));
    expect(e).toBeInstanceOf(ModelFetchError);
    expect(e.message).toMatch(why);
    expect(readdirSync(dir).filter((f) => f.startsWith(name))).toEqual([]);
    expect(completeModel(dir)).toBeNull();
    // The next run fetches it again, whole.
    await fetchModel(dir, src, client, events);
    expectSameModel(dir);
  });

  it('a server that ignores the range is read from the start, and the file still verifies', async () => {
    const dir = freshDir();
    hub.faults.set('onnx/model.onnx_data', ['cut', 'ignore-range']);
    await failure(fetchModel(dir, src, client, events));
    await fetchModel(dir, src, client, events);
    expect(lines).toContain('model.onnx_data: the server ignored the range: starting over');
    expect(hits('onnx/model.onnx_data').at(-1)).toMatchObject({ status: 200 });
    expectSameModel(dir);
  });

  it('a hub on a private address is refused unless MODEL_HUB_ALLOW_PRIVATE names it', async () => {
    const strict = new HttpClient(modelHub({ hubUrl: hub.base, allowPrivateHub: false, timeoutMs: 5000 }));
    try {
      const asked = hub.log.length;
      const e = await failure(fetchModel(freshDir(), src, strict, events));
      expect(e).toBeInstanceOf(FetchError);
      expect(e.message).toMatch(/blocked: the host is a private address or resolves to one \(MODEL_HUB_ALLOW_PRIVATE is off\)/);
      expect(hub.log.length).toBe(asked);
    } finally {
      await strict.close();
    }
  });
});
