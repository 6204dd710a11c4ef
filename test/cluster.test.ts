/**
 * Cluster mode on a real NATS cluster: three `nats-server` processes with JetStream on
 * loopback (test/helpers/nats-cluster.ts), newsmatch nodes on them, and a single node beside
 * them on the same corpus. The nodes must answer as the single node does (exact order=time
 * paging, relevance top-k), a node must lose nothing acknowledged when a NATS server is killed
 * during an import, and a new empty node must catch up from the log and serve.
 */
import { spawn } from 'node:child_process';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RSS, rss2, startFeedServer } from './helpers/feed-server.js';
import { type Corpus, generateCorpus, perturb, randUnit, writeCorpusJsonl } from './helpers/corpus.js';
import { writeArrivals } from './helpers/monitors.js';
import { eventually, type NatsCluster, startNatsCluster } from './helpers/nats-cluster.js';
import { canonical, itemKey, makeQuery, oracle, pickMinScore, recallOf, vec } from './helpers/oracle.js';
import { Rng } from './helpers/rng.js';
import { cli } from './helpers/cli.js';
import { GATEWAY_HOST, type Harness, MEDIUM, makeTempDir, startHarness } from './helpers/service.js';
import { writeTinyModel } from './helpers/tiny-model.js';

let nats: NatsCluster;
let single: Harness;
let a: Harness;
let b: Harness;
let corpus: Corpus;
const nodes: Harness[] = [];

const clusterEnv = (node: string) => ({ CLUSTER_NATS_URLS: nats.urls.join(','), CLUSTER_NODE_ID: node });

