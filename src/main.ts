/** `newsmatch serve`: open the service, listen, and shut down cleanly on SIGINT/SIGTERM. */
import type { Config } from './config.js';
import { buildApp } from './http/index.js';
import { openService } from './service.js';

export async function serve(config: Config): Promise<void> {
  const service = await openService(config);
  const app = await buildApp(service);
  await app.listen({ host: config.host, port: config.port });
  // Revisions LMDB holds that the keyword index lacks (a first start, `reindex --keyword`).
  service.news.startBackground();
  const poller = config.ingest === 'on' ? service.createPoller() : null;
  if (poller) {
    service.log.info(`ingest on: polling ${service.outlets.list().filter((o) => o.enabled).length} enabled outlet(s)`);
    poller.start();
  }
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    service.log.info(`${signal}: finishing in-flight requests, saving the vector index`);
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
}
