/**
 * The platform, black box (README, "Accounts, keys, credits and plans"): accounts, keys and plans made with the
 * CLI, then every metered call over HTTP (app.inject): who is charged and how much, the
 * rate caps with their IETF RateLimit fields, refunds, an empty wallet, Idempotency-Key,
 * product_unavailable and overloaded. The service runs on a clock the tests move, so no
 * assertion depends on real time.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { AppError } from '../src/errors.js';
import { buildApp } from '../src/http/app.js';
import { familyOf, PRODUCT_NAMES, type LedgerEntry } from '../src/platform/index.js';
import { openService } from '../src/service.js';
import { cli } from './helpers/cli.js';
import { GATEWAY_HOST, expectError, makeTempDir, type Res } from './helpers/service.js';

type Service = Awaited<ReturnType<typeof openService>>;
type App = Awaited<ReturnType<typeof buildApp>>;

interface Platform {
  dir: string;
  env: Record<string, string>;
  service: Service;
  app: App;
  /** The service's clock (unix ms); starts at the real time so CLI-made records line up. */
  now: number;
  inject(o: { method?: 'GET' | 'POST'; url: string; headers?: Record<string, string>; payload?: unknown }): Promise<Res>;
  /** Runs `newsmatch …` on this data directory; asserts exit 0; returns stdout. */
  nm(...args: string[]): string;
  close(): Promise<void>;
}

