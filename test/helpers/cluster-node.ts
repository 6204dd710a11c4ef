/**
 * A cluster node in a process of its own, for the tests that kill one: opens the service on
 * the environment it is given (DATA_DIR, CLUSTER_NATS_URLS, CLUSTER_NODE_ID), starts its
 * background work (applying the revision log), and prints `applied <seq> <unix ms>` each time
 * that moves (the time with a fraction: performance.timeOrigin + performance.now()).
 * With CHARGE_ACCOUNT set, it also charges that account calls of `sources`, 16 at a time, and
 * prints `charged <request id>` for each charge once it has landed in the wallet log.
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

const account = process.env.CHARGE_ACCOUNT;
if (account) {
  let n = 0;
  const charging = async () => {
    for (;;) {
      const requestId = `${process.pid}-${n++}`;
      await service.billing.charge(account, 'sources', { requestId, keyId: 'k' });
      process.stdout.write(`charged ${requestId}\n`);
    }
  };
  // The account reaches this node's journal through the wallet log: charged once it has.
  while (!service.billing.subscription(account, 'sources')) await new Promise((r) => setTimeout(r, 20));
  for (let i = 0; i < 16; i++) void charging();
}
