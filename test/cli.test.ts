/**
 * The command line as a user meets it: per-command help, one-line errors with exit 2 for bad
 * arguments and 1 for failures, a closed pipe, the server's start-up line and warnings, and
 * `npm start` stopping on a signal.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settings } from '../src/config.js';
import { childEnv, cli, ROOT } from './helpers/cli.js';
import { makeTempDir } from './helpers/service.js';

const dir = makeTempDir('newsmatch-cli-');
const env = { DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'warn' };

/** One line, prefixed, and no stack frame. */
function expectOneLine(stderr: string, text: string | RegExp): void {
  expect(stderr.trimEnd().split('\n'), stderr).toHaveLength(1);
  expect(stderr.startsWith('newsmatch: '), stderr).toBe(true);
  if (typeof text === 'string') expect(stderr.trimEnd()).toBe(`newsmatch: ${text}`);
  else expect(stderr).toMatch(text);
  expect(stderr).not.toMatch(/\n\s+at /);
}

describe('help', () => {
  it('import --help shows its usage, the settings that matter with defaults, not the whole help', () => {
    const r = cli(['import', '--help'], env);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Usage: newsmatch import <file\.jsonl>\n/);
    expect(r.stdout).toMatch(/^ {2}--data-dir +DATA_DIR +\.\/data +/m);
    expect(r.stdout).toMatch(/^ {2}--bge-m3-model-dir +BGE_M3_MODEL_DIR +unset +/m);
    expect(r.stdout).not.toMatch(/--gateway-host|keys create|--http-max-connections/);
    expect(r.stdout.split('\n').length).toBeLessThan(40);
  });

  it('credits buy --help lists its own options, and help <command> is the same', () => {
    const r = cli(['credits', 'buy', '--help'], env);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: newsmatch credits buy --account ID --credits N\n/);
    expect(r.stdout).toMatch(/^ {2}--credits N +- +How many/m);
    expect(cli(['help', 'credits', 'buy'], env).stdout).toBe(r.stdout);
  });

  it('a family shows each of its commands', () => {
    const r = cli(['keys', '--help'], env);
    expect(r.status).toBe(0);
    for (const sub of ['create', 'list', 'revoke']) expect(r.stdout).toContain(`Usage: newsmatch keys ${sub}`);
    expect(r.stdout).toMatch(/--scheme bearer\|gateway +bearer +The kind of key/);
  });

  it('help keeps the overview and a settings table with every default', () => {
    const r = cli(['help'], env);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: newsmatch <command>/);
    expect(r.stdout).toMatch(/^ {2}credits buy --account ID --credits N +Purchased credits/m);
    expect(r.stdout).toMatch(/^ {2}flag +variable +default +meaning$/m);
    expect(r.stdout).toMatch(/^ {2}--port +PORT +8080 +HTTP port\.$/m);
    expect(r.stdout).toMatch(/^ {2}--log-format +LOG_FORMAT +auto +/m);
    for (const s of Object.values(settings)) expect(r.stdout).toContain(` ${s.env} `);
  });
});

