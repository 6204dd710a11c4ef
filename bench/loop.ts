/**
 * Nothing blocks the event loop: the server's event-loop delay (monitorEventLoopDelay in the
 * server, a child process) and a trivial route's latency (GET /v1/sources, polled every 10 ms
 * from this process) while each background activity runs in turn:
 *
 * 1. idle: nothing but the polling (the baseline row).
 * 2. /v1/news sort=relevance load (BENCH_LOOP_CONNECTIONS, default 2; BENCH_LOOP_LIMIT results a
 *    page, default 25) over BENCH_LOOP_ARTICLES (default 30,000) revisions, most of which match:
 *    BM25 ranks every match.
 * 3. `newsmatch import` of BENCH_LOOP_REVISIONS (default 100,000) revisions (no vectors) in a
 *    second process beside the server, with a /v1/news query and a POST /v1/match every 250 ms,
 *    until the server's keyword index has caught up with them (the import writes records only;
 *    the server indexes them: the keyword index on the writer thread, the catalog on the loop).
 * 4. an ingest round with article fetching from a local feed server: BENCH_LOOP_OUTLETS
 *    (default 4) feeds of BENCH_LOOP_PAGES (default 24) items, every third page a captured AP
 *    article that only Readability extracts (70–140 ms each), the rest JSON-LD pages.
 * 5. the engine's maintenance: BENCH_LOOP_CHUNKS (default 40,000) chunks written to LMDB before
 *    the row, then, while it is measured, appended to the engine (the catch-up a request starts,
 *    a slice at a time), filed, the relevance index trained, sealed and saved.
 *
 * Each row prints the loop delay p99 and max, /v1/sources p99 and, last, that p99 over the
 * idle row's. The last line is `loop: worst_p99_ms=… worst_max_ms=… rows=…`. The goal is a
 * loop max ≤ 50 ms and p99 ≤ 10 ms in every row; nothing here asserts it. BENCH_SECONDS
 * (default 6) sizes rows 1 and 2. KEYWORD_READ_THREADS and INGEST_PARSE_THREADS pass through
 * to the server (0: the old, on-the-loop behaviour, for comparison).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { buildApp } from '../src/http/app.js';
import { keywordLag } from '../src/keyword/index.js';
import { normalise } from '../src/search/index.js';
import { openService } from '../src/service.js';
import type { RevisionInput } from '../src/store/index.js';
import { articlePage, HTML, RSS, rss2, startFeedServer } from '../test/helpers/feed-server.js';
import { Rng } from '../test/helpers/rng.js';
import { benchConfig } from './big-corpus.js';
import { forkServer } from './child.js';
import { envInt } from './corpus.js';

const T0 = 1_767_225_600; // 2026-01-01
const WORDS = [
  'port',
  'strike',
  'rail',
  'harbour',
  'council',
  'budget',
  'storm',
  'ferry',
  'school',
  'energy',
  'wages',
  'market',
  'court',
  'bridge',
  'river',
  'election',
];
const SOURCES = ['Wire One', 'Daily Ledger', 'Harbour Post', 'Berliner Blatt'];

/** A plain news revision; "port" is in about 80% of them (relevance ranks tens of thousands of matches). */
function revision(rng: Rng, i: number, prefix: string): { url: string; source: string; title: string; snippet: string; text: string; publishedAt: number } {
  const sentence = () => Array.from({ length: 8 + rng.int(10) }, () => WORDS[rng.int(WORDS.length)]).join(' ');
  const port = rng.chance(0.8) ? 'port ' : '';
  return {
    url: `https://${prefix}.example/${i}`,
    source: SOURCES[i % SOURCES.length],
    title: `${port}${sentence()}`.slice(0, 120),
    snippet: sentence(),
    text: Array.from({ length: 4 + rng.int(8) }, sentence).join('. '),
    publishedAt: T0 + i * 7,
  };
}