/** Resolves once `h`'s store holds the log up to `seq` and its engine and catalog hold its store. */
async function caughtUp(h: Harness, seq: number, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  const applier = () => h.service.cluster!.applier!;
  while (applier().applied < seq) {
    if (Date.now() > deadline) throw new Error(`node stuck at ${applier().applied} of ${seq}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await h.service.catchUp();
}

beforeAll(async () => {
  nats = await startNatsCluster(3);
  single = await startHarness({ corpus: MEDIUM });
  corpus = single.corpus!;
  // Node a imports the corpus through the revision log; node b only reads it.
  a = await startHarness({ corpus: MEDIUM, background: true, env: clusterEnv('a') });
  b = await startHarness({ corpus: null, background: true, env: clusterEnv('b') });
  nodes.push(a, b);
  await caughtUp(b, a.service.cluster!.revisions.lastSeq);
}, 240_000);

afterAll(async () => {
  for (const h of [...nodes, single]) {
    const t = Date.now();
    await h?.close();
    // Said only when slow: a close is normally well under a second.
    if (Date.now() - t > 10_000) console.log(`closing node ${h?.env.CLUSTER_NODE_ID ?? 'single'} took ${Date.now() - t} ms`);
  }
  const t = Date.now();
  await nats?.stop();
  if (Date.now() - t > 10_000) console.log(`stopping the NATS servers took ${Date.now() - t} ms`);
}, 240_000);

describe('what the NATS servers guarantee', () => {
  // The revision log and the poll leases rely on the first (a subject or key created once); the
  // second is why they do not append with a non-zero last sequence expected (nats-server 2.9).
  it('of appends racing on three replicas, one creates an empty subject; a non-zero expected sequence lets several through', async () => {
    const clients = await Promise.all(nats.urls.map((u) => connect({ servers: u })));
    try {
      const jsm = await jetstreamManager(clients[0]);
      await jsm.streams.add({ name: 'RACE', subjects: ['race.>'], num_replicas: 3 });
      const js = clients.map((c) => jetstream(c));
      let empty = 0;
      let nonZero = 0;
      for (let i = 0; i < 200; i++) {
        const created = await Promise.allSettled(js.map((j, w) => j.publish(`race.e.${i}`, `${w}`, { expect: { lastSubjectSequence: 0 } })));
        if (created.filter((r) => r.status === 'fulfilled').length > 1) empty++;
        const { seq } = await js[0].publish(`race.n.${i}`, 'first');
        const next = await Promise.allSettled(js.map((j, w) => j.publish(`race.n.${i}`, `${w}`, { expect: { lastSubjectSequence: seq } })));
        if (next.filter((r) => r.status === 'fulfilled').length > 1) nonZero++;
      }
      expect(empty).toBe(0);
      // Not a requirement: a record of the server this was built against (when a later one fixes it, this says so).
      console.log(`nats-server: ${nonZero} of 200 races on a non-zero expected sequence let more than one append through`);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });
});

describe('two nodes on three NATS servers', () => {
  it('the import appended every revision once, and both stores hold them all', async () => {
    expect(a.importSummary!.newRevisions).toBe(single.importSummary!.newRevisions);
    expect(a.importSummary!.rejected).toBe(single.importSummary!.rejected);
    expect(a.importSummary!.unchanged).toBe(single.importSummary!.unchanged);
    expect(a.service.cluster!.revisions.lastSeq).toBe(corpus.revisions.length);
    for (const h of [a, b]) {
      expect(h.service.store.nextOrd()).toBe(corpus.revisions.length);
      expect(h.service.store.nextLabel()).toBe(single.service.store.nextLabel());
      expect(h.service.engine.nextLabel).toBe(single.service.engine.nextLabel);
    }
  });

  it('order=time pages the same rows on both nodes, with the same ids, and the oracle has them all', async () => {
    const rng = new Rng(31);
    for (const kind of ['topic', 'story', 'chunk'] as const) {
      const q = makeQuery(corpus, rng, kind);
      const min = pickMinScore(corpus, q, {}, 120);
      const body = { vector: vec(q), min_score: min, include_edits: true };
      const [pa, pb, ps] = [await a.pageAll(body, [37, 100]), await b.pageAll(body, [100, 37]), await single.pageAll(body, 100)];
      expect(pb.items.map((i) => i.id)).toEqual(pa.items.map((i) => i.id));
      // Ids are the log's (one per revision, the same on every node); the single node made its own.
      expect(canonical(pa.items)).toEqual(canonical(ps.items));
      const r = recallOf(corpus, q, { min_score: min, include_edits: true }, pa.items.map(itemKey));
      expect(r.recall, kind).toBe(1);
      expect(r.extraneous).toEqual([]);
    }
  });

  it('no query: both nodes walk every first revision newest-first, as the single node', async () => {
    const [pa, ps] = [await a.pageAll({}, 100), await single.pageAll({}, 100)];
    expect(canonical(pa.items)).toEqual(canonical(ps.items));
    expect(pa.items.length).toBe(oracle(corpus, null).length);
    const pb = await b.pageAll({}, 100);
    expect(pb.items.map((i) => i.id)).toEqual(pa.items.map((i) => i.id));
  });

  it('order=relevance: the same top 50 on both nodes and the single node', async () => {
    const rng = new Rng(32);
    for (const kind of ['topic', 'story', 'chunk'] as const) {
      const q = makeQuery(corpus, rng, kind);
      const body = { vector: vec(q), order: 'relevance', limit: 50, min_score: -1 };
      const [ra, rb, rs] = [await a.match(body), await b.match(body), await single.match(body)];
      for (const r of [ra, rb, rs]) expect(r.status, r.raw).toBe(200);
      expect(rb.body.items.map((i: any) => i.id)).toEqual(ra.body.items.map((i: any) => i.id));
      expect(ra.body.items.map((i: any) => `${itemKey(i)}=${i.score}`)).toEqual(rs.body.items.map((i: any) => `${itemKey(i)}=${i.score}`));
    }
  });

  it('a cursor one node issued pages on the other (the cluster shares its cursor secret)', async () => {
    const q = vec(makeQuery(corpus, new Rng(33), 'topic'));
    for (const body of [{ limit: 10 }, { vector: q, min_score: 0.3, limit: 10 }]) {
      const first = await a.match(body);
      expect(first.status, first.raw).toBe(200);
      const onB = await b.match({ ...body, cursor: first.body.next_cursor });
      const onA = await a.match({ ...body, cursor: first.body.next_cursor });
      expect(onB.status, onB.raw).toBe(200);
      expect(onB.body.items.length).toBe(10);
      expect(onB.body.items.map((i: any) => i.id)).toEqual(onA.body.items.map((i: any) => i.id));
    }
    // A single node's own secret is not the cluster's: its cursor is refused, never misread.
    const other = await single.match({ limit: 10 });
    expect((await b.match({ limit: 10, cursor: other.body.next_cursor })).body.error).toBe('bad_cursor');
  });
});

describe('keys', () => {
  const gateway = (h: Harness, secret: string) =>
    h.inject({ method: 'GET', url: '/v1/sources', noAuth: true, headers: { 'x-gateway-key': secret, 'x-gateway-host': GATEWAY_HOST } });

  it('a gateway key made with `keys create` on one node opens every node; revoked there, it opens none', async () => {
    // The command, as an operator runs it, on node a's data directory.
    const env = { DATA_DIR: a.env.DATA_DIR, ...clusterEnv('cli'), LOG_LEVEL: 'silent' };
    const made = cli(['keys', 'create', '--scheme', 'gateway', '--name', 'edge'], env);
    expect(made.status, made.stderr).toBe(0);
    const secret = made.stdout.trim().split('\n').pop()!;
    const id = /created gateway key (\S+)/.exec(made.stdout)![1];
    await eventually(async () => (await gateway(b, secret)).status === 200, 'node b knows the key');
    const revoked = cli(['keys', 'revoke', id], env);
    expect(revoked.status, revoked.stderr).toBe(0);
    await eventually(async () => (await gateway(b, secret)).status === 401, 'node b refuses the revoked key');
    await eventually(async () => (await gateway(a, secret)).status === 401, 'node a refuses the revoked key');
  });
});

describe('one wallet across nodes', () => {
  /** Resolves once `h`'s journal holds the wallet log as far as any node appended to it. */
  const walletCaughtUp = (h: Harness) => {
    const end = Math.max(...[a, b].map((n) => n.service.billing.lastSharedPosition()));
    return eventually(() => h.service.cluster!.walletApplier!.applied >= end, `node ${h.env.CLUSTER_NODE_ID} applies the wallet log to ${end}`);
  };
  const charges = (h: Harness, account: string, n: number, tag: string) =>
    Array.from({ length: n }, (_, i) =>
      h.service.billing.charge(account, 'sources', { requestId: `${tag}-${i}`, keyId: 'k' }).then(
        () => 'ok',
        (e) => String(e.code ?? e),
      ),
    );
  const count = (xs: string[], x: string) => xs.filter((y) => y === x).length;

  it('an account made with `accounts create`, and its Bearer key, work on every node, charged to one wallet', async () => {
    const env = { DATA_DIR: a.env.DATA_DIR, ...clusterEnv('cli'), LOG_LEVEL: 'silent' };
    const made = cli(['accounts', 'create', '--name', 'shared'], env);
    expect(made.status, made.stderr).toBe(0);
    const id = made.stdout.trim().split('\n').pop()!;
    const key = cli(['keys', 'create', '--account', id], env);
    expect(key.status, key.stderr).toBe(0);
    const secret = key.stdout.trim().split('\n').pop()!;
    const call = (h: Harness) => h.inject({ method: 'GET', url: '/v1/sources', noAuth: true, headers: { authorization: `Bearer ${secret}` } });
    await eventually(async () => (await call(b)).status === 200, 'node b knows the account and its key');
    const onA = await call(a);
    expect(onA.status).toBe(200);
    // Two calls (and the ones that found the key unknown or the account not subscribed yet, uncharged) on two nodes, one wallet.
    expect(Number(onA.headers['x-credits-remaining'])).toBe(248);
    await walletCaughtUp(a);
    await walletCaughtUp(b);
    expect(a.service.billing.balance(id)).toBe(b.service.billing.balance(id));
    expect(a.service.billing.entries(id)).toEqual(b.service.billing.entries(id));
  });

  it('two nodes charging one wallet at once, while the wallet log loses a server, serve exactly as many calls as it has credits', async () => {
    const acct = await a.service.billing.createAccountShared('race');
    await eventually(() => b.service.billing.subscription(acct.id, 'sources') !== undefined, 'node b has the account');
    // The wallet log's leader dies while the calls are being charged.
    const leader = (await a.service.cluster!.jsm.streams.info('NM_WALLET')).cluster!.leader!;
    const racing = [...charges(a, acct.id, 200, 'a'), ...charges(b, acct.id, 200, 'b')];
    const killed = Number(leader.slice(1));
    await new Promise((r) => setTimeout(r, 20));
    nats.kill(killed);
    const results = await Promise.all(racing);
    await nats.start(killed);
    expect(count(results, 'ok')).toBe(250);
    expect(count(results, 'quota_exceeded')).toBe(150);
    // Credits granted through one node are spent through both, exactly.
    await b.service.billing.grantShared(acct.id, 50);
    const more = await Promise.all([...charges(a, acct.id, 40, 'a2'), ...charges(b, acct.id, 40, 'b2')]);
    expect(count(more, 'ok')).toBe(50);
    await walletCaughtUp(a);
    await walletCaughtUp(b);
    const ledger = a.service.billing.entries(acct.id);
    expect(b.service.billing.entries(acct.id)).toEqual(ledger);
    // The ledger is one chain: seqs 1..n, each debit's request once, and it sums to the balance.
    expect(ledger.map((e) => e.seq)).toEqual(ledger.map((_, i) => i + 1));
    const debits = ledger.filter((e) => e.kind === 'debit');
    expect(debits.length).toBe(300);
    expect(new Set(debits.map((e) => e.requestId)).size).toBe(300);
    expect(ledger.reduce((n, e) => n + e.credits, 0)).toBe(0);
    for (const h of [a, b]) expect(h.service.billing.balance(acct.id)).toBe(0);
  });

  it('a retry with the same Idempotency-Key sent to another node is replayed there, not charged again', async () => {
    const acct = await a.service.billing.createAccountShared('retries');
    // 20 calls a second (10 a node): the retries below come faster than the free plan's 10 a minute.
    await a.service.billing.subscribeShared(acct.id, 'sources', 'mega');
    const { id, secret } = a.service.keys.create({ scheme: 'bearer', account: acct.id });
    await a.service.cluster!.shareKey(a.service.keys, id);
    for (const h of [a, b])
      await eventually(
        () => h.service.keys.get(id) !== undefined && h.service.billing.subscription(acct.id, 'sources')?.plan === 'mega',
        'the key and plan on both nodes',
      );
    const call = (h: Harness, url: string, key = 'order-7') =>
      h.inject({ method: 'GET', url, noAuth: true, headers: { authorization: `Bearer ${secret}`, 'idempotency-key': key } });
    const first = await call(a, '/v1/sources');
    expect(first.status).toBe(200);
    expect(first.headers['x-credits-charged']).toBe('1');
    const retry = await call(b, '/v1/sources');
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.raw).toBe(first.raw);
    expect((await call(b, '/v1/sources?limit=5')).body.error).toBe('invalid_request');
    // Each retry right after its answer, on the other node: the kept response is read where it
    // was written (the stream's leader), never from a replica still behind it.
    const replayed: string[] = [];
    for (let i = 0; i < 20; i++) {
      const [x, y] = i % 2 ? [b, a] : [a, b];
      const made = await call(x, '/v1/sources', `order-${100 + i}`);
      expect(made.status, made.raw).toBe(200);
      replayed.push(String((await call(y, '/v1/sources', `order-${100 + i}`)).headers['idempotent-replayed']));
      await new Promise((r) => setTimeout(r, 120));
    }
    expect(replayed).toEqual(Array(20).fill('true'));
    await walletCaughtUp(a);
    await walletCaughtUp(b);
    for (const h of [a, b]) expect(h.service.billing.balance(acct.id)).toBe(250 - 21);
  });

  it("rate limits: each node admits its share of the plan's limit (the quota over the nodes serving)", async () => {
    const acct = await a.service.billing.createAccountShared('rates');
    const { id, secret } = a.service.keys.create({ scheme: 'bearer', account: acct.id });
    expect(await a.service.cluster!.shareKey(a.service.keys, id)).toBe(true);
    await eventually(() => b.service.keys.get(id) !== undefined && b.service.billing.subscription(acct.id, 'sources') !== undefined, 'node b has the key');
    for (const h of [a, b]) {
      // The free plan: 10 calls a minute in all, ceil(10 / n) on each of n nodes.
      const n = h.service.cluster!.liveNodes();
      if (n !== 2) console.log(JSON.stringify((await h.service.cluster!.status()).nodes));
      expect(n).toBe(2);
      const share = Math.ceil(10 / n);
      const got: number[] = [];
      for (let i = 0; i < share + 2; i++)
        got.push((await h.inject({ method: 'GET', url: '/v1/sources', noAuth: true, headers: { authorization: `Bearer ${secret}` } })).status);
      expect(got.filter((s) => s === 200).length, `node ${h.env.CLUSTER_NODE_ID}`).toBe(share);
      expect(got.filter((s) => s === 429).length).toBe(2);
    }
  });
});

describe('monitors', () => {
  it('a monitor on one node matches what another node imported (its store applies the whole log)', async () => {
    const account = (await b.service.billing.createAccountShared('monitor desk')).id;
    await eventually(() => b.service.billing.subscription(account, 'monitors') !== undefined, 'node b has the account');
    const auth = { authorization: `Bearer ${b.service.keys.create({ scheme: 'bearer', account }).secret}` };
    const rng = new Rng(77);
    const topic = randUnit(rng);
    const made = await b.inject({
      method: 'POST',
      url: '/v1/monitors',
      payload: { vector: vec(topic), stream: true, min_score: 0.5 },
      headers: auth,
      noAuth: true,
    });
    expect(made.status, made.raw).toBe(200);
    const urls = [0, 1, 2].map((i) => `https://wire.example/cluster-monitor/${i}`);
    const file = join(makeTempDir(), 'arrivals.jsonl');
    writeArrivals(file, urls, '2020-01-01T00:00:00Z', () => perturb(rng, topic, 0.2));
    await a.service.importFile(file);
    await caughtUp(b, a.service.cluster!.revisions.lastSeq);
    await b.service.monitors.pump();
    const events = b.service.monitorStore.eventsAfter(made.body.monitor.id, 0, 10);
    expect(events.flatMap((e) => e.items.map((i: any) => i.source_url)).sort()).toEqual(urls);
  });
});

