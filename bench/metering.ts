/**
 * What metering costs a cheap call: autocannon against GET /v1/sources (product `sources`, 1
 * credit a call) and against the very same route unmetered, in one run, on one server. The
 * unmetered route is /v1/sources registered a second time, under the prefix /bench, by
 * `sourcesRoutes` itself with `product` dropped from its config: the same handler, response
 * schema, authentication (`auth: true`: a Bearer key is verified, the LMDB snapshot renewed)
 * and global hooks (the metering hooks run and return at once). So the difference between the
 * rows is the metering path alone: authorise, rate limit, admit, charge (a journal append,
 * committed before the handler runs), the refund check and the credit / RateLimit headers.
 *
 * Rows:
 * 1. unmetered (baseline): /bench/v1/sources.
 * 2. metered, operator keys: /v1/sources with BENCH_ACCOUNTS Bearer keys of the operator
 *    account, recorded in the ledger at price 0 (no wallet, no rate limit).
 * 3. metered, customer keys: /v1/sources with the keys of BENCH_ACCOUNTS (default 2,000) real
 *    accounts, each on the `mega` plan (20 requests/s) with 10,000,000 purchased credits, the
 *    requests spread round-robin over the keys so the plans' rate limits (20/s × accounts)
 *    stay above what the server can answer: every call is authorised against its
 *    subscription, rate-limited, debited from its wallet. A 429 in this row means the
 *    accounts were too few for the rate reached: raise BENCH_ACCOUNTS.
 * Every row sends requests rotating over as many keys (the unmetered row over the customer
 * keys), so the load generator and the key check do the same work in every row: one key
 * used over and over would stay in the CPU's caches and flatter its row.
 *
 * How it measures, on a machine whose neighbours move every absolute number by ±25%:
 * - BENCH_ROUNDS (default 5) rounds; a round runs each row for BENCH_DURATION seconds (default
 *   3) at each connection count of BENCH_CONNECTIONS (default 16,64,256), the rows interleaved
 *   and their order rotated each round, and every ratio is the median of the ratios within
 *   rounds (slices seconds apart, which the neighbours' load moves together);
 * - beside req/s and latency, each row shows the server's CPU per request (its event-loop
 *   thread, and every other thread: lmdb's writer, the fold worker) and how busy the event
 *   loop was: below ~95% a row is limited by latency (waiting for its commits' fsync), not
 *   by the server;
 * - a route's throughput is its capacity: its best req/s over the connection counts. The
 *   headline `metered_vs_unmetered` is the median over rounds of the customer row's capacity
 *   divided by the unmetered row's in the same round (each round's ratio is printed, and the
 *   ratio at each connection count).
 * The server runs in a child process (as in bench/load.ts), so autocannon's own work stays off
 * its event loop; both share the machine's cores. A store of 8 sources (24 articles) is seeded
 * so the route returns rows. Afterwards the ledger is checked against what was answered:
 * debits recorded vs 2xx responses (a request in flight when a slice ends is charged but not
 * counted by autocannon), and the credits the wallets lost. Asserts nothing about timings.
 * BENCH_CPU_PROF=<dir> writes the server's V8 CPU profile there.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/http/app.js';
import { sourcesRoutes } from '../src/http/routes/sources.js';
import { OPERATOR } from '../src/platform/index.js';
import { openService } from '../src/service.js';
import type { RevisionInput } from '../src/store/index.js';
import { forkServer } from './child.js';
import { envInt } from './corpus.js';

const CREDITS = 10_000_000;
const UNMETERED = '/bench/v1/sources';
const METERED = '/v1/sources';

interface Ready {
  port: number;
  operatorSecrets: string[];
  customerSecrets: string[];
  setupMs: number;
}
interface Counts {
  operatorDebits: number;
  customerDebits: number;
  refunds: number;
  creditsSpent: number;
}

if (process.argv[2] === 'serve') {
  // The child: one service and app, both routes, the keys; answers `counts` and `close`.
  const dir = process.argv[3];
  const accounts = Number(process.argv[4]);
  const t0 = performance.now();
  const service = await openService(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent' }));
  const names = ['Daily Ledger', 'Wire One', 'Harbour Post', 'Morning Star', 'City Desk', 'Valley Times', 'North Courier', 'Evening Standard'];
  const revisions: RevisionInput[] = names.flatMap((source, s) =>
    Array.from({ length: 3 }, (_, i) => ({
      url: `https://bench.example/${s}/article-${i}`,
      source,
      sourceHomepage: `https://bench.example/${s}/`,
      title: `Headline ${i} from ${source}`,
      body: `Snippet ${i}.`,
      text: `The text of article ${i} from ${source}. It has two sentences.`,
      publishedAt: 1_767_225_600 + (s * 3 + i) * 60,
      chunks: [],
    })),
  );
  const written = service.store.writeRevisions(revisions).filter((o) => o.status === 'new').length;
  if (written !== revisions.length) throw new Error(`seeded ${written} of ${revisions.length} revisions`);

  const app = await buildApp(service);
  // The same route again, unmetered: sourcesRoutes registers it, through a view of the scope
  // whose `get` drops `product` from the route config (auth stays).
  await app.register(
    async (scope) => {
      const unmetered = new Proxy(scope, {
        get(target, prop, receiver) {
          if (prop !== 'get') return Reflect.get(target, prop, receiver);
          return (url: string, opts: { config?: Record<string, unknown> }) => {
            const { product: _product, ...config } = opts.config ?? {};
            return (target.get as (url: string, opts: object) => FastifyInstance)(url, { ...opts, config });
          };
        },
      });
      sourcesRoutes(unmetered, service);
    },
    { prefix: '/bench' },
  );

  const operatorSecrets = Array.from(
    { length: Math.max(1, accounts) },
    (_, i) => service.keys.create({ scheme: 'bearer', name: `bench-operator-${i}` }).secret,
  );
  const customerIds: string[] = [];
  const customerSecrets: string[] = [];
  // One write transaction for all the accounts (each call nests its own): setup in
  // milliseconds, not one synchronous commit per step.
  service.store.root.transactionSync(() => {
    for (let i = 0; i < accounts; i++) {
      const { id } = service.billing.createAccount(`bench-${i}`);
      service.billing.buy(id, CREDITS);
      service.billing.subscribe(id, 'sources', 'mega');
      customerIds.push(id);
      customerSecrets.push(service.keys.create({ scheme: 'bearer', name: `bench-${i}`, account: id }).secret);
    }
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;

  process.on('message', (m: string) => {
    if (m === 'counts') {
      service.store.refresh();
      const debits = (account: string) => service.billing.entries(account).filter((e) => e.kind === 'debit').length;
      let customerDebits = 0;
      let refunds = 0;
      let creditsSpent = 0;
      for (const id of customerIds) {
        const entries = service.billing.entries(id);
        customerDebits += entries.filter((e) => e.kind === 'debit').length;
        refunds += entries.filter((e) => e.kind === 'refund').length;
        creditsSpent += CREDITS + 250 - service.billing.balance(id);
      }
      const counts: Counts = { operatorDebits: debits(OPERATOR), customerDebits, refunds, creditsSpent };
      process.send!(counts);
    } else if (m === 'close') {
      void app
        .close()
        .then(() => service.close())
        .then(() => process.exit(0));
    }
  });
  const ready: Ready = { port, operatorSecrets, customerSecrets, setupMs: performance.now() - t0 };
  process.send!(ready);
} else {
  const levels = (process.env.BENCH_CONNECTIONS ?? '16,64,256').split(',').map(Number);
  if (levels.some((c) => !Number.isInteger(c) || c < 1))
    throw new Error(`BENCH_CONNECTIONS: a comma-separated list of connection counts, got ${process.env.BENCH_CONNECTIONS}`);
  const duration = envInt('BENCH_DURATION', 3);
  const rounds = envInt('BENCH_ROUNDS', 5);
  const accounts = envInt('BENCH_ACCOUNTS', 2000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-bench-metering-'));
  const { child, ask } = forkServer(fileURLToPath(import.meta.url), ['serve', dir, String(accounts)]);
  try {
    const ready = await ask<Ready>(null);
    const base = `http://127.0.0.1:${ready.port}`;
    console.log(
      `server on 127.0.0.1:${ready.port}: set up with ${accounts} accounts in ${ready.setupMs.toFixed(0)} ms; ${os.availableParallelism()} cores shared with autocannon`,
    );

    // Both routes answer the same body; the metered one charges.
    const get = (p: string, secret: string) => fetch(base + p, { headers: { authorization: `Bearer ${secret}` } });
    const plain = await get(UNMETERED, ready.operatorSecrets[0]);
    const charged = await get(METERED, ready.customerSecrets[0] ?? ready.operatorSecrets[0]);
    const [plainBody, chargedBody] = [await plain.text(), await charged.text()];
    if (plain.status !== 200 || charged.status !== 200 || plainBody !== chargedBody) {
      throw new Error(`the routes differ: ${plain.status} ${plainBody.slice(0, 200)} vs ${charged.status} ${chargedBody.slice(0, 200)}`);
    }
    if (plain.headers.has('x-credits-charged') || !charged.headers.has('x-credits-charged'))
      throw new Error('the unmetered route is metered, or the metered one is not');
    console.log(
      `GET ${METERED} and ${UNMETERED}: 200, the same body (${(JSON.parse(plainBody) as { count: number }).count} sources); x-credits-charged ${charged.headers.get('x-credits-charged')} on the metered one only`,
    );

    type Result = Awaited<ReturnType<typeof autocannon>>;
    /** One slice: autocannon's result and the server's CPU over it. */
    interface Slice {
      rps: number;
      p50: number;
      p99: number;
      failed: number;
      /** Server CPU µs per request answered: the event-loop thread, and all other threads. */
      mainUs: number;
      otherUs: number;
      /** The event-loop thread's CPU time over the slice's wall time. */
      busy: number;
    }
    interface Row {
      name: string;
      path: string;
      secrets: string[];
      /** Slices by connection count, one a round. */
      slices: Map<number, Slice[]>;
      /** 2xx of every slice and warm-up: what the ledger should hold. */
      ok: number;
    }
    const customers = ready.customerSecrets.length > 0 ? ready.customerSecrets : ready.operatorSecrets;
    const row = (name: string, p: string, secrets: string[]): Row => ({ name, path: p, secrets, slices: new Map(levels.map((c) => [c, []])), ok: 0 });
    const rows: Row[] = [
      row(`unmetered ${UNMETERED} (baseline)`, UNMETERED, customers),
      row(`metered ${METERED}, ${ready.operatorSecrets.length} operator keys`, METERED, ready.operatorSecrets),
    ];
    if (accounts > 0) rows.push(row(`metered ${METERED}, ${accounts} customer keys`, METERED, ready.customerSecrets));
    const [unmetered, operator] = rows;
    const customer = rows[2];
    if (customer) customer.ok += 1; // the check above

    // The server's CPU, read from /proc (Linux): its event-loop thread and the whole process.
    const ticks = (file: string): number => {
      const f = fs.readFileSync(file, 'utf8');
      const x = f.slice(f.lastIndexOf(')') + 2).split(' ');
      return Number(x[11]) + Number(x[12]); // utime + stime, in clock ticks
    };
    const hasProc = fs.existsSync(`/proc/${child.pid}/task/${child.pid}/stat`);
    const cpu = () =>
      hasProc ? { main: ticks(`/proc/${child.pid}/task/${child.pid}/stat`), all: ticks(`/proc/${child.pid}/stat`), at: performance.now() } : null;
    const TICK_US = 1e6 / 100; // USER_HZ

    /** One autocannon run; each request carries the next key of `secrets`, round-robin over all connections. */
    const cannon = async (r: Row, connections: number, seconds: number): Promise<Slice> => {
      let i = 0;
      const before = cpu();
      const res: Result = await autocannon({
        url: base,
        connections,
        pipelining: 1,
        duration: seconds,
        requests: [
          {
            method: 'GET',
            path: r.path,
            setupRequest: (req: autocannon.Request) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${r.secrets[i++ % r.secrets.length]}` } }),
          },
        ],
      });
      const after = cpu();
      r.ok += res['2xx'];
      const n = Math.max(1, res.requests.total);
      const main = before && after ? (after.main - before.main) * TICK_US : Number.NaN;
      const all = before && after ? (after.all - before.all) * TICK_US : Number.NaN;
      return {
        rps: res.requests.average,
        p50: res.latency.p50,
        p99: res.latency.p99,
        failed: res.non2xx + res.errors + res.timeouts,
        mainUs: main / n,
        otherUs: (all - main) / n,
        busy: before && after ? main / 1e6 / ((after.at - before.at) / 1000) : Number.NaN,
      };
    };

    const top = Math.max(...levels);
    for (const r of rows) await cannon(r, top, 2); // warm-up: JIT, LMDB pages, sockets, the fold worker
    // A round measures every row at every connection count, so each round's ratios compare
    // slices taken within seconds of each other: the neighbours' load moves them together.
    for (let k = 0; k < rounds; k++) {
      for (const c of levels) {
        const order = rows.map((_, i) => rows[(i + k) % rows.length]);
        const line: string[] = [];
        for (const r of order) {
          const s = await cannon(r, c, duration);
          r.slices.get(c)!.push(s);
          line.push(
            `${r === unmetered ? 'unmetered' : r === operator ? 'operator' : 'customers'} ${s.rps.toFixed(0)}${s.failed ? ` (${s.failed} failed)` : ''}`,
          );
        }
        console.log(`  round ${k + 1}/${rounds}, ${String(c).padStart(3)} connections: ${line.join(', ')} req/s`);
      }
    }
    const counts = await ask<Counts>('counts');
    await ask('close').catch(() => undefined);

    const median = (xs: number[]): number => {
      const s = [...xs].sort((a, b) => a - b);
      return s.length === 0 ? Number.NaN : s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    };
    const med = (r: Row, c: number, f: (s: Slice) => number) => median(r.slices.get(c)!.map(f));
    /** The median over rounds of this row's req/s divided by the unmetered row's in the same round. */
    const ratio = (r: Row, c: number) => median(r.slices.get(c)!.map((s, k) => s.rps / unmetered.slices.get(c)![k].rps));
    /** A row's capacity in round k: its best req/s over the connection counts. */
    const capacityIn = (r: Row, k: number) => Math.max(...levels.map((c) => r.slices.get(c)![k].rps));
    const capacity = (r: Row) => median(Array.from({ length: rounds }, (_, k) => capacityIn(r, k)));
    /** The median over rounds of the row's capacity divided by the unmetered row's in the same round. */
    const capacityRatio = (r: Row) => median(Array.from({ length: rounds }, (_, k) => capacityIn(r, k) / capacityIn(unmetered, k)));
    const f1 = (x: number) => (Number.isNaN(x) ? '-' : x.toFixed(1));

    console.log(
      `\nmetering on GET ${METERED} (medians of ${rounds} interleaved rounds of ${duration} s; pipelining 1; server and autocannon sharing ${os.availableParallelism()} cores)`,
    );
    console.log(
      `${'conns'.padStart(5)}  ${'route'.padEnd(44)} ${'req/s'.padStart(7)} ${'p50 ms'.padStart(6)} ${'p99 ms'.padStart(6)} ${'fail'.padStart(5)} ${'loop µs'.padStart(8)} ${'other µs'.padStart(8)} ${'busy'.padStart(5)}  ${'÷ unmetered'.padStart(11)}`,
    );
    for (const c of levels) {
      for (const r of rows) {
        const failed = r.slices.get(c)!.reduce((a, s) => a + s.failed, 0);
        console.log(
          `${String(c).padStart(5)}  ${r.name.padEnd(44)} ${med(r, c, (s) => s.rps)
            .toFixed(0)
            .padStart(7)} ${String(med(r, c, (s) => s.p50)).padStart(6)} ${String(med(r, c, (s) => s.p99)).padStart(6)} ${String(failed).padStart(5)} ` +
            `${f1(med(r, c, (s) => s.mainUs)).padStart(8)} ${f1(med(r, c, (s) => s.otherUs)).padStart(8)} ${`${(med(r, c, (s) => s.busy) * 100).toFixed(0)}%`.padStart(5)}  ${`${ratio(r, c).toFixed(3)}x`.padStart(11)}`,
        );
      }
    }
    console.log(
      "(loop µs / other µs: server CPU per request on its event-loop thread / on every other thread; busy: the event-loop thread's share of wall time)",
    );
    console.log(`${'capacity'.padStart(5)}  ${'(median over rounds of the best req/s)'.padEnd(44)}`);
    for (const r of rows)
      console.log(
        `${''.padStart(5)}  ${r.name.padEnd(44)} ${capacity(r).toFixed(0).padStart(7)}${' '.repeat(51)}${`${capacityRatio(r).toFixed(3)}x`.padStart(11)}`,
      );

    // Every slice and warm-up ends with up to its connections' requests charged but not counted.
    const slack = `in flight when a slice ended: charged, not counted; at most ${levels.reduce((a, c) => a + c * rounds, top)}`;
    console.log(`ledger: operator debits ${counts.operatorDebits} for ${operator.ok} 2xx answered (${slack})`);
    if (customer) {
      console.log(
        `ledger: customer debits ${counts.customerDebits} for ${customer.ok} 2xx answered (${slack}); ${counts.refunds} refunds; wallets spent ${counts.creditsSpent} credits`,
      );
    }
    const metered = customer ?? operator;
    const at = levels.map((c) => `at_${c}=${ratio(metered, c).toFixed(3)}`).join(' ');
    console.log(
      `metering: metered_vs_unmetered=${capacityRatio(metered).toFixed(3)} metered_rps=${capacity(metered).toFixed(0)} unmetered_rps=${capacity(unmetered).toFixed(0)} ` +
        `operator_vs_unmetered=${capacityRatio(operator).toFixed(3)} rounds=${Array.from({ length: rounds }, (_, k) => (capacityIn(metered, k) / capacityIn(unmetered, k)).toFixed(2)).join(',')} ${at} ` +
        `metered_loop_us=${f1(med(metered, top, (s) => s.mainUs))} unmetered_loop_us=${f1(med(unmetered, top, (s) => s.mainUs))} metered_other_us=${f1(med(metered, top, (s) => s.otherUs))}`,
    );
  } finally {
    if (child.exitCode === null) child.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
