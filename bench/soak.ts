/**
 * A soak (issue 21; not in CI): BENCH_SOAK_MINUTES (default 30) of mixed traffic against the
 * server as users run it (`npm run build`, then `node dist/src/cli/index.js serve` with INGEST=on),
 * printing its RSS, V8 heap and open descriptors every minute, read from its own /metrics
 * (`process_resident_memory_bytes`, `nodejs_heap_size_used_bytes`, `process_open_fds`) with
 * an operator key. (Served from source under tsx, every worker thread start leaks the tsx
 * cache's file handles: that is tsx's, not the server's, so the soak runs the build.)
 *
 * Traffic, all at once and paced (150, 10 and 100 a second): POST /v1/match (relevance and
 * order=time, vectors drawn as users' queries are), GET /v1/news with an account's Bearer key
 * (metered: every call charged), GET /v1/sources with a gateway key, an import of fresh
 * revisions beside the server every two minutes (`newsmatch import` in its own process, as an
 * operator would), and the server's own ingest loop polling three outlets every 30 s on a
 * loopback feed site whose feeds gain items every 30 s (article pages fetched and extracted).
 *
 * Goal: flat after warm-up, growth at most 5% over the last 20 minutes (the sample 20 minutes
 * before the end against the mean of the last three), and no error responses. The corpus grows
 * meanwhile (BENCH_SOAK_IMPORT_ARTICLES an import, default 30, and the ingest rounds), so the
 * table shows the engine's chunks beside RSS and its anonymous part: data held is not a leak. Prints a table,
 * then one line `soak: minutes=… rss_growth_pct=… heap_growth_pct=… fd_growth=… requests=…
 * errors=…`. Never asserts.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { generateCorpus, writeCorpusJsonl, DIM } from '../test/helpers/corpus.js';
import { articlePage, HTML, RSS, rss2, startFeedServer, type FeedEntry } from '../test/helpers/feed-server.js';
import { Rng } from '../test/helpers/rng.js';
import { envInt } from './corpus.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = process.env.BENCH_DATA_DIR ?? '/tmp/newsmatch-soak';
const GATEWAY_HOST = 'soak.gw';

interface Sample {
  rssMB: number;
  /** Anonymous resident memory (/proc status RssAnon): RSS less LMDB's and the segments' mapped files. */
  anonMB: number;
  /** Chunks the engine holds: the corpus grows with every import and ingest round. */
  rows: number;
  heapMB: number;
  fds: number;
  polls: number;
}

