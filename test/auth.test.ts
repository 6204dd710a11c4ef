/**
 * Authentication (README, "Security"): the gateway door (X-Gateway-Key +
 * X-Gateway-Host), the Bearer door, revocation; X-Request-ID on every response; the 404 body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMALL, GATEWAY_HOST, expectError, startHarness, type Harness, type Res } from './helpers/service.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ corpus: SMALL });
});

afterAll(async () => {
  await h?.close();
});

const NO_AUTH = { 'x-gateway-key': undefined, 'x-gateway-host': undefined };

function matchAs(headers: Record<string, string | undefined>, body: unknown = { limit: 3 }): Promise<Res> {
  return h.match(body, { ...NO_AUTH, ...headers });
}

function sourcesAs(headers: Record<string, string>): Promise<Res> {
  return h.inject({ url: '/v1/sources', headers, noAuth: true });
}

describe('401 unauthorized', () => {
  it('no key', async () => {
    expectError(await matchAs({}), 401, 'unauthorized');
    expectError(await sourcesAs({}), 401, 'unauthorized');
    expectError(await h.inject({ method: 'POST', url: '/v1/match', noAuth: true }), 401, 'unauthorized');
  });

  it('a wrong gateway key', async () => {
    expectError(await matchAs({ 'x-gateway-key': 'not-a-key', 'x-gateway-host': GATEWAY_HOST }), 401, 'unauthorized');
    expectError(await matchAs({ 'x-gateway-key': `${h.gateway.secret}x`, 'x-gateway-host': GATEWAY_HOST }), 401, 'unauthorized');
    expectError(await matchAs({ 'x-gateway-key': h.gateway.secret.slice(0, -1), 'x-gateway-host': GATEWAY_HOST }), 401, 'unauthorized');
    expectError(await matchAs({ 'x-gateway-key': '', 'x-gateway-host': GATEWAY_HOST }), 401, 'unauthorized');
    expectError(await sourcesAs({ 'x-gateway-key': 'not-a-key', 'x-gateway-host': GATEWAY_HOST }), 401, 'unauthorized');
  });

  it('a valid gateway key with a wrong or missing X-Gateway-Host', async () => {
    expectError(await matchAs({ 'x-gateway-key': h.gateway.secret, 'x-gateway-host': 'evil.test' }), 401, 'unauthorized');
    expectError(await matchAs({ 'x-gateway-key': h.gateway.secret, 'x-gateway-host': 'GW.TEST.example' }), 401, 'unauthorized');
    expectError(await matchAs({ 'x-gateway-key': h.gateway.secret }), 401, 'unauthorized');
    expectError(await sourcesAs({ 'x-gateway-key': h.gateway.secret, 'x-gateway-host': 'evil.test' }), 401, 'unauthorized');
  });

  it('a wrong host says so; a server without GATEWAY_HOST says its gateway door is closed', async () => {
    const wrong = await matchAs({ 'x-gateway-key': h.gateway.secret, 'x-gateway-host': 'evil.test' });
    expectError(wrong, 401, 'unauthorized');
    expect(wrong.body.message).toBe("X-Gateway-Host is missing or not this service's gateway host");
    const closed = await startHarness({ corpus: null, env: { GATEWAY_HOST: '' } });
    try {
      for (const host of [GATEWAY_HOST, undefined]) {
        const res = await closed.match({ limit: 1 }, { 'x-gateway-key': closed.gateway.secret, 'x-gateway-host': host });
        expectError(res, 401, 'unauthorized');
        expect(res.body.message).toBe('this server has no GATEWAY_HOST configured: the gateway door is closed; use a Bearer key');
      }
      const bearer = await closed.match({ limit: 1 }, { ...NO_AUTH, ...closed.bearerHeaders });
      expect(bearer.status, bearer.raw).toBe(200);
    } finally {
      await closed.close();
    }
  });

  it('the host header alone', async () => {
    expectError(await matchAs({ 'x-gateway-host': GATEWAY_HOST }), 401, 'unauthorized');
  });

  it('a bearer secret is not a gateway key, and a gateway secret is not a bearer key', async () => {
    expectError(await matchAs({ 'x-gateway-key': h.bearer.secret, 'x-gateway-host': GATEWAY_HOST }), 401, 'unauthorized');
    expectError(await matchAs({ authorization: `Bearer ${h.gateway.secret}` }), 401, 'unauthorized');
  });

  it('a malformed Authorization header', async () => {
    expectError(await matchAs({ authorization: 'Bearer' }), 401, 'unauthorized');
    expectError(await matchAs({ authorization: 'Bearer ' }), 401, 'unauthorized');
    expectError(await matchAs({ authorization: `Basic ${Buffer.from('user:pass').toString('base64')}` }), 401, 'unauthorized');
    expectError(await matchAs({ authorization: 'Bearer not-a-key' }), 401, 'unauthorized');
    expectError(await matchAs({ authorization: h.bearer.secret }), 401, 'unauthorized');
  });

  it('a revoked key, either scheme', async () => {
    const gw = h.service.keys.create({ scheme: 'gateway', name: 'to revoke' });
    const br = h.service.keys.create({ scheme: 'bearer' });
    const gwHeaders = { 'x-gateway-key': gw.secret, 'x-gateway-host': GATEWAY_HOST };
    expect((await matchAs(gwHeaders)).status).toBe(200);
    expect((await matchAs({ authorization: `Bearer ${br.secret}` })).status).toBe(200);
    expect(h.service.keys.revoke(gw.id)).toBe(true);
    expect(h.service.keys.revoke(br.id)).toBe(true);
    expectError(await matchAs(gwHeaders), 401, 'unauthorized');
    expectError(await matchAs({ authorization: `Bearer ${br.secret}` }), 401, 'unauthorized');
    expectError(await sourcesAs(gwHeaders), 401, 'unauthorized');
    // The other keys still work.
    expect((await matchAs(h.gatewayHeaders)).status).toBe(200);
  });

  it('revoking an unknown id answers false', () => {
    expect(h.service.keys.revoke('no-such-key')).toBe(false);
  });
});

describe('accepted keys', () => {
  it('keys.create returns an id and a secret, distinct per key', () => {
    const a = h.service.keys.create({ scheme: 'gateway' });
    const b = h.service.keys.create({ scheme: 'gateway' });
    for (const k of [a, b]) {
      expect(typeof k.id).toBe('string');
      expect(typeof k.secret).toBe('string');
      expect(k.secret.length).toBeGreaterThanOrEqual(16);
    }
    expect(a.id).not.toBe(b.id);
    expect(a.secret).not.toBe(b.secret);
  });

  it('the gateway door works on both endpoints', async () => {
    expect((await matchAs(h.gatewayHeaders)).status).toBe(200);
    expect((await sourcesAs(h.gatewayHeaders)).status).toBe(200);
  });

  it('the Bearer door works on both endpoints, and answers the same as the gateway door', async () => {
    const a = await matchAs(h.bearerHeaders, { limit: 10 });
    const b = await matchAs(h.gatewayHeaders, { limit: 10 });
    expect(a.status, a.raw).toBe(200);
    expect(a.body.items).toEqual(b.body.items);
    const s = await sourcesAs(h.bearerHeaders);
    expect(s.status, s.raw).toBe(200);
  });

  it('header names are case-insensitive', async () => {
    const res = await matchAs({ 'X-Gateway-Key': h.gateway.secret, 'X-GATEWAY-HOST': GATEWAY_HOST });
    expect(res.status, res.raw).toBe(200);
  });

  it('GET /openapi.json needs no key', async () => {
    const res = await h.inject({ url: '/openapi.json', noAuth: true });
    expect(res.status).toBe(200);
  });
});

describe('X-Request-ID', () => {
  it('is on every response: success, 401, 422, 400, 404', async () => {
    const responses = [
      await h.match({ limit: 1 }),
      await matchAs({}),
      await h.match({ limit: 0 }),
      await h.match('{bad json'),
      await h.inject({ url: '/v1/nowhere' }),
      await h.inject({ url: '/v1/sources' }),
      await h.inject({ url: '/openapi.json', noAuth: true }),
    ];
    const ids = responses.map((r) => r.headers['x-request-id']);
    for (const [i, id] of ids.entries()) {
      expect(typeof id, `response ${i}`).toBe('string');
      expect((id as string).length).toBeGreaterThan(0);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('a valid incoming one is echoed, on success and on errors', async () => {
    const rid = '6f1c2b7e-3d4a-4e5f-9a8b-1c2d3e4f5a6b';
    const ok = await h.match({ limit: 1 }, { 'x-request-id': rid });
    expect(ok.status).toBe(200);
    expect(ok.headers['x-request-id']).toBe(rid);
    const unauth = await matchAs({ 'x-request-id': rid });
    expect(unauth.status).toBe(401);
    expect(unauth.headers['x-request-id']).toBe(rid);
    const invalid = await h.match({ limit: 500 }, { 'x-request-id': rid });
    expect(invalid.status).toBe(422);
    expect(invalid.headers['x-request-id']).toBe(rid);
    const missing = await h.inject({ url: '/nope', headers: { 'x-request-id': rid } });
    expect(missing.status).toBe(404);
    expect(missing.headers['x-request-id']).toBe(rid);
    const simple = await h.match({ limit: 1 }, { 'x-request-id': 'req-12345' });
    expect(simple.headers['x-request-id']).toBe('req-12345');
  });

  it('an invalid incoming one is replaced, not echoed', async () => {
    const bad = 'not a valid id <script>alert(1)</script>';
    const res = await h.match({ limit: 1 }, { 'x-request-id': bad });
    expect(res.status).toBe(200);
    expect(typeof res.headers['x-request-id']).toBe('string');
    expect(res.headers['x-request-id']).not.toBe(bad);
    expect((res.headers['x-request-id'] as string).length).toBeGreaterThan(0);
  });
});

describe('404 not_found', () => {
  it('an unknown route answers the catalogue body, not the framework default', async () => {
    expectError(await h.inject({ url: '/v1/nowhere' }), 404, 'not_found');
    expectError(await h.inject({ method: 'POST', url: '/v2/match', payload: {} }), 404, 'not_found');
    expectError(await h.inject({ method: 'GET', url: '/nowhere' }), 404, 'not_found');
    expectError(await h.inject({ method: 'GET', url: '/playground/missing.js' }), 404, 'not_found');
    expectError(await h.inject({ method: 'DELETE', url: '/v1/sources/x' }), 404, 'not_found');
  });
});
