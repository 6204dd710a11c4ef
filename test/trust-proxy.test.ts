/**
 * TRUST_PROXY: behind a gateway every connection comes from the gateway, so per-client limits
 * (dashboard sign-ins) and the session cookie's Secure flag need the client's address and scheme
 * from X-Forwarded-For and X-Forwarded-Proto, taken only from the configured proxies (anyone else
 * could send them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { startHarness, type Harness } from './helpers/service.js';

const GATEWAY = '10.1.2.3';
let trusting: Harness;
let plain: Harness;

beforeAll(async () => {
  const env = { DASHBOARD_SIGN_INS_PER_MINUTE: '2' };
  trusting = await startHarness({ corpus: null, env: { ...env, TRUST_PROXY: `${GATEWAY}, 192.168.0.0/16` } });
  plain = await startHarness({ corpus: null, env });
}, 60_000);

afterAll(async () => {
  await trusting?.close();
  await plain?.close();
});

/** A sign-in attempt with `token` over a connection from `peer`, with the forwarded headers given. */
const signIn = (h: Harness, peer: string, token: string, forwarded: Record<string, string> = {}) =>
  h.app.inject({
    method: 'POST',
    url: '/account/login',
    payload: `token=${token}`,
    remoteAddress: peer,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...forwarded },
  });

const xff = (client: string) => ({ 'x-forwarded-for': client });

describe('TRUST_PROXY', () => {
  it('gives each client behind a trusted gateway its own sign-in limit', async () => {
    for (let i = 0; i < 2; i++) expect((await signIn(trusting, GATEWAY, `guess${i}`, xff('203.0.113.1'))).statusCode).toBe(401);
    expect((await signIn(trusting, GATEWAY, 'guess', xff('203.0.113.1'))).statusCode).toBe(429);
    // Another client through the same gateway (and one through a proxy in the trusted block): not limited.
    expect((await signIn(trusting, GATEWAY, 'guess', xff('203.0.113.2'))).statusCode).toBe(401);
    expect((await signIn(trusting, '192.168.7.7', 'guess', xff('203.0.113.3'))).statusCode).toBe(401);
  });

  it('ignores the headers from any other peer, and everywhere when unset', async () => {
    for (const h of [trusting, plain]) {
      const peer = h === trusting ? '198.51.100.20' : GATEWAY;
      for (let i = 0; i < 2; i++) expect((await signIn(h, peer, `guess${i}`, xff(`203.0.113.${10 + i}`))).statusCode).toBe(401);
      // A new X-Forwarded-For each time changes nothing: the connection's address is the client.
      const res = await signIn(h, peer, 'guess', xff('203.0.113.99'));
      expect(res.statusCode).toBe(429);
      expect(JSON.stringify(res.body)).toContain('too_many_sign_ins');
    }
  });

  it('marks the session cookie Secure when a trusted gateway says the client came over https', async () => {
    const account = trusting.service.billing.createAccount('behind tls').id;
    let client = 30;
    const cookieOf = async (h: Harness, peer: string) => {
      const { token } = h.service.sessions.createLoginLink(account);
      const res = await signIn(h, peer, token, { ...xff(`203.0.113.${client++}`), 'x-forwarded-proto': 'https' });
      expect(res.statusCode).toBe(303);
      return String(res.headers['set-cookie']);
    };
    expect(await cookieOf(trusting, GATEWAY)).toMatch(/; Secure$/);
    expect(await cookieOf(trusting, '198.51.100.21')).not.toMatch(/Secure/);
  });

  it('takes `off` or IPs and CIDR blocks, and refuses anything else', () => {
    expect(loadConfig({ TRUST_PROXY: 'off' }).trustProxy).toEqual([]);
    expect(loadConfig({}).trustProxy).toEqual([]);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.1, fd00::/8,127.0.0.1/32' }).trustProxy).toEqual(['10.0.0.1', 'fd00::/8', '127.0.0.1/32']);
    for (const bad of ['gateway.example', '10.0.0.1/33', '::1/129', '10.0.0.1/8/2', '10.0.0.1,', 'on'])
      expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(ConfigError);
  });
});