describe('losing things', () => {
  it('a re-import through the other node appends nothing: every line is unchanged', async () => {
    const summary = await b.service.importFile(a.corpusFile!);
    expect(summary.newRevisions).toBe(0);
    expect(summary.unchanged).toBe(single.importSummary!.unchanged + single.importSummary!.newRevisions);
  });

  it('the same new file imported through both nodes at once appends each revision once', async () => {
    const twice = generateCorpus({ ...MEDIUM, seed: 5150, articles: 150 });
    const file = `${makeTempDir()}/twice.jsonl`;
    writeCorpusJsonl(twice, file);
    const before = a.service.cluster!.revisions.lastSeq;
    const [sa, sb] = await Promise.all([a.service.importFile(file), b.service.importFile(file)]);
    // Every revision is new to exactly one of the two imports, unchanged to the other.
    expect(sa.newRevisions + sb.newRevisions).toBe(twice.revisions.length);
    expect(sa.unchanged + sb.unchanged).toBe(twice.revisions.length);
    const info = await a.service.cluster!.jsm.streams.info('NM_REVISIONS');
    expect(info.state.last_seq - before).toBe(twice.revisions.length);
  });

  it('a NATS server killed during an import loses no acknowledged revision, and a new empty node catches up', async () => {
    const more = generateCorpus({ ...MEDIUM, seed: 9191, articles: 300 });
    const file = `${makeTempDir()}/more.jsonl`;
    writeCorpusJsonl(more, file);
    const before = a.service.cluster!.revisions.lastSeq;
    // The log's leader dies once the import has appended its first batch.
    const leader = (await a.service.cluster!.jsm.streams.info('NM_REVISIONS')).cluster!.leader!;
    let killed = -1;
    const summary = await a.service.importFile(file, {
      onProgress: () => {
        if (killed >= 0) return;
        killed = Number(leader.slice(1));
        nats.kill(killed);
      },
    });
    expect(killed).toBeGreaterThanOrEqual(0);
    expect(summary.rejected).toBe(0);
    expect(summary.newRevisions).toBe(more.revisions.length);
    await nats.start(killed);
    const total = a.service.cluster!.revisions.lastSeq;
    const c = await startHarness({ corpus: null, background: true, env: clusterEnv('c') });
    nodes.push(c);
    await caughtUp(b, a.service.cluster!.revisions.lastSeq);
    await caughtUp(c, a.service.cluster!.revisions.lastSeq);
    expect(a.service.cluster!.revisions.lastSeq).toBeGreaterThanOrEqual(before + more.revisions.length);
    for (const h of [a, b, c]) expect(h.service.store.nextOrd()).toBe(total);
    const [pa, pc] = [await a.pageAll({}, 100), await c.pageAll({}, 100)];
    expect(pc.items.map((i) => i.id)).toEqual(pa.items.map((i) => i.id));
    // Every article once: the ones imported before this test, and this import's.
    expect(pa.items.length).toBe(a.service.store.timeFirst.getCount());
    expect(pa.items.length).toBeGreaterThanOrEqual(oracle(corpus, null).length + oracle(more, null).length);
  });
});

