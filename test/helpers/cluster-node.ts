/**
 * A cluster node in a process of its own, for the tests that kill one: opens the service on
 * the environment it is given (DATA_DIR, CLUSTER_NATS_URLS, CLUSTER_NODE_ID), starts its
 * background work (applying the revision log), and prints `applied <seq> <unix ms>` each time
 * that moves (the time with a fraction: performance.timeOrigin + performance.now()).
 *
 *   node --import tsx test/helpers/cluster-node.ts
 */
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../../src/config.js';
import { openService } from '../../src/service.js';

const service = await openService(loadConfig({ ...process.env, LOG_LEVEL: 'silent' }));
service.startBackground();
let last = -1;
setInterval(() => {
  const applied = service.cluster?.applier?.applied ?? -1;
  if (applied !== last) process.stdout.write(`applied ${applied} ${(performance.timeOrigin + performance.now()).toFixed(3)}\n`);
  last = applied;
}, 1);
