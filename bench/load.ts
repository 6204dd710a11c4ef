/**
 * HTTP load on the served benchmark corpus (bench/big-corpus.ts; BENCH_CHUNKS, default
 * 300,000; the issue's size is 1,000,000): autocannon against a server on 127.0.0.1 running in a child process (so the
 * load generator's own work does not sit on the server's event loop; both share the
 * machine's cores, which makes these figures a floor). Runs, each BENCH_SECONDS (default 12):
 *
 * 1. GET /v1/sources alone: the HTTP stack's own cost, the baseline row.
 * 2. order=relevance, a vector, limit 50 (include_edits=false, the API default), from a pool
 *    of BENCH_POOL (default 64) distinct query bodies drawn as users' queries are (bench/big-
 *    corpus.ts: story, paraphrase, topic and mixed classes; none a stored chunk).
 *    The same with include_edits=true (no filter), and a row of far queries (off-topic and
 *    random classes), which the planner answers by an exact scan.
 * 3. Relevance's capacity under the latency goal: the same queries at each connection count of
 *    BENCH_SWEEP (default 8,12,20,24,32,48; the 16-connection run above is one more point). A fixed
 *    count measures latency as much as capacity (Little's law: 16 connections at 16 ms each is
 *    1,000 req/s whatever the CPU has left), so the line also says the most req/s of any point
 *    whose p99 is within BENCH_P99_MS (default 50), and at how many connections.
 * 4. order=time, a vector, limit 50, min_score set per query so ~300 first revisions match.
 * 5. GET /v1/sources while order=time queries run beside it: if a scan ever ran on the event
 *    loop, this p99 would show it.
 *
 * Prints a table (req/s, p50, p99, and the server's event-loop delay p99) whose last column
 * is req/s relative to the baseline row, then one line `load: ...`. BENCH_CPU_PROF=<dir> writes
 * the server's V8 CPU profile there; RENDERED_MEMORY_MB (the server's setting, e.g. 0) is passed on.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { buildApp } from '../src/http/app.js';
import { openService } from '../src/service.js';
import { benchChunks, benchConfig, benchDataDir, benchQueryClasses, ensureBigCorpus, NEAR_CLASSES } from './big-corpus.js';
import { forkServer } from './child.js';
import { envInt } from './corpus.js';

const chunks = benchChunks();
const dir = benchDataDir(chunks);

interface Ready {
  port: number;
  secret: string;
  relevance: string[];
  relevanceAll: string[];
  far: string[];
  time: string[];
  openMs: number;
  rssMB: number;
}

if (process.argv[2] === 'serve') {
  // The child: serve the corpus, hand back the port, a key and the query bodies.
  const t0 = performance.now();
  // RENDERED_MEMORY_MB=0 serves without the in-memory copy of the rendered articles, to compare.
  const mirror = process.env.RENDERED_MEMORY_MB;
  const service = await openService(benchConfig(dir, mirror === undefined ? {} : { RENDERED_MEMORY_MB: mirror }));
  const app = await buildApp(service);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const openMs = performance.now() - t0;
  const port = (app.server.address() as { port: number }).port;
  const { secret } = service.keys.create({ scheme: 'bearer', name: 'bench-load' });
  const pool = envInt('BENCH_POOL', 64);
  const queries = benchQueryClasses(service, Math.ceil(pool / NEAR_CLASSES.length), 7, NEAR_CLASSES).slice(0, pool);
  const first = service.search.filter({ includeEdits: false, sources: null });
  const relevance: string[] = [];
  const relevanceAll: string[] = [];
  const far = benchQueryClasses(service, 8, 8, ['off-topic', 'random']).map(({ query }) =>
    JSON.stringify({ vector: Array.from(query), order: 'relevance', limit: 50 }),
  );
  const time: string[] = [];
  for (const { query } of queries) {
    const vector = Array.from(query);
    relevance.push(JSON.stringify({ vector, order: 'relevance', limit: 50 }));
    relevanceAll.push(JSON.stringify({ vector, order: 'relevance', limit: 50, include_edits: true }));
    // min_score at the 300th best first revision: a typical order=time result set.
    const top = await service.engine.topk(query, 300, -1, first, 'scan');
    time.push(JSON.stringify({ vector, order: 'time', limit: 50, min_score: top.scores[top.scores.length - 1] }));
  }
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  // CPU of the whole server (every thread) and the event loop's busy time, per run.
  let cpu = process.cpuUsage();
  let elu = performance.eventLoopUtilization();
  let since = performance.now();
  process.on('message', (m: string) => {
    if (m === 'reset') {
      delay.reset();
      cpu = process.cpuUsage();
      elu = performance.eventLoopUtilization();
      since = performance.now();
      process.send!({ reset: true });
    } else if (m === 'report') {
      const used = process.cpuUsage(cpu);
      const loop = performance.eventLoopUtilization(elu);
      const wall = performance.now() - since;
      process.send!({
        loopP99: delay.percentile(99) / 1e6,
        loopMax: delay.max / 1e6,
        cpuMs: (used.user + used.system) / 1000,
        loopMs: loop.utilization * wall,
        plans: service.search.plans,
        batches: service.engine.batches,
        rendered: service.store.mirrored(),
      });
    } else if (m === 'close') {
      void app
        .close()
        .then(() => service.close())
        .then(() => process.exit(0));
    }
  });
  const ready: Ready = { port, secret, relevance, relevanceAll, far, time, openMs, rssMB: process.memoryUsage().rss / 1e6 };
  process.send!(ready);
} else {
  await ensureBigCorpus(chunks, dir);
  const seconds = envInt('BENCH_SECONDS', 12);
  const connections = envInt('BENCH_CONNECTIONS', 16);
  const { ask } = forkServer(fileURLToPath(import.meta.url), ['serve']);
  const ready = await ask<Ready>(null);
  console.log(
    `server on 127.0.0.1:${ready.port}: opened ${chunks} chunks in ${ready.openMs.toFixed(0)} ms, RSS ${ready.rssMB.toFixed(0)} MB after building the query pool`,
  );
  const base = `http://127.0.0.1:${ready.port}`;
  const headers = { authorization: `Bearer ${ready.secret}`, 'content-type': 'application/json' };

  /** One autocannon run; POST bodies rotate through `bodies` across all connections. */
  const cannon = (path: string, bodies: string[] | null, conns: number, duration: number) => {
    let i = 0;
    return autocannon({
      url: base,
      connections: conns,
      duration,
      headers,
      requests: [
        bodies ? { method: 'POST', path, setupRequest: (req: autocannon.Request) => ({ ...req, body: bodies[i++ % bodies.length] }) } : { method: 'GET', path },
      ],
    });
  };
  type Result = Awaited<ReturnType<typeof autocannon>>;
  const rows: { name: string; r: Result; loopP99: number; loopMax: number; cpuMs: number; loopMs: number }[] = [];
  // BENCH_RUNS=relevance,time (names: sources, relevance, edits, far, sweep, time, mixed) runs a subset, e.g. to profile one.
  const only = process.env.BENCH_RUNS ? new Set(process.env.BENCH_RUNS.split(',')) : null;
  const run = async (name: string, go: () => Promise<Result>, key: string) => {
    if (only && !only.has(key)) return undefined;
    await ask('reset');
    const r = await go();
    const rep = await ask<{ loopP99: number; loopMax: number; cpuMs: number; loopMs: number }>('report');
    const bad = r.non2xx + r.errors + r.timeouts;
    console.log(
      `  ${name}: ${r.requests.average.toFixed(0)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms${bad ? `, ${bad} failed (non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts})` : ''}`,
    );
    rows.push({ name, r, loopP99: rep.loopP99, loopMax: rep.loopMax, cpuMs: rep.cpuMs, loopMs: rep.loopMs });
    return r;
  };

  // Warm-up: page cache, JIT, index pages.
  await cannon('/v1/match', ready.relevance, 4, 3);
  await cannon('/v1/match', ready.time, 4, 3);

  await run('GET /v1/sources alone (baseline)', () => cannon('/v1/sources', null, 4, Math.min(seconds, 8)), 'sources');
  const relevance = await run(
    `relevance, vector, limit 50 (${connections} conns)`,
    () => cannon('/v1/match', ready.relevance, connections, seconds),
    'relevance',
  );
  // Unfiltered: no first-revision filter.
  await run(`relevance, include_edits=true (${connections} conns)`, () => cannon('/v1/match', ready.relevanceAll, connections, seconds), 'edits');
  await run(`relevance, far queries: exact scans (${connections} conns)`, () => cannon('/v1/match', ready.far, connections, seconds), 'far');
  // The sweep: relevance at other connection counts; the 16-connection run above is a point too.
  const points: { conns: number; r: Result }[] = relevance ? [{ conns: connections, r: relevance }] : [];
  for (const conns of (process.env.BENCH_SWEEP ?? '8,12,20,24,32,48').split(',').map(Number)) {
    if (!(conns > 0) || conns === connections) continue;
    const r = await run(`relevance, vector, limit 50 (${conns} conns)`, () => cannon('/v1/match', ready.relevance, conns, seconds), 'sweep');
    if (r) points.push({ conns, r });
  }
  const p99Goal = envInt('BENCH_P99_MS', 50);
  // Only a point with every request answered counts.
  const within = points.filter(({ r }) => r.latency.p99 <= p99Goal && r.non2xx + r.errors + r.timeouts === 0);
  const best = within.reduce<(typeof points)[number] | undefined>((a, b) => (a && a.r.requests.average >= b.r.requests.average ? a : b), undefined);
  const time = await run(`order=time, vector, limit 50 (${connections} conns)`, () => cannon('/v1/match', ready.time, connections, seconds), 'time');
  // Both at once: the event loop must keep answering /v1/sources while scans run.
  let rangeUnderSources: Result | undefined;
  const sources = await run(
    `GET /v1/sources under order=time load`,
    async () => {
      const load = cannon('/v1/match', ready.time, connections, seconds + 1);
      await new Promise((r) => setTimeout(r, 500));
      const s = await cannon('/v1/sources', null, 2, seconds - 1);
      rangeUnderSources = await load;
      return s;
    },
    'mixed',
  );
  const final = await ask<{ plans: unknown; batches: { passes: number; queries: number }; rendered: { count: number; bytes: number } | null }>('report');
  await ask('close').catch(() => undefined);

  const base0 = rows[0]?.r.requests.average ?? 1;
  console.log(`\nload on ${chunks} chunks (${seconds} s a run, server and autocannon sharing the machine's cores)`);
  // Per request: the server's CPU on every thread, and the event loop's share of it.
  console.log(
    `${'run'.padEnd(46)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'loop p99'.padStart(9)} ${'cpu µs'.padStart(8)} ${'loop µs'.padStart(8)} ${'failed'.padStart(7)}  ${'req/s ÷ baseline'.padStart(16)}`,
  );
  for (const { name, r, loopP99, cpuMs, loopMs } of rows) {
    const bad = r.non2xx + r.errors + r.timeouts;
    const n = Math.max(1, r.requests.total);
    console.log(
      `${name.padEnd(46)} ${r.requests.average.toFixed(0).padStart(8)} ${String(r.latency.p50).padStart(8)} ${String(r.latency.p99).padStart(8)} ${loopP99.toFixed(1).padStart(9)} ${((cpuMs * 1000) / n).toFixed(0).padStart(8)} ${((loopMs * 1000) / n).toFixed(0).padStart(8)} ${String(bad).padStart(7)}  ${(r.requests.average / base0).toFixed(3).padStart(15)}x`,
    );
  }
  if (rangeUnderSources) console.log(`(order=time beside it: ${rangeUnderSources.requests.average.toFixed(0)} req/s, p99 ${rangeUnderSources.latency.p99} ms)`);
  const b = final.batches;
  console.log(
    `server: plans ${JSON.stringify(final.plans)}, range passes ${b.passes} for ${b.queries} queries (${(b.queries / Math.max(1, b.passes)).toFixed(1)} a pass), ` +
      (final.rendered
        ? `${final.rendered.count} rendered articles in memory (${Math.round(final.rendered.bytes / 2 ** 20)} MB)`
        : 'rendered articles read from LMDB'),
  );
  if (points.length > 1)
    console.log(
      `relevance by connections: ${points
        .sort((a, b) => a.conns - b.conns)
        .map(({ conns, r }) => `${conns}: ${r.requests.average.toFixed(0)} req/s p99 ${r.latency.p99} ms`)
        .join(', ')}; the most within p99 ${p99Goal} ms: ${best ? `${best.r.requests.average.toFixed(0)} req/s at ${best.conns}` : 'none'}`,
    );
  console.log(
    `load: relevance_rps=${relevance?.requests.average.toFixed(0)} relevance_p99_ms=${relevance?.latency.p99} ` +
      (points.length > 1 ? `relevance_rps_within_p99_${p99Goal}ms=${best ? best.r.requests.average.toFixed(0) : 0} relevance_conns=${best?.conns ?? 0} ` : '') +
      `time_rps=${time?.requests.average.toFixed(0)} time_p99_ms=${time?.latency.p99} sources_p99_under_range_ms=${sources?.latency.p99} ` +
      `queries_per_pass=${(b.queries / Math.max(1, b.passes)).toFixed(1)}`,
  );
}