/** One value of a Prometheus text exposition (the sum over its label sets). */
function metric(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

{
  const minutes = envInt('BENCH_SOAK_MINUTES', 30);
  // Articles an import brings (every two minutes): a trickle on a corpus of 1,500, so that
  // memory that grows with the data does not hide memory that leaks.
  const importArticles = envInt('BENCH_SOAK_IMPORT_ARTICLES', 30);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const env = { DATA_DIR: path.join(dir, 'data'), GATEWAY_HOST, LOG_LEVEL: 'warn', INGEST_ALLOW_PRIVATE: 'on' };
  const built = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`npm run build: ${built.stdout}${built.stderr}`);

  // The corpus the server starts with, imported before it opens.
  const first = generateCorpus({ seed: 1, articles: 1500 });
  writeCorpusJsonl(first, path.join(dir, 'corpus-0.jsonl'));
  const runCli = (args: string[]) =>
    spawnSync(process.execPath, ['dist/src/cli/index.js', ...args], { cwd: ROOT, env: { ...process.env, ...env, NODE_OPTIONS: '' }, encoding: 'utf8' });
  const imp = runCli(['import', path.join(dir, 'corpus-0.jsonl')]);
  if (imp.status !== 0) throw new Error(`import: ${imp.stderr}`);

  // The loopback news site: each round adds an item (and its page) to every desk's feed.
  const site = await startFeedServer();
  const items: FeedEntry[][] = [[], [], []];
  let round = 0;
  const grow = () => {
    round++;
    for (let d = 0; d < 3; d++) {
      const link = `${site.base}/d${d}/story-${round}.html`;
      const date = Math.floor(Date.now() / 1000);
      const text = `Story ${round} of desk ${d}. ${'The harbour authority said the new cranes would arrive next spring, and the unions asked for talks. '.repeat(8)}`;
      site.set(`/d${d}/story-${round}.html`, { body: articlePage({ headline: `Desk ${d} story ${round}`, text, date }), type: HTML });
      items[d].unshift({ title: `Desk ${d} story ${round}`, link, date, description: `Story ${round}.` });
      items[d].length = Math.min(items[d].length, 20);
      site.set(`/d${d}/feed.xml`, { body: rss2(`Desk ${d}`, items[d]), type: RSS });
    }
  };
  grow();
  const growing = setInterval(grow, 30_000);

  // The operator's set-up, with the CLI: keys, a customer on a plan whose rate the news load
  // stays under, the outlets (each polled every 30 s by the server's ingest loop).
  const lastLine = (args: string[]) => {
    const r = runCli(args);
    if (r.status !== 0) throw new Error(`newsmatch ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim().split('\n').at(-1)!.trim();
  };
  const operator = lastLine(['keys', 'create', '--name', 'soak metrics']);
  const gateway = lastLine(['keys', 'create', '--scheme', 'gateway', '--name', 'soak gateway']);
  const account = lastLine(['accounts', 'create', '--name', 'soak customer']);
  lastLine(['credits', 'buy', '--account', account, '--credits', '10000000']);
  lastLine(['subscribe', '--account', account, '--product', 'news', '--plan', 'mega']);
  const customer = lastLine(['keys', 'create', '--account', account, '--name', 'soak customer']);
  for (let d = 0; d < 3; d++)
    lastLine([
      'sources',
      'add',
      '--name',
      `Soak Desk ${d}`,
      '--homepage',
      `${site.base}/d${d}/`,
      '--feed',
      `${site.base}/d${d}/feed.xml`,
      '--fetch-articles',
      '--interval',
      '30s',
    ]);

  // A free port, then the server on it (LOG_LEVEL=warn keeps its "listening" line quiet):
  // ready once /healthz answers.
  const port = await new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (probe.address() as net.AddressInfo).port;
      probe.close(() => resolve(p));
    });
  });
  const server = spawn(process.execPath, ['--max-semi-space-size=64', 'dist/src/cli/index.js', 'serve', '--port', String(port)], {
    cwd: ROOT,
    env: { ...process.env, ...env, INGEST: 'on', NODE_OPTIONS: '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  server.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`server exited: ${stderr}`);
    if ((await fetch(`${base}/healthz`).catch(() => null))?.ok) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const sample = async (): Promise<Sample> => {
    const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${operator}` } })).text();
    return {
      rssMB: metric(text, 'process_resident_memory_bytes') / 1e6,
      anonMB: Number(/RssAnon:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${server.pid}/status`, 'utf8'))?.[1] ?? 0) / 1e3,
      rows: metric(text, 'newsmatch_engine_rows'),
      heapMB: metric(text, 'nodejs_heap_size_used_bytes') / 1e6,
      fds: metric(text, 'process_open_fds'),
      polls: metric(text, 'newsmatch_ingest_outlet_polls_total'),
    };
  };
  const ready = { gateway, customer };
  console.log(`server on ${base} (dist/src/cli/index.js serve); ${minutes} minutes of mixed traffic`);

  // Query bodies: topic directions with noise (not stored rows), and far ones.
  const rng = new Rng(7);
  const unit = (v: number[]) => {
    const n = Math.hypot(...v);
    return v.map((x) => x / n);
  };
  const stored = first.revisions.slice(0, 40).map((r) => r.chunks[0].raw);
  const bodies: string[] = [];
  for (let i = 0; i < 64; i++) {
    const near = i % 8 !== 7;
    const v = near ? unit(Array.from(stored[i % stored.length], (x) => x + rng.gauss() * 0.03)) : unit(Array.from({ length: DIM }, () => rng.gauss()));
    bodies.push(JSON.stringify(i % 2 ? { vector: v, order: 'relevance', limit: 20 } : { vector: v, order: 'time', limit: 20, min_score: near ? 0.6 : 0.2 }));
  }
  const words = ['harbour', 'strike', 'rates', 'election', 'wildfire OR drought', '"the port"', 'chips -rail', 'vaccine', 'cranes', 'unions'];

  const statuses = new Map<number, number>();
  let requests = 0;
  const run = (opts: autocannon.Options) =>
    new Promise<void>((resolve) => {
      const inst = autocannon(opts, () => resolve());
      inst.on('response', (_client: unknown, status: number) => {
        requests++;
        if (status >= 300) statuses.set(status, (statuses.get(status) ?? 0) + 1);
      });
    });
  const gw = { 'x-gateway-key': ready.gateway, 'x-gateway-host': GATEWAY_HOST, 'content-type': 'application/json' };
  let b = 0;
  let w = 0;
  const minute = async () => {
    await Promise.all([
      // Paced, not flat out: a soak looks for growth over time, and the machine stays usable.
      run({
        url: base,
        connections: 2,
        duration: 55,
        overallRate: 150,
        headers: gw,
        requests: [{ method: 'POST', path: '/v1/match', setupRequest: (r: autocannon.Request) => ({ ...r, body: bodies[b++ % bodies.length] }) }],
      }),
      // 10 a second: under the plan's 20 a second, so every call is served and charged.
      run({
        url: base,
        connections: 1,
        duration: 55,
        overallRate: 10,
        headers: { authorization: `Bearer ${ready.customer}` },
        requests: [
          { method: 'GET', setupRequest: (r: autocannon.Request) => ({ ...r, path: `/v1/news?q=${encodeURIComponent(words[w++ % words.length])}&limit=10` }) },
        ],
      }),
      run({ url: base, connections: 1, duration: 55, overallRate: 100, headers: gw, requests: [{ method: 'GET', path: '/v1/sources' }] }),
    ]);
  };

  const samples: Sample[] = [];
  console.log(
    `${'min'.padStart(4)} ${'rss MB'.padStart(8)} ${'anon MB'.padStart(8)} ${'heap MB'.padStart(8)} ${'chunks'.padStart(7)} ${'fds'.padStart(5)} ${'polls'.padStart(6)} ${'requests'.padStart(9)} ${'imports'.padStart(8)}  non-2xx`,
  );
  let imports = 0;
  for (let m = 1; m <= minutes; m++) {
    // An import beside the server every two minutes: fresh revisions, its own process.
    const importing =
      m % 2 === 0
        ? (async () => {
            const file = path.join(dir, `corpus-${m}.jsonl`);
            writeCorpusJsonl(generateCorpus({ seed: 1000 + m, articles: importArticles, start: new Date(Date.now() - 86_400_000 * 30).toISOString() }), file);
            const r = runCli(['import', file]);
            if (r.status === 0) imports++;
            else console.log(`import failed: ${r.stderr.slice(0, 300)}`);
            fs.rmSync(file);
          })()
        : Promise.resolve();
    await Promise.all([minute(), importing]);
    const s = await sample();
    samples.push(s);
    console.log(
      `${String(m).padStart(4)} ${s.rssMB.toFixed(0).padStart(8)} ${s.anonMB.toFixed(0).padStart(8)} ${s.heapMB.toFixed(0).padStart(8)} ${String(s.rows).padStart(7)} ${String(s.fds).padStart(5)} ${String(s.polls).padStart(6)} ${String(requests).padStart(9)} ${String(imports).padStart(8)}  ${[...statuses].map(([k, v]) => `${k}×${v}`).join(' ') || '-'}`,
    );
  }
  clearInterval(growing);
  const exited = new Promise((r) => server.once('exit', r));
  server.kill('SIGTERM');
  await exited;
  await site.close();

  // Growth over the last 20 minutes: the sample at minutes - 20 (or the first after warm-up)
  // against the mean of the last three.
  const from = samples[Math.max(0, samples.length - 21)];
  const last = samples.slice(-3);
  const mean = (f: (s: Sample) => number) => last.reduce((a, s) => a + f(s), 0) / last.length;
  const pct = (a: number, b: number) => ((b - a) / a) * 100;
  const errors = [...statuses.values()].reduce((a, b) => a + b, 0);
  console.log(
    `soak: minutes=${minutes} rss_growth_pct=${pct(
      from.rssMB,
      mean((s) => s.rssMB),
    ).toFixed(1)} anon_growth_pct=${pct(
      from.anonMB,
      mean((s) => s.anonMB),
    ).toFixed(1)} chunks_growth_pct=${pct(
      from.rows,
      mean((s) => s.rows),
    ).toFixed(1)} heap_growth_pct=${pct(
      from.heapMB,
      mean((s) => s.heapMB),
    ).toFixed(1)} ` +
      `fd_growth=${(mean((s) => s.fds) - from.fds).toFixed(0)} requests=${requests} imports=${imports} polls=${samples.at(-1)?.polls ?? 0} errors=${errors}`,
  );
}