describe('a node killed', () => {
  it('kill -9 of a node while it applies the log: restarted, it holds every revision once', async () => {
    const dir = makeTempDir();
    const env = { ...process.env, DATA_DIR: join(dir, 'data'), ...clusterEnv('k') };
    const total = a.service.cluster!.revisions.lastSeq;
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/cluster-node.ts'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    // Gone for good, its engine's lock with it, only at 'exit': a kill signal is only sent.
    const exited = new Promise((r) => child.once('exit', r));
    const killedAt = await new Promise<number>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`the node exited (${code}) before it was killed`)));
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        const applied = Number(/applied (\d+) [\d.]+\s*$/.exec(d)?.[1] ?? -1);
        if (applied > 0 && child.exitCode === null && !child.killed) {
          child.kill('SIGKILL');
          resolve(applied);
        }
      });
    });
    expect(killedAt).toBeLessThan(total);
    await exited;
    const k = await startHarness({ corpus: null, background: true, env: { DATA_DIR: env.DATA_DIR, ...clusterEnv('k') } });
    nodes.push(k);
    await caughtUp(k, total);
    expect(k.service.store.nextOrd()).toBe(total);
    expect(k.service.store.revIds.getCount()).toBe(total);
    const [pa, pk] = [await a.pageAll({ include_edits: true }, 100), await k.pageAll({ include_edits: true }, 100)];
    expect(pk.items.map((i) => i.id)).toEqual(pa.items.map((i) => i.id));
  });
});

