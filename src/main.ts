/** `newsmatch serve`: open the service, listen, and shut down cleanly on SIGINT/SIGTERM. */
import type { Config } from './config.js';
import { buildApp } from './http/index.js';
import { openService } from './service.js';
import { startupFacts, startupMessage } from './startup.js';

/** Serves until a signal; resolves with the address listened on (`http://127.0.0.1:8080`) once listening. */
export async function serve(config: Config): Promise<string> {
  const service = await openService(config);
  const app = await buildApp(service);
  const listening = await app.listen({ host: config.host, port: config.port });
  // Handlers go in as soon as the port is open: a SIGTERM during the start-up facts below
  // (the store size walk) must still drain and exit 0, not kill the process.
  let poller: ReturnType<typeof service.createPoller> | null = null;
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    service.log.info(`${signal}: finishing in-flight requests and closing the store (at most ${config.shutdownTimeoutMs} ms)`);
    // The bound: whatever is still running then (a slow scrape, a large seal) is cut as kill -9
    // would cut it, which loses nothing acknowledged (LMDB and the billing journal commit
    // before they answer; segments and the index file are written aside and renamed).
    setTimeout(() => {
      service.log.warn(`${signal}: not closed within SHUTDOWN_TIMEOUT_MS (${config.shutdownTimeoutMs} ms): exiting; derived indexes resume on the next start`);
      process.exit(0);
    }, config.shutdownTimeoutMs);
    try {
      await poller?.stop();
      await app.close();
      await service.close();
      process.exit(0);
    } catch (e) {
      service.log.error({ err: e }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  // METRICS_LISTEN: /metrics, /healthz and /readyz alone, with no key (closed with the app).
  const opsAt = await app.ops.listen().catch(async (e: unknown) => {
    await app.close();
    throw e;
  });
  if (opsAt) service.log.info(`metrics and probes also on ${opsAt}`);
  const facts = await startupFacts(config, { chunks: service.store.nextLabel(), revisions: service.store.nextOrd() }, listening);
  service.log.info({ startup: facts }, startupMessage(facts));
  if (closing) return listening;
  // Revisions LMDB holds that the keyword index lacks (a first start, `reindex --keyword`).
  service.news.startBackground();
  service.startBackground();
  poller = config.ingest === 'on' ? service.createPoller() : null;
  if (poller) {
    service.log.info(`ingest on: polling ${service.outlets.list().filter((o) => o.enabled).length} enabled outlet(s)`);
    poller.start();
  }
  return listening;
}