function parse(raw: string): any {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/** `hooks`: test hooks added to the app after its own (they run after them), before it is ready. */
async function startPlatform(extraEnv: Record<string, string> = {}, hooks?: (app: App, p: Platform) => void): Promise<Platform> {
  const dir = makeTempDir('newsmatch-platform-');
  const env = { DATA_DIR: join(dir, 'data'), GATEWAY_HOST, LOG_LEVEL: 'silent', ...extraEnv };
  const p = { now: Date.now() } as Platform;
  const service = await openService(loadConfig(env), { clock: () => p.now });
  const app = await buildApp(service);
  hooks?.(app, p);
  await app.ready();
  return Object.assign(p, {
    dir,
    env,
    service,
    app,
    async inject(o: { method?: 'GET' | 'POST'; url: string; headers?: Record<string, string>; payload?: unknown }): Promise<Res> {
      const headers: Record<string, string> = { ...o.headers };
      let payload: string | undefined;
      if (o.payload !== undefined) {
        payload = typeof o.payload === 'string' ? o.payload : JSON.stringify(o.payload);
        headers['content-type'] ??= 'application/json';
      }
      const res = await app.inject({ method: o.method ?? 'GET', url: o.url, headers, payload });
      return { status: res.statusCode, headers: res.headers as Res['headers'], body: parse(res.body), raw: res.body };
    },
    nm(...args: string[]): string {
      const r = cli(args, { DATA_DIR: env.DATA_DIR, LOG_LEVEL: 'silent' });
      expect(r.status, `newsmatch ${args.join(' ')}: ${r.stderr}`).toBe(0);
      return r.stdout;
    },
    async close() {
      try {
        await app.close();
        await service.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  });
}

const lastLine = (out: string): string => out.trim().split('\n').at(-1)!.trim();
const keyIdOf = (out: string): string => /key ([0-9a-f-]{36})/.exec(out)![1];
const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
const num = (v: unknown): number => Number(v);

let P: Platform;

beforeAll(async () => {
  P = await startPlatform();
});

afterAll(async () => {
  await P?.close();
});

/** A customer made in process (fast): a new account and a Bearer key of it. */
function customer(name = 'customer'): { id: string; secret: string; headers: Record<string, string> } {
  const { id } = P.service.billing.createAccount(name);
  const { secret } = P.service.keys.create({ scheme: 'bearer', account: id });
  return { id, secret, headers: bearer(secret) };
}

/** Spends `n` credits of an account in process (a charge may be synchronous or a promise). */
async function spend(id: string, n: number): Promise<void> {
  await Promise.all(Array.from({ length: n }, (_, i) => P.service.billing.charge(id, 'sources', { requestId: `spend-${i}`, keyId: 'test' })));
}

const sources = (headers: Record<string, string>, extra: Record<string, string> = {}) => P.inject({ url: '/v1/sources', headers: { ...headers, ...extra } });
const match = (headers: Record<string, string>, body: unknown = { limit: 5 }, extra: Record<string, string> = {}) =>
  P.inject({ method: 'POST', url: '/v1/match', headers: { ...headers, ...extra }, payload: body });
const account = (headers: Record<string, string>) => P.inject({ url: '/v1/account', headers });

function ledger(id: string): LedgerEntry[] {
  P.service.store.refresh();
  return P.service.billing.entries(id);
}
const debits = (id: string) => ledger(id).filter((e) => e.kind === 'debit');
const ledgerSum = (id: string) => ledger(id).reduce((a, e) => a + e.credits, 0);

/** The ledger sums to the wallet, and every entry's running balance is the sum so far. */
function expectLedgerConsistent(id: string): void {
  let sum = 0;
  for (const e of ledger(id)) {
    sum += e.credits;
    expect(e.balance, `entry ${e.seq} (${e.kind})`).toBe(sum);
  }
  expect(sum).toBe(P.service.billing.balance(id));
}

async function creditsOf(headers: Record<string, string>) {
  const res = await account(headers);
  expect(res.status, res.raw).toBe(200);
  return res.body.credits as { total: number; subscription: number; free: number; purchased: number };
}

/** Charged `n` credits, with the wallet then holding `remaining`. */
function expectCharged(res: Res, n: number, remaining: number): void {
  expect(res.headers['x-credits-charged'], `${res.status} ${res.raw.slice(0, 300)}`).toBe(String(n));
  expect(res.headers['x-credits-remaining'], `${res.status} ${res.raw.slice(0, 300)}`).toBe(String(remaining));
}

describe('accounts from the CLI', () => {
  it('accounts create prints the id last; a new account holds 250 free credits, every credit product on free and the marketplace on Free', async () => {
    const out = P.nm('accounts', 'create', '--name', 'Acme');
    const id = lastLine(out);
    expect(id).toMatch(/^acct_\w+$/);
    const secret = lastLine(P.nm('keys', 'create', '--account', id));
    expect(secret).toMatch(/^nmb_/);

    const res = await account(bearer(secret));
    expect(res.status, res.raw).toBe(200);
    expect(res.body.id).toBe(id);
    expect(res.body.name).toBe('Acme');
    expect(res.body.unlimited).toBe(false);
    expect(res.body.credits).toMatchObject({ total: 250, free: 250, subscription: 0, purchased: 0 });
    const subs = new Map<string, any>(res.body.subscriptions.map((s: any) => [s.product, s]));
    expect([...subs.keys()].sort()).toEqual([...PRODUCT_NAMES].sort());
    for (const p of PRODUCT_NAMES) {
      expect(subs.get(p).plan, p).toBe('free');
      expect(subs.get(p).used, p).toBe(0);
      if (familyOf(p) !== 'marketplace') expect(subs.get(p).rate_limit, p).toEqual({ limit: '10/min', quota: 10, window_s: 60 });
    }
    expect(subs.get('marketplace')).toMatchObject({ plan: 'free', included: 200, stop: 200 });
    expect(subs.get('match').credits_per_call).toBe(1);
    expect(subs.get('sources').credits_per_call).toBe(1);
  });

  it('GET /v1/account is free: no credit headers, no ledger debit, the balance never moves', async () => {
    const c = customer();
    for (let i = 0; i < 12; i++) {
      const res = await account(c.headers);
      expect(res.status, res.raw).toBe(200);
      expect(res.headers['x-credits-charged']).toBeUndefined();
      expect(res.headers['x-credits-remaining']).toBeUndefined();
      expect(res.body.credits.total).toBe(250);
    }
    expect(debits(c.id)).toEqual([]);
    // …and it took nothing from the free plan's 10 a minute.
    expect((await sources(c.headers)).status).toBe(200);
  });
});

describe('keys from the CLI', () => {
  it('keys create --account makes a Bearer key of that account, charged to its wallet', async () => {
    const id = P.service.billing.createAccount('cli key').id;
    const out = P.nm('keys', 'create', '--account', id);
    expect(out).toContain(`for account ${id}`);
    const secret = lastLine(out);
    const res = await sources(bearer(secret));
    expect(res.status, res.raw).toBe(200);
    expectCharged(res, 1, 249);
    expect(debits(id)).toHaveLength(1);
  });

  it('keys create without --account: the operator key is never charged, never capped, and every call is in the operator ledger', async () => {
    const out = P.nm('keys', 'create', '--name', 'ops');
    expect(out).toContain('for account operator');
    const headers = bearer(lastLine(out));
    const before = ledger('operator').length;
    const ids: string[] = [];
    for (let i = 0; i < 15; i++) {
      const res = i % 2 ? await match(headers) : await sources(headers);
      expect(res.status, res.raw).toBe(200);
      expect(res.headers['x-credits-charged']).toBe('0');
      expect(res.headers['x-credits-remaining']).toBeUndefined();
      expect(res.headers.ratelimit).toBeUndefined();
      expect(res.headers['ratelimit-policy']).toBeUndefined();
      ids.push(String(res.headers['x-request-id']));
      expect(ledger('operator').length).toBe(before + i + 1);
    }
    const recorded = ledger('operator').slice(before);
    expect(recorded.map((e) => e.kind)).toEqual(ids.map(() => 'debit'));
    expect(recorded.map((e) => e.credits)).toEqual(ids.map(() => 0));
    expect(recorded.map((e) => e.requestId)).toEqual(ids);
    expect(recorded.map((e) => e.product)).toEqual(ids.map((_, i) => (i % 2 ? 'match' : 'sources')));

    const acct = await account(headers);
    expect(acct.status).toBe(200);
    expect(acct.headers['x-credits-charged']).toBeUndefined();
    expect(acct.body).toMatchObject({ id: 'operator', unlimited: true, credits: null, subscriptions: [] });
  });

  it('keys create --scheme gateway --rate 3/s: not charged, 429 rate_limited with Retry-After on the 4th call in a second', async () => {
    const out = P.nm('keys', 'create', '--scheme', 'gateway', '--rate', '3/s');
    const headers = { 'x-gateway-key': lastLine(out), 'x-gateway-host': GATEWAY_HOST };
    P.now += 10_000;
    for (let i = 0; i < 3; i++) {
      const res = i === 1 ? await match(headers) : await sources(headers);
      expect(res.status, res.raw).toBe(200);
      expect(res.headers['x-credits-charged']).toBeUndefined();
      expect(res.headers['x-credits-remaining']).toBeUndefined();
      expect(res.headers['ratelimit-policy']).toBe('"gateway";q=3;w=1');
      expect(res.headers.ratelimit).toBe(`"gateway";r=${2 - i};t=${i === 2 ? 1 : 0}`);
    }
    const refused = await sources(headers);
    expectError(refused, 429, 'rate_limited');
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['ratelimit-policy']).toBe('"gateway";q=3;w=1');
    expect(refused.headers.ratelimit).toBe('"gateway";r=0;t=1');
    expectError(await match(headers), 429, 'rate_limited');
    // A gateway key has no account to show.
    expectError(await account(headers), 403, 'forbidden');

    P.now += 1000;
    expect((await sources(headers)).status).toBe(200);
  });

  it('keys revoke: the key answers 401 unauthorized from then on; a missing key is 401 too', async () => {
    const id = P.service.billing.createAccount('revoked').id;
    const out = P.nm('keys', 'create', '--account', id);
    const headers = bearer(lastLine(out));
    expect((await sources(headers)).status).toBe(200);
    expect(P.nm('keys', 'revoke', keyIdOf(out))).toContain('revoked');
    for (const res of [await sources(headers), await match(headers), await account(headers)]) expectError(res, 401, 'unauthorized');
    expectError(await sources({}), 401, 'unauthorized');
    expectError(await match({}), 401, 'unauthorized');
    expectError(await account({}), 401, 'unauthorized');
    // Nothing was charged for the refused calls.
    expect(debits(id)).toHaveLength(1);
  });
});

describe('scope and subscriptions', () => {
  it('a key with --scope sources: POST /v1/match is 403 forbidden (not charged), GET /v1/sources is 200', async () => {
    const id = P.service.billing.createAccount('scoped').id;
    const headers = bearer(lastLine(P.nm('keys', 'create', '--account', id, '--scope', 'sources')));
    const refused = await match(headers);
    expectError(refused, 403, 'forbidden');
    expectCharged(refused, 0, 250);
    const ok = await sources(headers);
    expect(ok.status, ok.raw).toBe(200);
    expectCharged(ok, 1, 249);
  });

  it('subscribe --plan none: the product answers 403 not_subscribed (not charged); the others still work', async () => {
    const c = customer('unsubscribed');
    expect((await match(c.headers)).status).toBe(200);
    P.nm('subscribe', '--account', c.id, '--product', 'match', '--plan', 'none');
    const refused = await match(c.headers);
    expectError(refused, 403, 'not_subscribed');
    expectCharged(refused, 0, 249);
    const sub = (await account(c.headers)).body.subscriptions.map((s: any) => s.product);
    expect(sub).not.toContain('match');
    expect((await sources(c.headers)).status).toBe(200);
    expect(debits(c.id)).toHaveLength(2);
  });
});

describe('cost: 1 credit a call', () => {
  it('GET /v1/sources and POST /v1/match each take 1 credit, one debit entry per call', async () => {
    const c = customer();
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = i % 2 ? await match(c.headers) : await sources(c.headers);
      expect(res.status, res.raw).toBe(200);
      expectCharged(res, 1, 249 - i);
      ids.push(String(res.headers['x-request-id']));
    }
    const d = debits(c.id);
    expect(d.map((e) => e.credits)).toEqual(ids.map(() => -1));
    expect(d.map((e) => e.requestId)).toEqual(ids);
    expect(d.map((e) => e.product)).toEqual(ids.map((_, i) => (i % 2 ? 'match' : 'sources')));
    expect((await creditsOf(c.headers)).total).toBe(242);
    expectLedgerConsistent(c.id);
    expect(ledgerSum(c.id)).toBe(242);
  });
});

describe('rate caps of the credit plans', () => {
  it('free: 10 a minute shared by the credit products; the 11th is 429 quota_exceeded, not charged, until the window moves', async () => {
    const c = customer();
    P.now += 1000;
    for (let i = 0; i < 10; i++) {
      const res = i % 3 ? await sources(c.headers) : await match(c.headers);
      expect(res.status, res.raw).toBe(200);
      expect(res.headers['ratelimit-policy']).toBe('"credits-free";q=10;w=60');
      expect(res.headers.ratelimit).toBe(`"credits-free";r=${9 - i};t=${i === 9 ? 60 : 0}`);
      P.now += 100;
    }
    for (const refused of [await sources(c.headers), await match(c.headers)]) {
      expectError(refused, 429, 'quota_exceeded');
      const retry = num(refused.headers['retry-after']);
      expect(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After ${refused.headers['retry-after']}`).toBe(true);
      expect(refused.headers['ratelimit-policy']).toBe('"credits-free";q=10;w=60');
      expect(refused.headers.ratelimit).toMatch(/^"credits-free";r=0;t=(\d+)$/);
      expect(num(/t=(\d+)/.exec(String(refused.headers.ratelimit))![1])).toBe(retry);
      expectCharged(refused, 0, 240);
    }
    expect((await creditsOf(c.headers)).total).toBe(240);
    expect(debits(c.id)).toHaveLength(10);

    P.now += 60_000;
    const again = await match(c.headers);
    expect(again.status, again.raw).toBe(200);
    expectCharged(again, 1, 239);
  });

  it('pro: 5 a second; the 6th call in the same second is 429 quota_exceeded', async () => {
    const c = customer();
    P.nm('subscribe', '--account', c.id, '--product', 'match', '--plan', 'pro');
    P.now += 1000;
    for (let i = 0; i < 5; i++) {
      const res = await match(c.headers);
      expect(res.status, res.raw).toBe(200);
      expect(res.headers['ratelimit-policy']).toBe('"credits-pro";q=5;w=1');
    }
    const refused = await match(c.headers);
    expectError(refused, 429, 'quota_exceeded');
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers.ratelimit).toBe('"credits-pro";r=0;t=1');
    expectCharged(refused, 0, 245);
    P.now += 1000;
    expect((await match(c.headers)).status).toBe(200);
  });
});

describe('headers on every response', () => {
  it('X-Request-ID: a valid incoming one is echoed, otherwise one is made, on success and on error', async () => {
    const c = customer();
    const cases: [() => Promise<Res>, number, string][] = [
      [() => sources(c.headers, { 'x-request-id': 'req-sources-1' }), 200, 'req-sources-1'],
      [() => match(c.headers, { limit: 1 }, { 'x-request-id': 'req-match-1' }), 200, 'req-match-1'],
      [() => account({ ...c.headers, 'x-request-id': 'req-account-1' }), 200, 'req-account-1'],
      [() => sources({ 'x-request-id': 'req-401' }), 401, 'req-401'],
      [() => match(c.headers, { limit: 0 }, { 'x-request-id': 'req-422' }), 422, 'req-422'],
      [() => P.inject({ url: '/v1/nothing', headers: { 'x-request-id': 'req-404' } }), 404, 'req-404'],
    ];
    for (const [call, status, id] of cases) {
      const res = await call();
      expect(res.status, res.raw).toBe(status);
      expect(res.headers['x-request-id']).toBe(id);
    }
    const made = await sources(c.headers, { 'x-request-id': 'has spaces and / slashes' });
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const none = await sources({});
    expect(none.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    // The ledger keeps the id the response carried.
    expect(debits(c.id).map((e) => e.requestId)).toEqual(['req-sources-1', 'req-match-1', made.headers['x-request-id']]);
  });

  it('RateLimit and the credit headers come with metered calls on success and on error (422, 503, 403)', async () => {
    const c = customer();
    P.now += 1000;
    const ok = await sources(c.headers);
    const invalid = await match(c.headers, { limit: 0 });
    const failed = await match(c.headers, { text: 'x' });
    expect(ok.status).toBe(200);
    expectError(invalid, 422, 'invalid_request');
    expectError(failed, 503, 'text_mode_unavailable');
    for (const [i, res] of [ok, invalid, failed].entries()) {
      expect(res.headers['ratelimit-policy'], res.raw).toBe('"credits-free";q=10;w=60');
      expect(res.headers.ratelimit, res.raw).toBe(`"credits-free";r=${9 - i};t=0`);
      expect(res.headers['x-credits-charged'], res.raw).toBe(i === 0 ? '1' : '0');
      expect(res.headers['x-credits-remaining'], res.raw).toBe('249');
    }
  });
});

describe('billing rules: validation is never charged, a 5xx is refunded', () => {
  it('422 on an invalid body and 400 on malformed JSON: X-Credits-Charged 0, the balance unchanged, no ledger entry', async () => {
    const c = customer();
    for (const body of [{ limit: 0 }, { min_scor: 1 }, { limit: 101 }, { vector: [1, 2, 3] }]) {
      const res = await match(c.headers, body);
      expectError(res, 422, 'invalid_request');
      expectCharged(res, 0, 250);
    }
    const malformed = await match(c.headers, '{"limit": 5', {});
    expectError(malformed, 400, 'invalid_request');
    expectCharged(malformed, 0, 250);
    expect((await creditsOf(c.headers)).total).toBe(250);
    expect(debits(c.id)).toEqual([]);
  });

  it('a 422 or 400 the core finds after the charge is refunded: X-Credits-Charged 0, a debit and its refund', async () => {
    const c = customer();
    const refusedByCore: [unknown, number, string][] = [
      [{ sources: ['No Such Outlet'] }, 422, 'invalid_request'],
      [{ order: 'relevance' }, 422, 'order_requires_query'],
      [{ since: '2025-02-01T00:00:00Z', until: '2025-01-01T00:00:00Z' }, 422, 'invalid_request'],
      [{ cursor: 'not-a-cursor' }, 400, 'bad_cursor'],
    ];
    for (const [body, status, code] of refusedByCore) {
      const res = await match(c.headers, body);
      expectError(res, status, code);
      expectCharged(res, 0, 250);
    }
    const moves = ledger(c.id).filter((e) => e.kind === 'debit' || e.kind === 'refund');
    for (const e of moves) if (e.kind === 'refund') expect(moves.find((d) => d.seq === e.refundOf)?.kind).toBe('debit');
    expect(moves.filter((e) => e.kind === 'debit').length).toBe(moves.filter((e) => e.kind === 'refund').length);
    expect((await creditsOf(c.headers)).total).toBe(250);
    expectLedgerConsistent(c.id);
  });

  it('503 text_mode_unavailable is refunded: X-Credits-Charged 0, a debit and its refund in the ledger', async () => {
    const c = customer();
    const res = await match(c.headers, { text: 'x' });
    expectError(res, 503, 'text_mode_unavailable');
    expectCharged(res, 0, 250);
    expect((await creditsOf(c.headers)).total).toBe(250);
    const moves = ledger(c.id).filter((e) => e.kind === 'debit' || e.kind === 'refund');
    expect(moves.map((e) => e.kind)).toEqual(['debit', 'refund']);
    const [debit, refund] = moves;
    expect(debit.credits).toBe(-1);
    expect(refund.credits).toBe(1);
    expect(refund.refundOf).toBe(debit.seq);
    expect(debit.refundedBy).toBe(refund.seq);
    expect(debit.requestId).toBe(res.headers['x-request-id']);
    expectLedgerConsistent(c.id);
    expect(ledgerSum(c.id)).toBe(250);
  });
});

describe('an empty wallet', () => {
  it('is 429 quota_exceeded, not charged; credits buy pays for exactly that many more calls', async () => {
    const c = customer();
    for (const p of PRODUCT_NAMES) if (familyOf(p) !== 'marketplace') P.service.billing.subscribe(c.id, p, 'mega');
    await spend(c.id, 249);
    P.now += 1000;
    const last = await sources(c.headers);
    expect(last.status, last.raw).toBe(200);
    expectCharged(last, 1, 0);
    for (const res of [await sources(c.headers), await match(c.headers)]) {
      expectError(res, 429, 'quota_exceeded');
      expectCharged(res, 0, 0);
      expect(res.headers['ratelimit-policy']).toBe('"credits-mega";q=20;w=1');
      expect(res.headers.ratelimit).toMatch(/^"credits-mega";r=\d+;t=\d+$/);
    }
    expect(debits(c.id)).toHaveLength(250);

    expect(P.nm('credits', 'buy', '--account', c.id, '--credits', '5')).toContain('balance 5');
    P.now += 1000;
    for (let i = 0; i < 5; i++) {
      const res = i % 2 ? await match(c.headers) : await sources(c.headers);
      expect(res.status, res.raw).toBe(200);
      expectCharged(res, 1, 4 - i);
    }
    expectError(await sources(c.headers), 429, 'quota_exceeded');
    expect(await creditsOf(c.headers)).toMatchObject({ total: 0, subscription: 0, free: 0, purchased: 0 });
    expectLedgerConsistent(c.id);
  });

  it('credits grant adds subscription credits, spent before purchased ones', async () => {
    const c = customer();
    for (const p of PRODUCT_NAMES) if (familyOf(p) !== 'marketplace') P.service.billing.subscribe(c.id, p, 'mega');
    await spend(c.id, 250);
    P.nm('credits', 'buy', '--account', c.id, '--credits', '2');
    expect(P.nm('credits', 'grant', '--account', c.id, '--credits', '3')).toContain('balance 5');
    expect(await creditsOf(c.headers)).toMatchObject({ total: 5, subscription: 3, free: 0, purchased: 2 });
    P.now += 1000;
    for (let i = 0; i < 3; i++) expectCharged(await match(c.headers), 1, 4 - i);
    expect(await creditsOf(c.headers)).toMatchObject({ total: 2, subscription: 0, purchased: 2 });
    expectCharged(await sources(c.headers), 1, 1);
    expect(await creditsOf(c.headers)).toMatchObject({ total: 1, subscription: 0, purchased: 1 });
    expectCharged(await sources(c.headers), 1, 0);
    expectError(await sources(c.headers), 429, 'quota_exceeded');
    expectLedgerConsistent(c.id);
  });
});

describe('the handler runs while its debit commits', () => {
  let Q: Platform;
  beforeAll(async () => {
    // After the metering hooks' preHandler (the debit decided, its commit not yet begun): the
    // CLI, another process, changes the account before this process's commit can land.
    Q = await startPlatform({}, (app, p) => {
      app.addHook('preHandler', async (req) => {
        const between = req.headers['x-test-between'];
        const account = req.headers['x-test-account'];
        if (typeof between !== 'string' || typeof account !== 'string') return;
        if (between === 'unsubscribe') p.nm('subscribe', '--account', account, '--product', 'sources', '--plan', 'none');
        if (between === 'grant') p.nm('credits', 'grant', '--account', account, '--credits', '5');
      });
    });
  });
  afterAll(async () => {
    await Q?.close();
  });
  const customerOf = (name: string) => {
    const { id } = Q.service.billing.createAccount(name);
    return { id, headers: bearer(Q.service.keys.create({ scheme: 'bearer', account: id }).secret) };
  };

  it("no answer before its debit has committed: 10 calls at once (the free plan's minute), each answered after its debit landed", async () => {
    const c = customerOf('early');
    const landed = new Set<string>();
    const listen = (_s: number, entries: readonly LedgerEntry[]) => {
      for (const e of entries) if (e.kind === 'debit' && e.requestId) landed.add(e.requestId);
    };
    Q.service.billing.commitListeners.add(listen);
    try {
      // Each answer looks at once (in the same turn its response resolves) whether its debit landed.
      const seen = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          Q.inject({
            method: i % 2 ? 'POST' : 'GET',
            url: i % 2 ? '/v1/match' : '/v1/sources',
            headers: c.headers,
            payload: i % 2 ? { limit: 3 } : undefined,
          }).then((res) => ({ status: res.status, id: String(res.headers['x-request-id']), landed: landed.has(String(res.headers['x-request-id'])) })),
        ),
      );
      expect(seen.map((x) => x.status)).toEqual(seen.map(() => 200));
      expect(seen.filter((x) => !x.landed)).toEqual([]);
    } finally {
      Q.service.billing.commitListeners.delete(listen);
    }
    expect(Q.service.billing.balance(c.id)).toBe(240);
  });

  it('unsubscribed by another process between the decision and the commit: computed again, 403 not_subscribed, not charged, the result not sent', async () => {
    const c = customerOf('unsubscribed-between');
    expectCharged(await Q.inject({ url: '/v1/sources', headers: c.headers }), 1, 249);
    const res = await Q.inject({ url: '/v1/sources', headers: { ...c.headers, 'x-test-between': 'unsubscribe', 'x-test-account': c.id } });
    expectError(res, 403, 'not_subscribed');
    expectCharged(res, 0, 249);
    Q.service.store.refresh();
    expect(Q.service.billing.entries(c.id).filter((e) => e.kind === 'debit')).toHaveLength(1);
    expect(Q.service.billing.balance(c.id)).toBe(249);
  });

  it('credits granted by another process between the decision and the commit: charged once, X-Credits-Remaining as it landed', async () => {
    const c = customerOf('granted-between');
    const res = await Q.inject({ url: '/v1/sources', headers: { ...c.headers, 'x-test-between': 'grant', 'x-test-account': c.id } });
    expect(res.status, res.raw).toBe(200);
    // Decided on 250 (249 left); landed after the grant: 254 left.
    expectCharged(res, 1, 254);
    Q.service.store.refresh();
    expect(Q.service.billing.entries(c.id).filter((e) => e.kind === 'debit')).toHaveLength(1);
    expect(Q.service.billing.balance(c.id)).toBe(254);
  });
});

describe('Idempotency-Key', () => {
  it('the same key and request twice: the second replays the first response, uncharged', async () => {
    const c = customer();
    const key = { 'idempotency-key': 'order-7f3a' };
    const first = await match(c.headers, { limit: 5 }, key);
    expect(first.status, first.raw).toBe(200);
    expectCharged(first, 1, 249);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const second = await match(c.headers, { limit: 5 }, key);
    expect(second.status).toBe(first.status);
    expect(second.raw).toBe(first.raw);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expectCharged(second, 0, 249);
    expect(second.headers['x-request-id']).toBeTruthy();
    expect(debits(c.id)).toHaveLength(1);
    expect((await creditsOf(c.headers)).total).toBe(249);

    // The same key with another request is refused, and not charged.
    const other = await match(c.headers, { limit: 6 }, key);
    expectError(other, 422, 'invalid_request');
    expectCharged(other, 0, 249);
    // The same key on another endpoint is another request: refused too.
    expectError(await sources(c.headers, key), 422, 'invalid_request');
    expect(debits(c.id)).toHaveLength(1);
  });

  it('two identical requests with one key at once: one runs and is charged, the other waits and replays it', async () => {
    const c = customer();
    const key = { 'idempotency-key': 'twice-at-once' };
    const [a, b] = await Promise.all([match(c.headers, { limit: 3 }, key), match(c.headers, { limit: 3 }, key)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.raw).toBe(a.raw);
    expect([a.headers['idempotent-replayed'], b.headers['idempotent-replayed']].filter((v) => v === 'true')).toHaveLength(1);
    expect([a.headers['x-credits-charged'], b.headers['x-credits-charged']].sort()).toEqual(['0', '1']);
    expect(debits(c.id)).toHaveLength(1);
    expect((await creditsOf(c.headers)).total).toBe(249);
  });

  it('an Idempotency-Key of 255 characters is accepted, one of 256 is 422', async () => {
    const c = customer();
    const ok = await match(c.headers, { limit: 1 }, { 'idempotency-key': 'k'.repeat(255) });
    expect(ok.status, ok.raw).toBe(200);
    const long = await match(c.headers, { limit: 1 }, { 'idempotency-key': 'k'.repeat(256) });
    expectError(long, 422, 'invalid_request');
    expectCharged(long, 0, 249);
  });

  it('a response that was refunded (5xx) is not kept: the retry runs again', async () => {
    const c = customer();
    const key = { 'idempotency-key': 'retry-after-5xx' };
    const first = await match(c.headers, { text: 'x' }, key);
    expectError(first, 503, 'text_mode_unavailable');
    const retry = await match(c.headers, { text: 'x' }, key);
    expectError(retry, 503, 'text_mode_unavailable');
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(
      ledger(c.id)
        .filter((e) => e.kind === 'debit' || e.kind === 'refund')
        .map((e) => e.kind),
    ).toEqual(['debit', 'refund', 'debit', 'refund']);
    expect((await creditsOf(c.headers)).total).toBe(250);
  });

  // A 429 is "retry later": a call refused for its wallet never ran and was never charged, like
  // one refused by the rate cap (never kept), so its key must not replay the refusal for 24 h.
  it('a call refused for an empty wallet is not kept either: after credits are bought, the retry is served', async () => {
    const c = customer();
    for (const p of PRODUCT_NAMES) if (familyOf(p) !== 'marketplace') P.service.billing.subscribe(c.id, p, 'mega');
    await spend(c.id, 250);
    const key = { 'idempotency-key': 'pay-later' };
    P.now += 1000;
    const refused = await match(c.headers, { limit: 2 }, key);
    expectError(refused, 429, 'quota_exceeded');
    P.service.billing.buy(c.id, 1);
    const retry = await match(c.headers, { limit: 2 }, key);
    expect(retry.headers['idempotent-replayed'], 'the 429 was kept and replayed').toBeUndefined();
    expect(retry.status, retry.raw).toBe(200);
    expectCharged(retry, 1, 0);
  });
});

describe('errors', () => {
  it('every error body is exactly {error, message, detail}', async () => {
    const c = customer();
    const res = await match(c.headers, { min_scor: 1 });
    expect(Object.keys(res.body).sort()).toEqual(['detail', 'error', 'message']);
    expect(res.body.detail).toBe(res.body.message);
    expect(res.body.message).toContain('min_scor');
  });
});

describe('product_unavailable and overloaded', () => {
  let Q: Platform;
  beforeAll(async () => {
    Q = await startPlatform({ PRODUCTS_DISABLED: 'sources', MAX_INFLIGHT_MATCH: '1' });
  });
  afterAll(async () => {
    await Q?.close();
  });

  function qCustomer() {
    const { id } = Q.service.billing.createAccount('q');
    return { id, headers: bearer(Q.service.keys.create({ scheme: 'bearer', account: id }).secret) };
  }

  it('PRODUCTS_DISABLED=sources: GET /v1/sources is 503 product_unavailable, not charged', async () => {
    const c = qCustomer();
    const res = await Q.inject({ url: '/v1/sources', headers: c.headers });
    expectError(res, 503, 'product_unavailable');
    expectCharged(res, 0, 250);
    const ops = bearer(Q.service.keys.create({ scheme: 'bearer' }).secret);
    expectError(await Q.inject({ url: '/v1/sources', headers: ops }), 503, 'product_unavailable');
    expect((await Q.inject({ method: 'POST', url: '/v1/match', headers: c.headers, payload: {} })).status).toBe(200);
  });

  it('MAX_INFLIGHT_MATCH=1: a second match while the first runs is 503 overloaded with Retry-After, not charged', async () => {
    const c = qCustomer();
    // A stand-in embedder that answers when the test says: the first call stays in its handler.
    let answer: ((v: Float32Array) => void) | undefined;
    Q.service.embedQuery = () => new Promise<Float32Array>((r) => (answer = r));
    try {
      Q.now += 1000;
      const first = Q.inject({ method: 'POST', url: '/v1/match', headers: c.headers, payload: { text: 'slow' } });
      for (let i = 0; answer === undefined; i++) {
        expect(i, 'the first call never reached the embedder').toBeLessThan(10_000);
        await new Promise((r) => setImmediate(r));
      }
      const second = await Q.inject({ method: 'POST', url: '/v1/match', headers: c.headers, payload: { limit: 1 } });
      expectError(second, 503, 'overloaded');
      expect(num(second.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expectCharged(second, 0, 249);
      const v = new Float32Array(1024);
      v[0] = 1;
      answer(v);
      const done = await first;
      expect(done.status, done.raw).toBe(200);
      expectCharged(done, 1, 249);
      // The slot is free again.
      const third = await Q.inject({ method: 'POST', url: '/v1/match', headers: c.headers, payload: { limit: 1 } });
      expect(third.status, third.raw).toBe(200);
      expect(Q.service.billing.entries(c.id).filter((e) => e.kind === 'debit')).toHaveLength(2);
    } finally {
      Q.service.embedQuery = undefined;
    }
  });

  it('the core: admit past MAX_INFLIGHT is AppError overloaded until a slot is released', () => {
    const release = Q.service.metering.admit('match');
    let err: unknown;
    try {
      Q.service.metering.admit('match');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('overloaded');
    expect((err as AppError).status).toBe(503);
    expect((err as AppError).headers['retry-after']).toBeTruthy();
    release();
    release(); // twice is once
    const again = Q.service.metering.admit('match');
    expect(() => Q.service.metering.admit('match')).toThrow(AppError);
    again();
  });
});
