/**
 * Cluster mode with shards (CLUSTER_SHARDS): two nodes on a real three-server NATS cluster,
 * each holding the vectors of half the corpus's months, against a single node on the same
 * corpus. A vector query on either node goes to both groups and is merged: the same rows and
 * scores as the single node, exact `order=time` paging across the shards, the same relevance
 * top-k. With one group gone, a query touching its shards is 503 `shard_unavailable` naming
 * them, and a query within the other group's months is still answered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEDIUM, type Harness, startHarness } from './helpers/service.js';
import type { Corpus } from './helpers/corpus.js';
import { eventually, type NatsCluster, startNatsCluster } from './helpers/nats-cluster.js';
import { canonical, itemKey, makeQuery, pickMinScore, recallOf, vec } from './helpers/oracle.js';
import { Rng } from './helpers/rng.js';
import { cli } from './helpers/cli.js';
import { groupOf, type NodeReport, parseShards } from '../src/cluster/index.js';

let nats: NatsCluster;
let single: Harness;
let low: Harness;
let high: Harness;
let wide: Harness | undefined;
let corpus: Corpus;
/** The corpus's months (shards) in order, and the last one the low group holds. */
let months: string[];
let split: string;
const closed = new Set<Harness>();

const env = (node: string, shards: string) => ({ CLUSTER_NATS_URLS: nats.urls.join(','), CLUSTER_NODE_ID: node, CLUSTER_SHARDS: shards });
const next = (m: string) => {
  const d = new Date(`${m}-01T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() + 1);
  return d.toISOString().slice(0, 7);
};

beforeAll(async () => {
  nats = await startNatsCluster(3);
  single = await startHarness({ corpus: MEDIUM });
  corpus = single.corpus!;
  months = [...new Set(corpus.revisions.map((r) => r.publishedAt.slice(0, 7)))].sort();
  split = months[Math.floor(months.length / 2) - 1];
  // The low group imports the corpus through the revision log; the high group reads it.
  low = await startHarness({ corpus: MEDIUM, background: true, env: env('low', `..${split}`) });
  high = await startHarness({ corpus: null, background: true, env: env('high', `${next(split)}..`) });
  const end = low.service.cluster!.revisions.lastSeq;
  for (const h of [low, high]) await eventually(() => h.service.cluster!.applier!.applied >= end && h.service.cluster!.applier!.caughtUp, 'caught up', 60_000);
  for (const h of [low, high]) await h.service.catchUp();
  // Each node knows the other's group once it has reported (its first heartbeat) and is serving.
  const probe = { vector: vec(makeQuery(corpus, new Rng(1), 'topic')), order: 'relevance', limit: 1 };
  for (const h of [low, high]) await eventually(async () => (await h.match(probe)).status === 200, 'both groups answer', 60_000);
}, 240_000);

afterAll(async () => {
  for (const h of [low, high, wide, single]) if (h && !closed.has(h)) await h.close();
  await nats?.stop();
}, 120_000);

describe('two groups of shards', () => {
  it('each node holds the text of every revision and the vectors of its own months only', () => {
    expect(months.length).toBeGreaterThanOrEqual(2);
    for (const h of [low, high]) expect(h.service.store.nextOrd()).toBe(corpus.revisions.length);
    const lowChunks = corpus.revisions.filter((r) => r.publishedAt.slice(0, 7) <= split).reduce((n, r) => n + r.chunks.length, 0);
    expect(low.service.store.nextLabel()).toBe(lowChunks);
    expect(high.service.store.nextLabel()).toBe(single.service.store.nextLabel() - lowChunks);
  });

  it('order=time pages across both groups the rows the single node pages, exactly', async () => {
    const rng = new Rng(41);
    for (const kind of ['topic', 'story', 'chunk'] as const) {
      const q = makeQuery(corpus, rng, kind);
      const min = pickMinScore(corpus, q, {}, 120);
      const body = { vector: vec(q), min_score: min, include_edits: true };
      const [pl, ph, ps] = [await low.pageAll(body, [37, 100]), await high.pageAll(body, [100, 13]), await single.pageAll(body, 100)];
      expect(canonical(pl.items)).toEqual(canonical(ps.items));
      expect(ph.items.map((i) => i.id)).toEqual(pl.items.map((i) => i.id));
      const r = recallOf(corpus, q, { min_score: min, include_edits: true }, pl.items.map(itemKey));
      expect(r.recall, kind).toBe(1);
      expect(r.extraneous).toEqual([]);
    }
  });

  it('order=relevance: the same top 50 as the single node, from both groups', async () => {
    const rng = new Rng(42);
    for (const kind of ['topic', 'story', 'chunk'] as const) {
      const body = { vector: vec(makeQuery(corpus, rng, kind)), order: 'relevance', limit: 50, min_score: -1 };
      const [rl, rs] = [await low.match(body), await single.match(body)];
      expect(rl.status, rl.raw).toBe(200);
      expect(rl.body.items.map((i: any) => `${itemKey(i)}=${i.score}`)).toEqual(rs.body.items.map((i: any) => `${itemKey(i)}=${i.score}`));
    }
  });

  it('like: an article whose vectors are in the other group is found there', async () => {
    const target = corpus.revisions.find((r) => r.publishedAt.slice(0, 7) > split && r.chunks.length > 0)!;
    const onHigh = (await high.pageAll({ include_edits: true }, 100)).items.find((i: any) => i.source_url === target.url)!;
    const [rl, rh] = [
      await low.match({ like: onHigh.id, order: 'relevance', limit: 10 }),
      await high.match({ like: onHigh.id, order: 'relevance', limit: 10 }),
    ];
    expect(rl.status, rl.raw).toBe(200);
    expect(rl.body.items.map((i: any) => i.id)).toEqual(rh.body.items.map((i: any) => i.id));
  });

  it('the shard map is watched: a shard or a group is known as soon as it is written, and gone once deleted', async () => {
    const c = low.service.cluster!;
    const map = c.shardRouter(async () => [])!.map;
    // Known now, as a query would ask: a map read on a timer would answer from that read for a while.
    expect(await map.known()).toContain(months[0]);
    const shards = parseShards('2031-01..2031-12');
    const group = groupOf(shards);
    await c.shardList.create('2031-01', '');
    const report: NodeReport = { node: 'zz', applied: 0, pending: 0, caughtUp: true, at: Date.now(), shards: shards.spec, group };
    await c.nodes.put('zz', JSON.stringify(report));
    try {
      await eventually(async () => (await map.known()).includes('2031-01'), 'the new shard known', 1000);
      await eventually(async () => (await map.groups()).has(group), 'the new group known', 1000);
      expect(c.liveNodes()).toBe(3);
    } finally {
      await c.shardList.delete('2031-01');
      await c.nodes.delete('zz');
    }
    await eventually(async () => !(await map.known()).includes('2031-01') && !(await map.groups()).has(group), 'both gone', 1000);
    expect(c.liveNodes()).toBe(2);
  });

  it('what needs every shard on one node says so: monitors, and after_seq with a query; cluster status lists the groups', async () => {
    const acct = await low.service.billing.createAccountShared('shards');
    await eventually(() => low.service.billing.subscription(acct.id, 'monitors') !== undefined, 'node low has the account');
    const auth = { authorization: `Bearer ${low.service.keys.create({ scheme: 'bearer', account: acct.id }).secret}` };
    const q = vec(makeQuery(corpus, new Rng(44), 'topic'));
    const made = await low.inject({ method: 'POST', url: '/v1/monitors', payload: { vector: q, stream: true, min_score: 0.5 }, headers: auth, noAuth: true });
    expect(made.status).toBe(503);
    expect(made.body.error).toBe('shard_unavailable');
    const since = await low.match({ vector: q, min_score: 0.3, after_seq: 0 });
    expect(since.status).toBe(422);
    const status = cli(['cluster', 'status'], { CLUSTER_NATS_URLS: nats.urls.join(','), CLUSTER_NODE_ID: 'ops', LOG_LEVEL: 'silent' });
    expect(status.status, status.stderr).toBe(0);
    expect(status.stdout).toContain(`shards: ..${split} on low; ${next(split)}.. on high`);
  });

  it('with one group gone, a query touching its months is 503 naming them; one within the other group is answered', async () => {
    await high.close();
    closed.add(high);
    // Its last report ages out of the live groups (6 s).
    const q = vec(makeQuery(corpus, new Rng(43), 'topic'));
    const first = months[0];
    const within = { vector: q, min_score: 0.3, since: `${first}-01T00:00:00Z`, until: `${split}-01T00:00:00Z` };
    await eventually(async () => (await low.match({ vector: q, min_score: 0.3 })).status === 503, 'the high group is gone', 20_000);
    const gone = await low.match({ vector: q, min_score: 0.3 });
    expect(gone.body.error).toBe('shard_unavailable');
    expect(gone.body.message).toContain(next(split));
    const ok = await low.match(within);
    expect(ok.status, ok.raw).toBe(200);
    // Queries without vectors need no other group: every node holds every revision's text.
    expect((await low.match({ limit: 5 })).status).toBe(200);
  });

  it('re-sharding: a node holding every month joins beside the low group; a revision both return is kept once, and pages are exact again', async () => {
    wide = await startHarness({ corpus: null, background: true, env: env('wide', `${months[0]}..`) });
    const end = low.service.cluster!.revisions.lastSeq;
    await eventually(() => wide!.service.cluster!.applier!.applied >= end && wide!.service.cluster!.applier!.caughtUp, 'caught up', 60_000);
    await wide.service.catchUp();
    const q = makeQuery(corpus, new Rng(45), 'topic');
    const min = pickMinScore(corpus, q, {}, 120);
    const body = { vector: vec(q), min_score: min, include_edits: true };
    await eventually(async () => (await low.match(body)).status === 200, 'the wide group answers for the high months', 60_000);
    const [pl, ps] = [await low.pageAll(body, [29, 100]), await single.pageAll(body, 100)];
    expect(canonical(pl.items)).toEqual(canonical(ps.items));
    expect(new Set(pl.items.map((i) => i.id)).size).toBe(pl.items.length);
  });
});