/** `cli` without blocking, so independent cases run side by side. */
function cliAsync(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

describe.concurrent('bad arguments: one line, exit 2', () => {
  const cases: [string[], string][] = [
    [['serve', '--interval', '5m'], 'serve does not take --interval'],
    [['accounts', 'show', '--credits', '5', 'x'], 'accounts show does not take --credits'],
    [['credits', 'buy', '--account', 'a', '--credits', '-5'], '--credits must be a positive whole number, got -5'],
    [['credits', 'grant', '--account', 'a', '--credits', '1.5'], '--credits must be a positive whole number, got 1.5'],
    [['credits', 'buy', '--credits', '5'], 'credits buy needs --account ID'],
    [['usage', '--account', 'a', '--period', 'last-week'], '--period must be all, current, previous or YYYY-MM, got last-week'],
    [['keys', 'create', '--scheme', 'hmac'], '--scheme must be one of bearer, gateway, got hmac'],
    [['frobnicate'], 'unknown command "frobnicate"; "newsmatch help" lists them'],
    [['keys', 'rotate'], 'unknown command "keys rotate"; keys takes create, list, revoke'],
    [['import'], 'import needs <file.jsonl>'],
    [['import', 'a.jsonl', 'b.jsonl'], 'import takes <file.jsonl>; got an extra "b.jsonl"'],
    [['reindex'], 'reindex needs --keyword'],
    [['keys', 'list', '--name'], 'keys list does not take --name'],
    [['sources', 'add', '--name'], '--name needs a value'],
    [['keys', 'list', '--port', 'x'], 'PORT must be an integer, got "x"'],
  ];
  for (const [args, message] of cases) {
    it(`newsmatch ${args.join(' ')}`, async () => {
      const r = await cliAsync(args);
      expect(r.status, r.stderr).toBe(2);
      expectOneLine(r.stderr, message);
      expect(r.stdout).toBe('');
    });
  }
});

describe('failures: one line, exit 1, no stack', () => {
  it('a bad BGE_M3_MODEL_DIR (ModelDirError)', () => {
    const r = cli(['embed', '--bge-m3-model-dir', path.join(dir, 'no-model')], env);
    expect(r.status, r.stderr).toBe(1);
    expectOneLine(r.stderr, /^newsmatch: BGE_M3_MODEL_DIR .*no-model cannot be read \(ENOENT\)/);
  });

  it('a refused platform operation (AppError) and an unknown key', () => {
    const r = cli(['credits', 'buy', '--account', 'acct_nope', '--credits', '5'], env);
    expect(r.status).toBe(1);
    expectOneLine(r.stderr, /^newsmatch: .*acct_nope/);
    const k = cli(['keys', 'revoke', 'key_nope'], env);
    expect(k.status).toBe(1);
    expectOneLine(k.stderr, 'no live key key_nope');
  });
});

describe('a closed pipe (| head -1)', () => {
  /** Runs the command with its stdout's reading end closed before it writes. */
  function closedPipe(args: string[]): Promise<{ status: number | null; signal: string | null; stderr: string }> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], {
      cwd: ROOT,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    return new Promise((resolve) => child.on('close', (status, signal) => resolve({ status, signal, stderr })));
  }

  it('ends help and accounts show quietly with status 0', async () => {
    const created = cli(['accounts', 'create', '--name', 'pipe'], env);
    expect(created.status, created.stderr).toBe(0);
    const id = created.stdout.trim().split('\n').at(-1)!;
    for (const args of [['help'], ['accounts', 'show', id], ['usage', '--account', id]]) {
      const r = await closedPipe(args);
      expect(r.stderr, args.join(' ')).toBe('');
      expect(r.status, args.join(' ')).toBe(0);
    }
  }, 60_000);
});

/** A `serve` child and its log lines (JSON), with the start-up line once it listens. */
interface Server {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  startup: Record<string, unknown> & { listening: string };
  pid: number;
}

function startServer(command: string, args: string[], extraEnv: Record<string, string>, cwd = ROOT): Promise<Server> {
  const child = spawn(command, args, {
    cwd,
    env: childEnv({ ...env, LOG_LEVEL: 'info', LOG_FORMAT: 'json', PORT: '0', ...extraEnv }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => {
    err += d;
  });
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${err}${out}`)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const parts = out.split('\n');
      out = parts.pop()!;
      for (const p of parts) {
        if (!p.startsWith('{')) continue;
        const line = JSON.parse(p) as Record<string, unknown>;
        lines.push(line);
        const startup = line.startup as Server['startup'] | undefined;
        if (startup) resolve({ child, lines, startup, pid: line.pid as number });
      }
    });
  });
}

const exited = (child: ChildProcess): Promise<number | null> =>
  child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((r) => child.once('exit', (code) => r(code)));

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const portFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });

describe('serve', () => {
  let site: http.Server;
  let server: Server;
  let secret: string;

  beforeAll(async () => {
    // An upstream that fails: every marketplace scrape is a 502 scrape_failed.
    site = http.createServer((_req, res) => res.writeHead(500, { 'content-type': 'text/html' }).end('<html>down</html>'));
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    const key = cli(['keys', 'create', '--name', 'cli-test'], env);
    expect(key.status, key.stderr).toBe(0);
    secret = key.stdout.trim().split('\n').at(-1)!;
    server = await startServer(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'serve'], {
      MARKETPLACE_BASE_URL: `http://127.0.0.1:${(site.address() as AddressInfo).port}`,
    });
  }, 60_000);

  afterAll(async () => {
    server?.child.kill('SIGTERM');
    if (server) await exited(server.child);
    await new Promise((r) => site?.close(r));
  });

  it('logs one start-up line with the data dir, its size, counts, text mode, the gateway door and the address', () => {
    const s = server.startup;
    expect(s.dataDir).toBe(env.DATA_DIR);
    expect(s.storeBytes).toBeGreaterThan(0);
    expect(s).toMatchObject({ chunks: 0, revisions: 0, textMode: 'off', gatewayDoor: 'closed' });
    expect(s.listening).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('logs an upstream 502 as a warning with its code and detail, without a stack', async () => {
    const res = await fetch(`${server.startup.listening}/v1/search?engine=marketplace&q=charger`, { headers: { authorization: `Bearer ${secret}` } });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: string }).error).toBe('scrape_failed');
    // The log line follows the response by a moment.
    for (let i = 0; i < 50 && !server.lines.some((l) => l.error === 'scrape_failed'); i++) await new Promise((r) => setTimeout(r, 100));
    const line = server.lines.find((l) => l.error === 'scrape_failed');
    expect(line, JSON.stringify(server.lines)).toMatchObject({ level: 40, msg: 'upstream failed' });
    expect(typeof line!.detail).toBe('string');
    expect(JSON.stringify(server.lines)).not.toMatch(/"stack"|"err":/);
    expect(JSON.stringify(server.lines)).not.toContain(secret);
  });
});

