/**
 * Cluster mode against a single node, in one run on one box: three real `nats-server`
 * processes with JetStream (test/helpers/nats-cluster.ts), a single node and two cluster nodes
 * on the same corpus (BENCH_CHUNKS, default 60,000 chunks; bench/corpus.ts).
 *
 * - overhead_p50 / overhead_p99: /v1/match latency on cluster node a ÷ on the single node, the
 *   same queries (order=time at ~300 matches and order=relevance top 50, near and off-topic
 *   vectors, each class reported), one at a time through Fastify's inject.
 * - lag_p99_ms: while node a imports the corpus through the revision log, how long after the
 *   log acknowledged a revision node b, a process of its own (test/helpers/cluster-node.ts),
 *   had applied it: node a's acknowledgements and node b's applied positions, each with its
 *   clock time, sampled every millisecond.
 * - catchup_s_per_million: a new empty node's time to apply the whole log and index it, per
 *   million chunks.
 * - The import itself: lines/s through the log (node a) against the single node's import.
 * - Shards: the same queries through a node holding half the corpus's months (CLUSTER_SHARDS),
 *   each vector query answered by its own group here and by the other group's node, a process
 *   of its own (test/helpers/cluster-node.ts), and merged, against the single node:
 *   `cluster-shards: overhead_p50=… overhead_p99=…`.
 * - The wallet: metered calls' debits a second (Billing.charge, 64 in flight a node) on the
 *   single node's journal and through the wallet log: one account on one node, one account
 *   charged by two nodes at once (every lost slot computed again), 100 accounts on one node;
 *   and a debit's latency. Printed as a second line, `cluster-wallet: …`.
 *
 * Timings are medians or percentiles of this run; only the ratios compare.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/http/app.js';
import { openService, type Service } from '../src/service.js';
import { perturb, randUnit } from '../test/helpers/corpus.js';
import { startNatsCluster } from '../test/helpers/nats-cluster.js';
import { makeQuery, vec } from '../test/helpers/oracle.js';
import { Rng } from '../test/helpers/rng.js';
import { benchCorpus, envInt } from './corpus.js';

const CHUNKS = envInt('BENCH_CHUNKS', 60_000);
const QUERIES = envInt('BENCH_QUERIES', 60);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

interface Node {
  service: Service;
  app: Awaited<ReturnType<typeof buildApp>>;
  headers: Record<string, string>;
}

async function node(dir: string, env: Record<string, string>): Promise<Node> {
  const service = await openService(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'warn', GATEWAY_HOST: 'gw.bench', ...env }));
  service.startBackground();
  const app = await buildApp(service);
  await app.ready();
  const key = service.keys.create({ scheme: 'gateway', name: 'bench' });
  return { service, app, headers: { 'x-gateway-key': key.secret, 'x-gateway-host': 'gw.bench', 'content-type': 'application/json' } };
}

const close = async (n: Node) => {
  await n.app.close();
  await n.service.close();
};

console.log(`bench:cluster: ${CHUNKS} chunks, ${QUERIES} queries a class`);
const { corpus, file, dir, chunks } = benchCorpus(CHUNKS, 11);
console.log(`corpus: ${corpus.revisions.length} revisions, ${chunks} chunks`);
const nats = await startNatsCluster(3);
const clusterEnv = (id: string) => ({ CLUSTER_NATS_URLS: nats.urls.join(','), CLUSTER_NODE_ID: id });

try {
  // ---- import: the single node, then node a through the log while node b follows ----
  const single = await node(path.join(dir, 'single'), {});
  let t0 = performance.now();
  await single.service.importFile(file);
  const singleImportS = (performance.now() - t0) / 1000;

  const a = await node(path.join(dir, 'a'), clusterEnv('a'));
  const applied: { t: number; seq: number }[] = [];
  const b = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/cluster-node.ts'], {
    env: { ...process.env, DATA_DIR: path.join(dir, 'b'), ...clusterEnv('b') },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let partial = '';
  b.stdout.setEncoding('utf8').on('data', (d: string) => {
    const lines = (partial + d).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      const m = /^applied (\d+) ([\d.]+)$/.exec(line);
      if (m) applied.push({ seq: Number(m[1]), t: Number(m[2]) });
    }
  });
  const bApplied = () => applied.at(-1)?.seq ?? -1;
  while (bApplied() < 0) await new Promise((r) => setTimeout(r, 20));
  const acked: { t: number; seq: number }[] = [];
  const now = () => performance.timeOrigin + performance.now();
  const sampler = setInterval(() => acked.push({ t: now(), seq: a.service.cluster!.revisions.lastSeq }), 1);
  t0 = performance.now();
  await a.service.importFile(file);
  const clusterImportS = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  const total = a.service.cluster!.revisions.lastSeq;
  while (bApplied() < total) await new Promise((r) => setTimeout(r, 5));
  b.kill('SIGTERM');
  // For each sample of what the log had acknowledged, how long until node b had applied as much.
  const lags: number[] = [];
  let j = 0;
  for (const s of acked) {
    if (s.seq === 0) continue;
    while (j < applied.length && (applied[j].seq < s.seq || applied[j].t < s.t)) j++;
    lags.push(j < applied.length ? applied[j].t - s.t : now() - s.t);
  }
  console.log(
    `import: single node ${(corpus.revisions.length / singleImportS).toFixed(0)} lines/s (${singleImportS.toFixed(1)} s); ` +
      `through the log ${(corpus.revisions.length / clusterImportS).toFixed(0)} lines/s (${clusterImportS.toFixed(1)} s), node a and node b applying beside it`,
  );
  console.log(
    `replication lag (acknowledged by the log -> applied by node b): p50 ${pct(lags, 50).toFixed(1)} ms, p99 ${pct(lags, 99).toFixed(1)} ms, ${lags.length} samples`,
  );

  // ---- queries: the same on the single node and on cluster node a ----
  await a.service.catchUp();
  // Sealed as the single node's import left its engine: the queries compare steady states.
  await a.service.maintenance.flush();
  const rng = new Rng(99);
  const classes: Record<string, () => number[]> = {
    'time, near': () => vec(makeQuery(corpus, rng, 'story')),
    'relevance, near': () => vec(makeQuery(corpus, rng, 'topic')),
    'relevance, off-topic': () => vec(perturb(rng, randUnit(rng), 0.1)),
  };
  const bodies: { cls: string; body: string }[] = [];
  for (const [cls, q] of Object.entries(classes)) {
    for (let i = 0; i < QUERIES; i++) {
      const vector = q();
      bodies.push({
        cls,
        body: JSON.stringify(cls.startsWith('time') ? { vector, min_score: 0.55, limit: 100 } : { vector, order: 'relevance', limit: 50, min_score: -1 }),
      });
    }
  }
  const timeOne = async (n: Node, body: string) => {
    const t = performance.now();
    const res = await n.app.inject({ method: 'POST', url: '/v1/match', headers: n.headers, payload: body });
    if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
    return performance.now() - t;
  };
  // Warm both, then alternate: each query on one node then the other.
  for (const { body } of bodies.slice(0, 20)) {
    await timeOne(single, body);
    await timeOne(a, body);
  }
  const by = new Map<string, { single: number[]; cluster: number[] }>();
  for (const { cls, body } of bodies) {
    const m = by.get(cls) ?? { single: [], cluster: [] };
    m.single.push(await timeOne(single, body));
    m.cluster.push(await timeOne(a, body));
    by.set(cls, m);
  }
  const all = { single: [...by.values()].flatMap((m) => m.single), cluster: [...by.values()].flatMap((m) => m.cluster) };
  console.log(`\n${'class'.padEnd(22)} ${'single p50'.padStart(11)} ${'cluster p50'.padStart(12)} ${'single p99'.padStart(11)} ${'cluster p99'.padStart(12)}`);
  for (const [cls, m] of [...by, ['all', all] as const]) {
    console.log(
      `${cls.padEnd(22)} ${pct(m.single, 50).toFixed(2).padStart(9)}ms ${pct(m.cluster, 50).toFixed(2).padStart(10)}ms ${pct(m.single, 99).toFixed(2).padStart(9)}ms ${pct(m.cluster, 99).toFixed(2).padStart(10)}ms`,
    );
  }

  // ---- a new empty node catching up ----
  t0 = performance.now();
  const c = await node(path.join(dir, 'c'), clusterEnv('c'));
  while (c.service.cluster!.applier!.applied < total) await new Promise((r) => setTimeout(r, 5));
  await c.service.catchUp();
  await c.service.maintenance.flush();
  const catchupS = (performance.now() - t0) / 1000;
  console.log(`\nnew node: applied and indexed ${total} revisions (${c.service.store.nextLabel()} chunks) in ${catchupS.toFixed(1)} s`);

  // ---- shards: two groups, each holding half the months' vectors ----
  const months = [...new Set(corpus.revisions.map((r) => r.publishedAt.slice(0, 7)))].sort();
  const split = months[Math.floor(months.length / 2) - 1];
  const after = new Date(`${split}-01T00:00:00Z`);
  after.setUTCMonth(after.getUTCMonth() + 1);
  const s1 = await node(path.join(dir, 's1'), { ...clusterEnv('s1'), CLUSTER_SHARDS: `..${split}` });
  const s2 = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/cluster-node.ts'], {
    env: { ...process.env, DATA_DIR: path.join(dir, 's2'), ...clusterEnv('s2'), CLUSTER_SHARDS: `${after.toISOString().slice(0, 7)}..` },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let s2Applied = -1;
  s2.stdout.setEncoding('utf8').on('data', (d: string) => {
    for (const m of d.matchAll(/applied (\d+) /g)) s2Applied = Number(m[1]);
  });
  while (s1.service.cluster!.applier!.applied < total || !s1.service.cluster!.applier!.caughtUp || s2Applied < total)
    await new Promise((r) => setTimeout(r, 20));
  await s1.service.catchUp();
  await s1.service.maintenance.flush();
  // Both groups known to s1 (each node reports every 2 s).
  for (;;) {
    const res = await s1.app.inject({ method: 'POST', url: '/v1/match', headers: s1.headers, payload: bodies[0].body });
    if (res.statusCode === 200) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const sharded = { single: [] as number[], cluster: [] as number[] };
  for (const { body } of bodies.slice(0, 20)) await timeOne(s1, body);
  for (const { body } of bodies) {
    sharded.single.push(await timeOne(single, body));
    sharded.cluster.push(await timeOne(s1, body));
  }
  console.log(
    `\nshards: two groups (..${split} and after), every query through s1: p50 ${pct(sharded.cluster, 50).toFixed(2)} ms against ${pct(sharded.single, 50).toFixed(2)} ms ` +
      `on the single node, p99 ${pct(sharded.cluster, 99).toFixed(2)} against ${pct(sharded.single, 99).toFixed(2)} ms`,
  );

  // ---- the wallet: debits a second ----
  const charging = async (n: Node, accounts: string[], total: number, tag: string) => {
    const latencies: number[] = [];
    let next = 0;
    const t = performance.now();
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        for (let i = next++; i < total; i = next++) {
          const t1 = performance.now();
          await n.service.billing.charge(accounts[i % accounts.length], 'sources', { requestId: `${tag}-${i}`, keyId: 'bench' });
          latencies.push(performance.now() - t1);
        }
      }),
    );
    return { perS: total / ((performance.now() - t) / 1000), latencies };
  };
  const CHARGES = envInt('BENCH_CHARGES', 20_000);
  const rich = async (n: Node) => {
    const acct = await n.service.billing.createAccountShared('bench');
    await n.service.billing.buyShared(acct.id, 10_000_000);
    // Cluster nodes know the account once their journal has it from the wallet log.
    for (const m of [a, c]) while (n !== single && !m.service.billing.subscription(acct.id, 'sources')) await new Promise((r) => setTimeout(r, 10));
    return acct.id;
  };
  const singleWallet = await charging(single, [await rich(single)], CHARGES, 's');
  const oneAccount = await charging(a, [await rich(a)], CHARGES, 'a1');
  const shared = await rich(a);
  const t2 = performance.now();
  const [onA, onC] = await Promise.all([charging(a, [shared], CHARGES / 2, 'a2'), charging(c, [shared], CHARGES / 2, 'c2')]);
  const twoNodes = CHARGES / ((performance.now() - t2) / 1000);
  const many: string[] = [];
  for (let i = 0; i < 100; i++) many.push(await rich(a));
  const manyAccounts = await charging(a, many, CHARGES, 'a3');
  const wLat = [...oneAccount.latencies, ...onA.latencies, ...onC.latencies, ...manyAccounts.latencies];
  console.log(
    `\nwallet: single node ${singleWallet.perS.toFixed(0)} debits/s (p50 ${pct(singleWallet.latencies, 50).toFixed(1)} ms); through the wallet log: ` +
      `one account ${oneAccount.perS.toFixed(0)}/s, one account on two nodes ${twoNodes.toFixed(0)}/s, 100 accounts ${manyAccounts.perS.toFixed(0)}/s ` +
      `(p50 ${pct(wLat, 50).toFixed(1)} ms, p99 ${pct(wLat, 99).toFixed(1)} ms)`,
  );

  console.log(
    `\ncluster: overhead_p50=${(pct(all.cluster, 50) / pct(all.single, 50)).toFixed(2)} overhead_p99=${(pct(all.cluster, 99) / pct(all.single, 99)).toFixed(2)} ` +
      `lag_p99_ms=${pct(lags, 99).toFixed(0)} catchup_s_per_million=${((catchupS * 1e6) / c.service.store.nextLabel()).toFixed(0)}`,
  );
  console.log(
    `cluster-wallet: single_debits_per_s=${singleWallet.perS.toFixed(0)} one_account_debits_per_s=${oneAccount.perS.toFixed(0)} ` +
      `two_nodes_one_account_debits_per_s=${twoNodes.toFixed(0)} many_accounts_debits_per_s=${manyAccounts.perS.toFixed(0)} ` +
      `debit_p50_ms=${pct(wLat, 50).toFixed(1)} debit_p99_ms=${pct(wLat, 99).toFixed(1)}`,
  );
  console.log(
    `cluster-shards: overhead_p50=${(pct(sharded.cluster, 50) / pct(sharded.single, 50)).toFixed(2)} overhead_p99=${(pct(sharded.cluster, 99) / pct(sharded.single, 99)).toFixed(2)}`,
  );
  s2.kill('SIGTERM');
  for (const n of [single, a, c, s1]) await close(n);
} finally {
  await nats.stop();
  // Its nodes' data directories (~4 GB at the default size), as bench:import and bench:recall remove theirs.
  fs.rmSync(dir, { recursive: true, force: true });
}