describe('a node killed while it charges', () => {
  it('kill -9 of a node during metered load: every charge it acknowledged is in the wallet, once, and the ledger adds up', async () => {
    const acct = await a.service.billing.createAccountShared('killed');
    await a.service.billing.buyShared(acct.id, 1_000_000);
    await eventually(() => a.service.billing.subscription(acct.id, 'sources') !== undefined, 'node a has the account');
    const dir = makeTempDir();
    const env = { ...process.env, DATA_DIR: join(dir, 'data'), ...clusterEnv('m'), CHARGE_ACCOUNT: acct.id };
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/cluster-node.ts'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((r) => child.once('exit', r));
    const acknowledged: string[] = [];
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`the node exited (${code}) before it was killed`)));
      let rest = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        const lines = (rest + d).split('\n');
        rest = lines.pop()!;
        for (const line of lines) if (line.startsWith('charged ')) acknowledged.push(line.slice(8));
        // Node a charges the same wallet meanwhile.
        if (acknowledged.length >= 300 && child.exitCode === null && !child.killed) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      void Promise.all(Array.from({ length: 100 }, (_, i) => a.service.billing.charge(acct.id, 'sources', { requestId: `a-${i}`, keyId: 'k' })));
    });
    await exited;
    const end = (await a.service.cluster!.jsm.streams.info('NM_WALLET')).state.last_seq;
    await eventually(() => a.service.cluster!.walletApplier!.applied >= end, 'node a applies the whole wallet log');
    const ledger = a.service.billing.entries(acct.id);
    expect(ledger.map((e) => e.seq)).toEqual(ledger.map((_, i) => i + 1));
    const debits = ledger.filter((e) => e.kind === 'debit').map((e) => e.requestId!);
    expect(new Set(debits).size).toBe(debits.length);
    const logged = new Set(debits);
    expect(acknowledged.filter((r) => !logged.has(r))).toEqual([]);
    expect(ledger.reduce((n, e) => n + e.credits, 0)).toBe(a.service.billing.balance(acct.id));
  });
});

