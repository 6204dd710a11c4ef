/** `newsmatch serve`: open the service, listen, and shut down cleanly on SIGINT/SIGTERM. */
import type { Config } from './config.js';
import { buildApp } from './http/index.js';
import { openService } from './service.js';

export async function serve(config: Config): Promise<void> {
  const service = await openService(config);
  const app = await buildApp(service);
  await app.listen({ host: config.host, port: config.port });
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    service.log.info(`${signal}: finishing in-flight requests, saving the vector index`);
    try {
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
