/**
 * What metering costs a cheap call: autocannon against GET /v1/sources (product `sources`, 1
 * credit a call) and against the very same route unmetered, in one run, on one server. The
 * unmetered route is /v1/sources registered a second time, under the prefix /bench, by
 * `sourcesRoutes` itself with `product` dropped from its config: the same handler, response
 * schema, authentication (`auth: true`: a Bearer key is verified, the LMDB snapshot renewed)
 * and global hooks (the metering hooks run and return at once). So the difference between the
 * rows is the metering path alone: authorise, rate limit, admit, charge (one LMDB write
 * transaction with its ledger entry), the refund check and the credit / RateLimit headers.
 *
 * Rows (each BENCH_DURATION seconds, default 5, BENCH_CONNECTIONS connections, default 16,
 * pipelining 1, after a 1 s warm-up of each):
 * 1. unmetered (baseline): /bench/v1/sources.
 * 2. metered, operator key: /v1/sources with a Bearer key of the operator account, recorded in
 *    the ledger at price 0 (a write transaction a call, no wallet, no rate limit).
 * 3. metered, customer keys: /v1/sources with the keys of BENCH_ACCOUNTS (default 1,000) real
 *    accounts, each on the `mega` plan (20 requests/s, the highest credit plan) with 10,000,000
 *    purchased credits, the requests spread round-robin over the keys so the plans' rate
 *    limits (20/s × accounts) stay above what the server can answer: every call is
 *    authorised against its subscription, rate-limited, debited from its wallet. A 429 in
 *    this row means the accounts were too few for the rate reached: raise BENCH_ACCOUNTS.
 * Every run sends the same Authorization-rotating requests (the unmetered row rotates over
 * the customer keys too), so the load generator does the same work in every row.
 *
 * The runs alternate (BENCH_ROUNDS rounds, default 2, each round's order reversed from the
 * last) and the best run of each row counts: this machine's neighbours are noisy. The server
 * runs in a child process (as in bench/load.ts), so autocannon's own work does not sit on the
 * server's event loop; both share the machine's cores, and a store of 8 sources (24 articles)
 * is seeded so the route returns rows. Afterwards the ledger is checked against what was
 * answered: debits recorded vs 2xx responses (a request still in flight when a run ends is
 * charged but not counted by autocannon, so debits may exceed 2xx by up to the connections a
 * run), and the credits the wallets lost.
 *
 * Prints a table (last column: req/s relative to the unmetered row) and `metering: ...`, with
 * `metered_vs_unmetered` for the customer row (the operator's when BENCH_ACCOUNTS=0). It
 * asserts nothing about timings. BENCH_CPU_PROF=<dir> writes the server's V8 CPU profile there.
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
import { OPERATOR } from '../src/platform/billing.js';
import { openService } from '../src/service.js';
import type { RevisionInput } from '../src/store/index.js';
import { forkServer } from './child.js';
import { envInt } from './corpus.js';

const CREDITS = 10_000_000;
const UNMETERED = '/bench/v1/sources';
const METERED = '/v1/sources';

interface Ready {
  port: number;
  operatorSecret: string;
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

  const operatorSecret = service.keys.create({ scheme: 'bearer', name: 'bench-operator' }).secret;
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

  const debits = (account: string) => service.billing.entries(account).filter((e) => e.kind === 'debit').length;
  process.on('message', (m: string) => {
    if (m === 'counts') {
      service.store.refresh();
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
  const ready: Ready = { port, operatorSecret, customerSecrets, setupMs: performance.now() - t0 };
  process.send!(ready);
} else {
  const connections = envInt('BENCH_CONNECTIONS', 16);
  const duration = envInt('BENCH_DURATION', 5);
  const rounds = envInt('BENCH_ROUNDS', 2);
  const accounts = envInt('BENCH_ACCOUNTS', 1000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-bench-metering-'));
  const { child, ask } = forkServer(fileURLToPath(import.meta.url), ['serve', dir, String(accounts)]);
  try {
    const ready = await ask<Ready>(null);
    const base = `http://127.0.0.1:${ready.port}`;
    console.log(`server on 127.0.0.1:${ready.port}: set up with ${accounts} accounts in ${ready.setupMs.toFixed(0)} ms; ${os.availableParallelism()} cores shared with autocannon`);

    // Both routes answer the same body; the metered one charges.
    const get = (p: string, secret: string) => fetch(base + p, { headers: { authorization: `Bearer ${secret}` } });
    const plain = await get(UNMETERED, ready.operatorSecret);
    const charged = await get(METERED, ready.customerSecrets[0] ?? ready.operatorSecret);
    const [plainBody, chargedBody] = [await plain.text(), await charged.text()];
    if (plain.status !== 200 || charged.status !== 200 || plainBody !== chargedBody) {
      throw new Error(`the routes differ: ${plain.status} ${plainBody.slice(0, 200)} vs ${charged.status} ${chargedBody.slice(0, 200)}`);
    }
    if (plain.headers.has('x-credits-charged') || !charged.headers.has('x-credits-charged')) throw new Error('the unmetered route is metered, or the metered one is not');
    console.log(`GET ${METERED} and ${UNMETERED}: 200, the same body (${(JSON.parse(plainBody) as { count: number }).count} sources); x-credits-charged ${charged.headers.get('x-credits-charged')} on the metered one only`);

    type Result = Awaited<ReturnType<typeof autocannon>>;
    interface Row {
      name: string;
      path: string;
      secrets: string[];
      runs: Result[];
      /** 2xx of every run and warm-up: what the ledger should hold. */
      ok: number;
    }
    const customers = ready.customerSecrets.length > 0 ? ready.customerSecrets : [ready.operatorSecret];
    const rows: Row[] = [
      { name: `unmetered ${UNMETERED} (baseline)`, path: UNMETERED, secrets: customers, runs: [], ok: 0 },
      { name: `metered ${METERED}, operator key`, path: METERED, secrets: [ready.operatorSecret], runs: [], ok: 0 },
    ];
    if (accounts > 0) rows.push({ name: `metered ${METERED}, ${accounts} customer keys`, path: METERED, secrets: ready.customerSecrets, runs: [], ok: 0 });
    const [unmetered, operator] = rows;
    const customer = rows[2];
    if (customer) customer.ok += 1; // the check above
    /** One autocannon run; each request carries the next key of `secrets`, round-robin over all connections. */
    const cannon = async (row: Row, seconds: number) => {
      let i = 0;
      const r = await autocannon({
        url: base,
        connections,
        pipelining: 1,
        duration: seconds,
        requests: [{ method: 'GET', path: row.path, setupRequest: (req: autocannon.Request) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${row.secrets[i++ % row.secrets.length]}` } }) }],
      });
      row.ok += r['2xx'];
      return r;
    };
    const failed = (r: Result) => r.non2xx + r.errors + r.timeouts;

    for (const row of rows) await cannon(row, 1); // warm-up: JIT, LMDB pages, sockets
    for (let k = 0; k < rounds; k++) {
      for (const row of k % 2 === 0 ? rows : [...rows].reverse()) {
        const r = await cannon(row, duration);
        row.runs.push(r);
        console.log(`  round ${k + 1}/${rounds} ${row.name}: ${r.requests.average.toFixed(0)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms${failed(r) ? `, ${failed(r)} failed (non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts})` : ''}`);
      }
    }
    const counts = await ask<Counts>('counts');
    await ask('close').catch(() => undefined);

    const best = (row: Row) => row.runs.reduce((a, r) => (r.requests.average > a.requests.average ? r : a));
    const rps = (row: Row) => best(row).requests.average;
    const base0 = rps(unmetered);
    console.log(`\nmetering on GET ${METERED} (${duration} s a run, ${connections} connections, pipelining 1, best of ${rounds} alternating runs; server and autocannon sharing ${os.availableParallelism()} cores)`);
    console.log(`${'route'.padEnd(48)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'non-2xx'.padStart(8)}  ${'÷ unmetered'.padStart(11)}`);
    for (const row of rows) {
      const r = best(row);
      console.log(
        `${row.name.padEnd(48)} ${r.requests.average.toFixed(0).padStart(8)} ${String(r.latency.p50).padStart(7)} ${String(r.latency.p99).padStart(7)} ${String(failed(r)).padStart(8)}  ${`${(r.requests.average / base0).toFixed(3)}x`.padStart(11)}`,
      );
    }
    // A row's runs and its warm-up each end with up to `connections` requests charged but not counted.
    const slack = `in flight at a run's end: charged, not counted; at most ${connections * (rounds + 1)}`;
    console.log(`ledger: operator debits ${counts.operatorDebits} for ${operator.ok} 2xx answered (${slack})`);
    if (customer) {
      console.log(`ledger: customer debits ${counts.customerDebits} for ${customer.ok} 2xx answered (${slack}); ${counts.refunds} refunds; wallets spent ${counts.creditsSpent} credits`);
    }
    const perRound = (row: Row) => row.runs.map((r, k) => (r.requests.average / unmetered.runs[k].requests.average).toFixed(3)).join(' ');
    const metered = customer ?? operator;
    console.log(
      `metering: metered_vs_unmetered=${(rps(metered) / base0).toFixed(3)} metered_rps=${rps(metered).toFixed(0)} unmetered_rps=${base0.toFixed(0)} ` +
        `operator_vs_unmetered=${(rps(operator) / base0).toFixed(3)} operator_rps=${rps(operator).toFixed(0)} ` +
        `rounds=${perRound(metered)} metered_p99_ms=${best(metered).latency.p99} unmetered_p99_ms=${best(unmetered).latency.p99}`,
    );
  } finally {
    if (child.exitCode === null) child.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