describe('operations', () => {
  it('cluster status lists the log and the nodes; an unreachable NATS is one line and exit 1', async () => {
    const status = cli(['cluster', 'status', '--json'], { ...clusterEnv('ops'), LOG_LEVEL: 'silent' });
    expect(status.status, status.stderr).toBe(0);
    const s = JSON.parse(status.stdout);
    expect(s.stream.replicas).toBe(3);
    expect(s.stream.lastSeq).toBe(a.service.cluster!.revisions.lastSeq);
    const byNode = new Map(s.nodes.map((n: any) => [n.node, n]));
    expect(s.wallet.replicas).toBe(3);
    for (const id of ['a', 'b']) expect(byNode.get(id), id).toMatchObject({ caughtUp: true, lag: 0 });
    const text = cli(['cluster', 'status'], { ...clusterEnv('ops'), LOG_LEVEL: 'silent' });
    expect(text.stdout).toMatch(/^revision log: \d+ revisions, 3 replicas/);
    expect(text.stdout).toMatch(/^wallet log: \d+ records, 3 replicas/m);
    const embed = cli(['embed'], { DATA_DIR: a.env.DATA_DIR, ...clusterEnv('ops'), LOG_LEVEL: 'silent' });
    expect(embed.status).not.toBe(0);
    expect(embed.stderr).toContain('in cluster mode every revision in the revision log carries its vectors');
    const down = cli(['cluster', 'status'], { CLUSTER_NATS_URLS: 'nats://127.0.0.1:1', CLUSTER_NODE_ID: 'x', LOG_LEVEL: 'silent' });
    expect(down.status).toBe(1);
    expect(down.stderr).toMatch(/^newsmatch: cluster mode: no NATS server answered at 127\.0\.0\.1:1 /);
  });

  it('`newsmatch import` with CLUSTER_NATS_URLS appends to the log from outside any node, and every node gets it', async () => {
    const extra = generateCorpus({ ...MEDIUM, seed: 3131, articles: 20 });
    const file = join(makeTempDir(), 'cli.jsonl');
    writeCorpusJsonl(extra, file);
    const res = cli(['import', file], { DATA_DIR: join(makeTempDir(), 'none'), ...clusterEnv('importer'), LOG_LEVEL: 'silent' });
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout + res.stderr).toContain(`${extra.revisions.length} new revisions`);
    const info = await a.service.cluster!.jsm.streams.info('NM_REVISIONS');
    const urls = new Set(extra.revisions.map((r) => r.url));
    for (const h of [a, b]) {
      await caughtUp(h, info.state.last_seq);
      const found = (await h.pageAll({ include_edits: true }, 100)).items.filter((i) => urls.has(i.source_url));
      expect(found.length).toBe(extra.revisions.length);
    }
  });

  it('`newsmatch demo` with CLUSTER_NATS_URLS sends its corpus through the log, and the key it prints opens every node', async () => {
    const dir = join(makeTempDir(), 'demo');
    const res = cli(['demo'], { DATA_DIR: dir, ...clusterEnv('demo'), LOG_LEVEL: 'silent' });
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toContain('once it has applied the revision log');
    const key = /^KEY=(\S+)$/m.exec(res.stdout)![1];
    const query = JSON.parse(readFileSync(join(dir, 'demo-query.json'), 'utf8'));
    const info = await a.service.cluster!.jsm.streams.info('NM_REVISIONS');
    for (const h of [a, b]) {
      await caughtUp(h, info.state.last_seq);
      const ask = () => h.inject({ method: 'POST', url: '/v1/match', payload: query, headers: { authorization: `Bearer ${key}` }, noAuth: true });
      // The key reaches a node through the shared bucket (mirrorKeys), a moment after the command printed it.
      await eventually(async () => (await ask()).status !== 401, `node ${h.env.CLUSTER_NODE_ID} knows the demo key`, 10_000);
      const found = await ask();
      expect(found.status, found.raw).toBe(200);
      expect(found.body.count).toBeGreaterThan(0);
    }
  });

  it('/metrics shows how far the node applied the log; /readyz no longer names the log once it has', async () => {
    const res = await a.inject({ url: '/metrics', headers: a.bearerHeaders, noAuth: true });
    expect(res.status, res.raw).toBe(200);
    expect(res.raw).toContain(`newsmatch_cluster_applied_seq ${a.service.cluster!.applier!.applied}`);
    expect(res.raw).toMatch(/^newsmatch_cluster_pending_revisions 0$/m);
    expect(res.raw).toContain(`newsmatch_cluster_wallet_applied_seq ${a.service.cluster!.walletApplier!.applied}`);
    // The log's condition of readiness is met; the keyword index's catch-up is its own condition.
    expect(a.service.cluster!.unmet()).toEqual([]);
    const ready = await a.inject({ url: '/readyz', noAuth: true });
    expect(ready.raw).not.toContain('revision log');
    expect(ready.raw).not.toContain('wallet log');
  });

  it("a node started on a copy of another node's data directory reads only the log past the copy", async () => {
    // The log as it stands: `newsmatch import` appended to it from outside any node too.
    const total = (await a.service.cluster!.jsm.streams.info('NM_REVISIONS')).state.last_seq;
    await caughtUp(b, total);
    // Node b stopped, its directory copied (as an operator copies a stopped node), b started again.
    const copy = join(makeTempDir(), 'data');
    await b.reopen(() => cpSync(b.env.DATA_DIR, copy, { recursive: true }));
    const d = await startHarness({ corpus: null, background: true, env: { DATA_DIR: copy, ...clusterEnv('d') } });
    nodes.push(d);
    expect(d.service.cluster!.applier!.applied).toBe(total);
    await caughtUp(d, total);
    const [pa, pd] = [await a.pageAll({ include_edits: true }, 100), await d.pageAll({ include_edits: true }, 100)];
    expect(pd.items.map((i) => i.id)).toEqual(pa.items.map((i) => i.id));
    await caughtUp(b, total);
  });
});

