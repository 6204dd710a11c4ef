/**
 * An unexpected throw in a metered handler: 500 `internal`, the charge refunded, one log line
 * with the request id, and no key in any log line.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/http/app.js';
import { openService } from '../src/service.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-internal-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it('answers 500 internal, refunds the call and logs the request id, never the key', async () => {
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(s) });
  const service = await openService(loadConfig({ DATA_DIR: dir }), { log });
  const app = await buildApp(service);
  app.get('/v1/test-boom', { config: { auth: true, product: 'sources' } }, async () => {
    throw new Error('a bug in a handler');
  });
  await app.ready();
  const account = service.billing.createAccount('t');
  const { secret } = service.keys.create({ scheme: 'bearer', account: account.id });
  const res = await app.inject({ method: 'GET', url: '/v1/test-boom', headers: { authorization: `Bearer ${secret}`, 'x-request-id': 'boom-1' } });
  expect(res.statusCode).toBe(500);
  expect(res.json()).toMatchObject({ error: 'internal', detail: expect.stringContaining('X-Request-ID') });
  expect(res.headers['x-request-id']).toBe('boom-1');
  expect(res.headers['x-credits-charged']).toBe('0');
  expect(res.headers['x-credits-remaining']).toBe('250');
  const kinds = service.billing
    .entries(account.id)
    .filter((e) => e.requestId === 'boom-1')
    .map((e) => e.kind);
  expect(kinds).toEqual(['debit', 'refund']);
  const failed = lines.filter((l) => l.includes('a bug in a handler'));
  expect(failed.length).toBeGreaterThan(0);
  expect(failed.every((l) => l.includes('"reqId":"boom-1"'))).toBe(true);
  expect(lines.some((l) => l.includes(secret) || l.includes(secret.slice(4, 20)))).toBe(false);
  await app.close();
  await service.close();
});