describe('npm start', () => {
  // The start script as shipped, run by npm, over a one-line dist/ that loads the source with
  // tsx: the test needs no build.
  const app = makeTempDir('newsmatch-npm-start-');
  beforeAll(() => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'npm-start-test', private: true, scripts: { start: pkg.scripts.start } }));
    fs.mkdirSync(path.join(app, 'dist/src/cli'), { recursive: true });
    const tsx = JSON.stringify(path.join(ROOT, 'node_modules/tsx/dist/esm/api/index.mjs'));
    const entry = JSON.stringify(path.join(ROOT, 'src/cli/index.ts'));
    fs.writeFileSync(path.join(app, 'dist/src/cli/index.js'), `const { register } = await import(${tsx});\nregister();\nawait import(${entry});\n`);
    fs.writeFileSync(path.join(app, 'dist/package.json'), '{"type":"module"}');
  });

  for (const target of ['npm', 'the server npm started'] as const) {
    it(`stops when ${target} gets SIGTERM, freeing its port`, async () => {
      const s = await startServer('npm', ['start', '--silent'], { npm_config_update_notifier: 'false', DATA_DIR: path.join(app, 'data') }, app);
      const port = Number(new URL(s.startup.listening).port);
      expect(alive(s.pid)).toBe(true);
      // With `exec`, the process npm spawned is the server itself.
      process.kill(target === 'npm' ? s.child.pid! : s.pid, 'SIGTERM');
      await exited(s.child);
      for (let i = 0; i < 50 && alive(s.pid); i++) await new Promise((r) => setTimeout(r, 100));
      expect(alive(s.pid)).toBe(false);
      expect(await portFree(port)).toBe(true);
    }, 60_000);
  }
});

describe('npm configuration', () => {
  const npm = (args: string[], cwd: string) =>
    spawnSync('npm', args, { cwd, env: childEnv({ npm_config_update_notifier: 'false' }), encoding: 'utf8', timeout: 60_000 });

  it('has no unknown project config', () => {
    const r = npm(['config', 'list'], ROOT);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/Unknown (project|env|user) config/);
  });

  it("never runs onnxruntime-node's install script, which would fetch CUDA on linux/x64", () => {
    // A registry install of onnxruntime-node whose postinstall leaves a mark, under this
    // package.json's allowScripts; `npm rebuild` runs install scripts through the same gate
    // as `npm ci` (arborist's rebuild), offline. The control allows it and sees the mark.
    const { allowScripts } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { allowScripts: Record<string, boolean> };
    const ran = (policy: Record<string, boolean>): boolean => {
      const app = makeTempDir('newsmatch-allow-scripts-');
      const pkg = path.join(app, 'node_modules/onnxruntime-node');
      fs.mkdirSync(pkg, { recursive: true });
      const mark = "node -e \"require('fs').writeFileSync(process.env.INIT_CWD+'/ran','')\"";
      fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'onnxruntime-node', version: '1.30.0', scripts: { postinstall: mark } }));
      const deps = { 'onnxruntime-node': '1.30.0' };
      fs.writeFileSync(
        path.join(app, 'package.json'),
        JSON.stringify({ name: 'app', version: '1.0.0', private: true, dependencies: deps, allowScripts: policy }),
      );
      const lock = {
        name: 'app',
        version: '1.0.0',
        lockfileVersion: 3,
        requires: true,
        packages: {
          '': { name: 'app', version: '1.0.0', dependencies: deps },
          'node_modules/onnxruntime-node': {
            version: '1.30.0',
            resolved: 'https://registry.npmjs.org/onnxruntime-node/-/onnxruntime-node-1.30.0.tgz',
            hasInstallScript: true,
          },
        },
      };
      fs.writeFileSync(path.join(app, 'package-lock.json'), JSON.stringify(lock));
      const r = npm(['rebuild', '--offline'], app);
      expect(r.status, r.stderr).toBe(0);
      return fs.existsSync(path.join(app, 'ran'));
    };
    expect(ran(allowScripts)).toBe(false);
    expect(ran({ ...allowScripts, 'onnxruntime-node': true })).toBe(true);
  });
});