describe('polling', () => {
  it('two nodes with the same outlet poll it once between them, and both store what was found', async () => {
    const site = await startFeedServer();
    const t = Math.floor(Date.now() / 1000) - 3600;
    const items = [0, 1, 2].map((i) => ({ title: `Harbour cranes story ${i}`, link: `${site.base}/wire/${i}`, date: t + i * 60 }));
    site.set('/wire/feed.xml', { body: rss2('Wire', items), type: RSS });
    const model = writeTinyModel(join(makeTempDir(), 'model'), { seed: 5 });
    const env = (node: string) => ({ ...clusterEnv(node), INGEST_ALLOW_PRIVATE: 'on', BGE_M3_MODEL_DIR: model, EMBED_DEVICE: 'cpu', EMBED_THREADS: '1' });
    const p = await startHarness({ corpus: null, background: true, env: env('p') });
    const q = await startHarness({ corpus: null, background: true, env: env('q') });
    nodes.push(p, q);
    const pollers = [p, q].map((h) => {
      h.service.outlets.add({ name: 'Wire', homepage: `${site.base}/wire/`, feeds: [`${site.base}/wire/feed.xml`], interval: '5m' });
      return h.service.createPoller();
    });
    try {
      // Both due at once, twice over: one node takes the lease, and the schedule it leaves says "in five minutes" to both.
      for (let round = 0; round < 2; round++) {
        const reports = (await Promise.all(pollers.map((x) => x.round()))).flat();
        expect(reports.length, `round ${round}`).toBe(round === 0 ? 1 : 0);
      }
      expect(site.hits('/wire/feed.xml').length).toBe(1);
      const seq = Math.max(p.service.cluster!.revisions.lastSeq, q.service.cluster!.revisions.lastSeq);
      for (const h of [p, q]) {
        await caughtUp(h, seq);
        const res = await h.match({ sources: ['Wire'], limit: 10 });
        expect(res.body.items.map((i: any) => i.source_url).sort()).toEqual(items.map((i) => i.link).sort());
      }
    } finally {
      for (const x of pollers) await x.stop();
      await site.close();
    }
  });
});
