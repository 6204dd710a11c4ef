/** `cluster status`: the cluster as NATS holds it (the revision and wallet logs, every node's last report). */
import type { Config } from '../config.js';
import { Cluster, clusterSettings } from '../cluster/index.js';
import { UsageError, quietLog } from './output.js';

export async function clusterStatusCommand(config: Config, json: boolean): Promise<number> {
  if (config.clusterNatsUrls.length === 0)
    throw new UsageError('cluster status needs CLUSTER_NATS_URLS (or --cluster-nats-urls): the NATS servers of the cluster');
  const cluster = await Cluster.open(clusterSettings(config, config.clusterNodeId ?? 'status'), quietLog(config));
  try {
    const s = await cluster.status();
    if (json) {
      process.stdout.write(`${JSON.stringify(s, null, 2)}\n`);
      return 0;
    }
    const now = Date.now();
    const out = [
      `revision log: ${s.stream.lastSeq} revisions, ${s.stream.replicas} replicas (leader ${s.stream.leader ?? 'none'}, ${s.stream.replicasCurrent} current)`,
      `wallet log: ${s.wallet.lastSeq} records, ${s.wallet.replicas} replicas (leader ${s.wallet.leader ?? 'none'}, ${s.wallet.replicasCurrent} current)`,
      `NATS servers: ${s.servers.join(', ') || '(the one connected to)'}`,
      `shards: ${shardLine(s.nodes)}`,
      s.nodes.length === 0 ? 'nodes: none has reported (a node reports while it serves)' : 'nodes:',
      ...s.nodes.map(
        (n) =>
          `  ${n.node}  shards ${n.shards ?? 'all'}  applied ${n.applied}  lag ${n.lag}  wallet lag ${n.walletLag}  ${n.caughtUp ? 'caught up' : 'catching up'}  ` +
          `consumer pending ${n.consumerPending ?? 'no consumer'}  last report ${Math.round((now - n.at) / 1000)} s ago`,
      ),
    ];
    process.stdout.write(`${out.join('\n')}\n`);
    return 0;
  } finally {
    await cluster.close();
  }
}

/** The groups of shards the nodes report, each with its replicas. */
function shardLine(nodes: { node: string; shards?: string }[]): string {
  const groups = new Map<string, string[]>();
  for (const n of nodes) groups.set(n.shards ?? 'all', [...(groups.get(n.shards ?? 'all') ?? []), n.node]);
  if (groups.size === 0 || (groups.size === 1 && groups.has('all'))) return 'every node holds every shard (full replicas)';
  return [...groups]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([spec, ns]) => `${spec} on ${ns.join(', ')}`)
    .join('; ');
}
