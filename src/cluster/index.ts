export { Cluster, ClusterError, type ClusterStatus, type NodeReport } from './cluster.js';
export { articleKey, shardOf } from './revision-log.js';
