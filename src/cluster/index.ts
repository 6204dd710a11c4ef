export { Cluster, ClusterError, clusterSettings, type ClusterStatus, type NodeReport } from './cluster.js';
export { articleKey, shardOf } from './revision-log.js';
export type { GroupRequest } from './router.js';
export { groupOf, parseShards } from './shards.js';