const ISO = (t: number) => new Date(t * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

if (process.argv[2] === 'serve') {
  // ---- the server ------------------------------------------------------------------------
  const dir = process.argv[3];
  const pass = Object.fromEntries(
    ['KEYWORD_READ_THREADS', 'INGEST_PARSE_THREADS'].filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]!]),
  );
  const service = await openService(benchConfig(dir, { INDEX_MIN_CHUNKS: '16384', INGEST_ALLOW_PRIVATE: 'on', ...pass }));
  const app = await buildApp(service);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;
  const { secret } = service.keys.create({ scheme: 'bearer', name: 'bench-loop' });

  // The corpus the relevance row ranks, indexed before anything is measured.
  const rng = new Rng(11);
  const articles = envInt('BENCH_LOOP_ARTICLES', 30_000);
  for (let i = 0; i < articles; i += 1000) {
    const batch: RevisionInput[] = [];
    for (let k = i; k < Math.min(articles, i + 1000); k++) {
      const r = revision(rng, k, 'base');
      batch.push({ url: r.url, source: r.source, title: r.title, body: r.snippet, text: r.text, publishedAt: r.publishedAt, chunks: [] });
    }
    service.store.writeRevisions(batch);
  }
  const caughtUp = async () => {
    service.news.startBackground();
    while (keywordLag(service).pending > 0) await new Promise((r) => setTimeout(r, 100));
  };
  await caughtUp();

  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  let release: (() => void) | null = null;
  const reply = (m: unknown) => process.send!(m);
  process.on('message', (raw: string) => {
    const [cmd, arg] = [raw.split(' ')[0], raw.slice(raw.indexOf(' ') + 1)];
    void (async () => {
      if (cmd === 'reset') {
        delay.reset();
        reply({});
      } else if (cmd === 'report') {
        reply({ p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 });
      } else if (cmd === 'lag') {
        reply(keywordLag(service));
      } else if (cmd === 'ingest') {
        // One round over the outlets, every page fetched and extracted.
        for (const feed of JSON.parse(arg) as string[]) {
          const name = `Loop ${path.basename(feed, '.xml')}`;
          if (!service.outlets.get(name)) service.outlets.add({ name, homepage: new URL('/', feed).href, feeds: [feed], fetchArticles: true });
        }
        const poller = service.createPoller();
        const reports = await poller.round({ force: true });
        await poller.stop();
        const sum = (k: 'pagesFetched' | 'newRevisions') => reports.reduce((n, r) => n + r[k], 0);
        reply({ pages: sum('pagesFetched'), revisions: sum('newRevisions'), errors: reports.flatMap((r) => r.errors).slice(0, 3) });
      } else if (cmd === 'maintain-prepare') {
        // Chunks with vectors, appended to the engine with its background work held back.
        release = service.maintenance.hold();
        const chunks = Number(arg);
        const vrng = new Rng(12);
        const centroids = Array.from({ length: 64 }, () => Float32Array.from({ length: 1024 }, () => vrng.uniform(-1, 1)));
        for (let done = 0, i = 0; done < chunks; i++) {
          const batch: RevisionInput[] = [];
          for (let k = 0; k < 200 && done < chunks; k++, done += 4) {
            const r = revision(vrng, i * 200 + k, 'vec');
            const c = centroids[vrng.int(centroids.length)];
            const vec = () => normalise(Array.from(c, (x) => x + vrng.uniform(-0.6, 0.6)))!;
            batch.push({
              url: r.url,
              source: r.source,
              title: r.title,
              body: r.snippet,
              text: r.text,
              publishedAt: r.publishedAt,
              chunks: Array.from({ length: 4 }, (_, j) => ({ text: `${r.title} ${j}`, vector: vec() })),
            });
          }
          service.store.writeRevisions(batch);
        }
        reply({});
      } else if (cmd === 'maintain') {
        // In the row: the append (the catch-up a request would start, a slice at a time), then
        // the background work.
        release?.();
        const t = performance.now();
        await service.catchUp();
        const appendMs = performance.now() - t;
        await service.maintenance.flush();
        const s = service.engine.stats();
        reply({ lists: s.indexLists, rows: s.indexRows, segments: s.segments, appendMs });
      } else if (cmd === 'close') {
        await app.close();
        await service.close();
        process.exit(0);
      }
    })().catch((e) => {
      console.error(e);
      process.exit(1);
    });
  });
  reply({ port, secret });
} else {
  // ---- the driver ------------------------------------------------------------------------
  const seconds = envInt('BENCH_SECONDS', 6);
  const revisions = envInt('BENCH_LOOP_REVISIONS', 100_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-bench-loop-'));
  const dataDir = path.join(dir, 'data');
  console.log(`server data in ${dir}; ${os.availableParallelism()} cores; indexing ${envInt('BENCH_LOOP_ARTICLES', 30_000)} revisions before the first row…`);

  // The local feed site of the ingest row.
  const site = await startFeedServer();
  const ap = fs.readFileSync(fileURLToPath(new URL('../test/fixtures/pages/publisher/apnews-article-presidential-campaigns-2024-09-03.html', import.meta.url)));
  const feeds: string[] = [];
  const rng = new Rng(13);
  for (let o = 0; o < envInt('BENCH_LOOP_OUTLETS', 4); o++) {
    const items = Array.from({ length: envInt('BENCH_LOOP_PAGES', 24) }, (_, i) => {
      const r = revision(rng, o * 1000 + i, 'feed');
      const link = `${site.base}/o${o}/a${i}`;
      site.set(`/o${o}/a${i}`, {
        body: i % 3 === 0 ? ap : articlePage({ headline: r.title, text: r.text.replace(/\. /g, '.\n\n'), date: T0 + i }),
        type: HTML,
      });
      return { title: r.title, link, description: r.snippet, date: Math.floor(Date.now() / 1000) - 3600 + i };
    });
    site.set(`/o${o}.xml`, { body: rss2(`Outlet ${o}`, items), type: RSS });
    feeds.push(`${site.base}/o${o}.xml`);
  }

  const { child, ask } = forkServer(fileURLToPath(import.meta.url), ['serve', dataDir]);
  const ready = await ask<{ port: number; secret: string }>(null);
  const base = `http://127.0.0.1:${ready.port}`;
  const headers = { authorization: `Bearer ${ready.secret}` };

  /** GET /v1/sources every 10 ms until stopped; resolves with the latencies (ms). */
  const pollSources = () => {
    let stop = false;
    const times: number[] = [];
    const done = (async () => {
      while (!stop) {
        const t = performance.now();
        const res = await fetch(`${base}/v1/sources`, { headers });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`GET /v1/sources: ${res.status}`);
        times.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, Math.max(0, 10 - (performance.now() - t))));
      }
      return times;
    })();
    return () => {
      stop = true;
      return done;
    };
  };
  const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))] ?? 0;

  interface Row {
    name: string;
    loopP99: number;
    loopMax: number;
    sourcesP99: number;
    polls: number;
    note: string;
  }
  const rows: Row[] = [];
  const row = async (name: string, activity: () => Promise<string>) => {
    await ask('reset');
    const stop = pollSources();
    const t = performance.now();
    const what = await activity();
    const note = `${((performance.now() - t) / 1000).toFixed(1)} s: ${what}`;
    const times = await stop();
    const rep = await ask<{ p99: number; max: number }>('report');
    rows.push({ name, loopP99: rep.p99, loopMax: rep.max, sourcesP99: p99(times), polls: times.length, note });
    console.log(`  ${name}: loop p99 ${rep.p99.toFixed(1)} ms, max ${rep.max.toFixed(1)} ms; /v1/sources p99 ${p99(times).toFixed(1)} ms; ${note}`);
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  await row('idle (baseline)', async () => {
    await sleep(seconds * 1000);
    return 'nothing else';
  });

  await row('/v1/news sort=relevance load', async () => {
    const qs = ['port', 'port%20strike', 'port%20OR%20ferry', 'harbour%20port', 'port%20-storm'];
    const limit = envInt('BENCH_LOOP_LIMIT', 25);
    let i = 0;
    const r = await autocannon({
      url: base,
      connections: envInt('BENCH_LOOP_CONNECTIONS', 2),
      duration: seconds,
      headers,
      requests: [
        { method: 'GET', setupRequest: (req: autocannon.Request) => ({ ...req, path: `/v1/news?q=${qs[i++ % qs.length]}&sort=relevance&limit=${limit}` }) },
      ],
    });
    const bad = r.non2xx + r.errors + r.timeouts;
    return `${r.requests.total} queries, p99 ${r.latency.p99} ms${bad ? `, ${bad} failed` : ''}`;
  });

  // The import file is written before its row.
  const file = path.join(dir, 'import.jsonl');
  const out = fs.createWriteStream(file);
  const irng = new Rng(14);
  for (let i = 0; i < revisions; i++) {
    const r = revision(irng, i, 'import');
    const line = JSON.stringify({ url: r.url, source: r.source, title: r.title, snippet: r.snippet, text: r.text, published_at: ISO(r.publishedAt) });
    if (!out.write(`${line}\n`)) await new Promise<void>((res) => out.once('drain', () => res()));
  }
  await new Promise<void>((res) => out.end(res));
  await row(`newsmatch import of ${revisions} revisions beside it`, async () => {
    const t = performance.now();
    const cli = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../src/cli/index.ts', import.meta.url)), 'import', file], {
      env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', NODE_OPTIONS: '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    cli.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((res) => cli.once('exit', res));
    let imported: number | null = null;
    void exited.then((code) => {
      imported = performance.now() - t;
      if (code !== 0) console.error(`newsmatch import exited ${code}: ${stderr.slice(-500)}`);
    });
    let partial = 0;
    let searches = 0;
    // Requests meanwhile start the server's catch-ups: a keyword search the keyword index's
    // (and says partial while it runs), a /v1/match the catalog's and the engine's.
    for (;;) {
      const res = await fetch(`${base}/v1/news?q=port&limit=5`, { headers });
      const body = (await res.json()) as { partial?: boolean };
      searches++;
      if (body.partial) partial++;
      const match = await fetch(`${base}/v1/match`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{"limit":1}' });
      await match.arrayBuffer();
      if (imported !== null && (await ask<{ pending: number }>('lag')).pending === 0) break;
      await sleep(250);
    }
    return `import ${(imported! / 1000).toFixed(1)} s, caught up at ${((performance.now() - t) / 1000).toFixed(1)} s; ${partial} of ${searches} searches partial`;
  });

  await row('ingest round with article fetching', async () => {
    const r = await ask<{ pages: number; revisions: number; errors: string[] }>(`ingest ${JSON.stringify(feeds)}`);
    return `${r.pages} pages, ${r.revisions} revisions${r.errors.length ? `, errors: ${r.errors.join('; ')}` : ''}`;
  });

  const chunks = envInt('BENCH_LOOP_CHUNKS', 40_000);
  await ask(`maintain-prepare ${chunks}`);
  await row(`engine maintenance of ${chunks} chunks`, async () => {
    const r = await ask<{ lists: number; rows: number; segments: number; appendMs: number }>('maintain');
    return `appended in ${r.appendMs.toFixed(0)} ms (slices), filed ${r.rows} in ${r.lists} lists, ${r.segments} segments`;
  });

  await ask('close').catch(() => undefined);
  child.kill();
  await site.close();
  fs.rmSync(dir, { recursive: true, force: true });

  const base0 = Math.max(rows[0].sourcesP99, 0.001);
  console.log(
    `\nevent loop under background work (server: KEYWORD_READ_THREADS=${process.env.KEYWORD_READ_THREADS ?? 'default'}, INGEST_PARSE_THREADS=${process.env.INGEST_PARSE_THREADS ?? 'default'})`,
  );
  console.log(
    `${'row'.padEnd(48)} ${'loop p99'.padStart(9)} ${'loop max'.padStart(9)} ${'GET p99'.padStart(8)} ${'polls'.padStart(6)}  ${'GET p99 ÷ idle'.padStart(14)}`,
  );
  for (const r of rows) {
    console.log(
      `${r.name.padEnd(48)} ${r.loopP99.toFixed(1).padStart(9)} ${r.loopMax.toFixed(1).padStart(9)} ${r.sourcesP99.toFixed(1).padStart(8)} ${String(r.polls).padStart(6)}  ${(r.sourcesP99 / base0).toFixed(2).padStart(13)}x`,
    );
  }
  const worstP99 = Math.max(...rows.map((r) => r.loopP99));
  const worstMax = Math.max(...rows.map((r) => r.loopMax));
  console.log(`loop: worst_p99_ms=${worstP99.toFixed(1)} worst_max_ms=${worstMax.toFixed(1)} rows=${rows.length}`);
}
