/**
 * The account dashboard (issue 28) without a browser: sign-in links (the real CLI command and
 * the same function), sessions (cookie flags, expiry, tampering, logout from the CLI), the
 * pages and their headers, keys created (secret shown once) and revoked (refused on the next
 * call), CSRF on every form, one account trying another's keys and ledger, the sign-in rate
 * limit, links mailed through SMTP_URL (to a tiny SMTP receiver on 127.0.0.1), no link token,
 * session or key secret in any log line, a fuzz of form posts, and the pages, GET /v1/account
 * and `newsmatch usage` agreeing after a burst of metered calls.
 * test/dashboard-browser.test.ts drives the same flow in Chromium.
 */
import net from 'node:net';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { escapeHtml } from '../src/dashboard/index.js';
import { catalogue } from '../src/errors.js';
import { buildApp } from '../src/http/index.js';
import { DASHBOARD_CSP } from '../src/http/routes/dashboard.js';
import { createLogger } from '../src/log.js';
import { openService } from '../src/service.js';
import { cli } from './helpers/cli.js';
import { decode, expectErrorPage, hiddenValue, Visitor } from './helpers/dashboard.js';
import { makeTempDir, type App, type Service } from './helpers/service.js';

/**
 * The service's clock, moved by the tests. It starts at today's first minute (UTC), or at
 * yesterday's noon in the first 20 minutes of a day, so that the CLI, which reads the real
 * clock, is in the same plan period and a burst of calls stays on one UTC day.
 */
const DAY_MS = 86_400_000;
const REAL = Date.now();
const T0 = REAL % DAY_MS > 20 * 60_000 ? REAL - (REAL % DAY_MS) + 60_000 : REAL - (REAL % DAY_MS) - DAY_MS / 2;
const TODAY = new Date(T0).toISOString().slice(0, 10);
const shownTime = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
let now = T0;
const clock = () => now;

let dir: string;
let env: Record<string, string>;
let service: Service;
let app: App;
const logLines: string[] = [];
/** Every link token, session cookie and key secret this file saw: none may be in a log line. */
const secrets = new Set<string>();

const HOSTILE = '<img src=x onerror="alert(1)">&"\'';
let A: string;
let B: string;
let bKey: { id: string; secret: string };

beforeAll(async () => {
  dir = makeTempDir('newsmatch-dashboard-');
  env = { DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'debug', PUBLIC_URL: 'http://dash.test:8080' };
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  service = await openService(loadConfig(env), { log: createLogger('debug', sink), clock });
  app = await buildApp(service);
  await app.ready();
  A = service.billing.createAccount(HOSTILE).id;
  B = service.billing.createAccount('B corp').id;
  bKey = service.keys.create({ scheme: 'bearer', account: B, name: 'b key' });
  secrets.add(bKey.secret);
}, 60_000);

afterAll(async () => {
  await app?.close();
  await service?.close();
});

/** Each visitor its own client address: the sign-in rate limit is per address, and the clock stands still. */
let visitors = 0;
const address = () => `198.51.100.${++visitors}`;

/** A visitor signed in to `account` through a fresh link (from the same function the CLI calls). */
async function signedIn(account: string): Promise<Visitor> {
  const v = new Visitor(() => app, address());
  const { token } = service.sessions.createLoginLink(account);
  secrets.add(token);
  const res = await v.signIn(token);
  expect(res.status, res.body).toBe(303);
  expect(res.headers.location).toBe('/account');
  expect(v.cookie).not.toBeNull();
  secrets.add(v.cookie!.split('.')[0]);
  return v;
}

const api = (path: string, secret: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${secret}`, ...headers } });

/** Creates a key on the keys page; the secret as the page shows it. */
async function createKey(v: Visitor, fields: [string, string][] = []): Promise<{ id: string; secret: string; page: string }> {
  const csrf = await v.csrf();
  const res = await v.post('/account/keys', [['csrf', csrf], ...fields]);
  expect(res.status, res.body.slice(0, 400)).toBe(200);
  const secret = decode(/<input class="secret" id="secret" type="text" readonly value="([^"]+)"/.exec(res.body)![1]);
  const id = /Key id <code>([^<]+)<\/code>/.exec(res.body)![1];
  secrets.add(secret);
  return { id, secret, page: res.body };
}

describe('sign-in links and sessions', () => {
  it('`newsmatch accounts login-link` prints a one-time URL under PUBLIC_URL last; it signs in once, within 15 minutes', async () => {
    const r = cli(['accounts', 'login-link', A], env);
    expect(r.status, r.stderr).toBe(0);
    const url = r.stdout.trimEnd().split('\n').at(-1)!;
    expect(url).toMatch(/^http:\/\/dash\.test:8080\/account\/login\?token=[A-Za-z0-9_-]{43}$/);
    const token = new URL(url).searchParams.get('token')!;
    secrets.add(token);
    const v = new Visitor(() => app, address());
    // Opening the link shows a button: a link preview or a mail scanner does not use it up.
    const page = await v.get(`/account/login?token=${token}`);
    expect(page.status).toBe(200);
    expect(hiddenValue(page.body, 'token')).toBe(token);
    const res = await v.post('/account/login', { token });
    expect(res.status).toBe(303);
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(/^nm_session=[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}; /);
    expect(cookie).toContain('; HttpOnly');
    expect(cookie).toContain('; SameSite=Strict');
    expect(cookie).toContain('; Path=/account');
    expect(cookie).toContain(`; Max-Age=${12 * 3600}`);
    expect(cookie).not.toContain('Secure'); // PUBLIC_URL is http here
    secrets.add(v.cookie!.split('.')[0]);
    const overview = await v.get('/account');
    expect(overview.status).toBe(200);
    expect(overview.body).toContain(`<code id="account-id">${A}</code>`);
    // Single use: a second tab with the same link, or a replay, is refused.
    expectErrorPage(await new Visitor(() => app, address()).post('/account/login', { token }), 401, 'login_link_invalid');
    // A link of another session does not sign in after 15 minutes.
    const late = service.sessions.createLoginLink(A);
    secrets.add(late.token);
    now += 15 * 60_000 + 1;
    try {
      expectErrorPage(await new Visitor(() => app, address()).post('/account/login', { token: late.token }), 401, 'login_link_invalid');
    } finally {
      now = T0;
    }
    expectErrorPage(await new Visitor(() => app, address()).post('/account/login', { token: 'x'.repeat(43) }), 401, 'login_link_invalid');
  }, 60_000);

  it('the session cookie is Secure when PUBLIC_URL is https, or the request came over TLS', async () => {
    const tls = await buildApp({ ...service, config: { ...service.config, publicUrl: 'https://api.example.com' } });
    try {
      const { token } = service.sessions.createLoginLink(A);
      secrets.add(token);
      const res = await tls.inject({
        method: 'POST',
        url: '/account/login',
        payload: `token=${token}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(res.statusCode).toBe(303);
      expect(String(res.headers['set-cookie'])).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
      secrets.add(String(res.headers['set-cookie']).slice('nm_session='.length, 'nm_session='.length + 43));
    } finally {
      await tls.close();
    }
  });

  it('no session, an edited cookie or an expired session: pages send to the sign-in page, posts are 401 session_required', async () => {
    const v = await signedIn(A);
    expect((await v.get('/account/keys')).status).toBe(200);
    const anon = new Visitor(() => app, address());
    for (const path of ['/account', '/account/keys', '/account/usage']) {
      const res = await anon.get(path);
      expect(res.status, path).toBe(303);
      expect(res.headers.location).toBe('/account/login');
    }
    expectErrorPage(await anon.get('/account/usage.csv'), 401, 'session_required');
    expectErrorPage(await anon.post('/account/keys', { csrf: 'x' }), 401, 'session_required');
    const signIn = await anon.get('/account/login');
    expect(signIn.status).toBe(200);
    expect(signIn.body).toContain('This server does not send email. Ask the operator of this service for a sign-in link.');
    const [tok, sig] = v.cookie!.split('.');
    const edited = `${tok}.${sig.startsWith('A') ? 'B' : 'A'}${sig.slice(1)}`;
    expect((await anon.get('/account', { cookie: `nm_session=${edited}` })).status).toBe(303);
    expect((await anon.get('/account', { cookie: `nm_session=${tok}` })).status).toBe(303);
    now += 12 * 3_600_000;
    try {
      expect((await v.get('/account')).status).toBe(303);
    } finally {
      now = T0;
    }
    expect((await v.get('/account')).status).toBe(200);
  });

  it('signing out ends the session; `newsmatch accounts logout` ends every session of the account and its unused links', async () => {
    const one = await signedIn(A);
    const two = await signedIn(A);
    const other = await signedIn(B);
    const cookie = one.cookie!;
    const out = await one.post('/account/logout', { csrf: await one.csrf('/account') });
    expect(out.status).toBe(303);
    expect(out.headers.location).toBe('/account/login');
    expect(one.cookie).toBeNull();
    // The old cookie is dead on the server, not just forgotten by the browser.
    expect((await one.get('/account', { cookie: `nm_session=${cookie}` })).status).toBe(303);

    const unused = service.sessions.createLoginLink(A);
    secrets.add(unused.token);
    const r = cli(['accounts', 'logout', A], env);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^ended \\d+ dashboard sessions? of ${A}`));
    expect((await two.get('/account')).status).toBe(303);
    expectErrorPage(await new Visitor(() => app, address()).post('/account/login', { token: unused.token }), 401, 'login_link_invalid');
    expect((await other.get('/account')).status).toBe(200);
  }, 60_000);

  it('sign-in attempts are rate limited per client address: 429 too_many_sign_ins with Retry-After, a good link included', async () => {
    const limit = service.config.dashboardSignInsPerMinute;
    const v = new Visitor(() => app, '203.0.113.9');
    for (let i = 0; i < limit; i++) expectErrorPage(await v.post('/account/login', { token: `guess${i}` }), 401, 'login_link_invalid');
    const { token } = service.sessions.createLoginLink(A);
    secrets.add(token);
    const limited = await v.post('/account/login', { token });
    expectErrorPage(limited, 429, 'too_many_sign_ins');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another address is not held up; the link was not used by the refused attempt.
    expect((await new Visitor(() => app, '203.0.113.10').post('/account/login', { token: 'nope' })).status).toBe(401);
    now += 61_000;
    try {
      const res = await v.post('/account/login', { token });
      expect(res.status).toBe(303);
      secrets.add(v.cookie!.split('.')[0]);
    } finally {
      now = T0;
    }
  });
});

describe('pages', () => {
  it('every page and error: a strict CSP, no framing, no referrer, nothing cached, no script, no inline style', async () => {
    const v = await signedIn(A);
    const k = await createKey(v, [['name', 'for headers']]);
    for (const path of [
      '/account',
      '/account/keys',
      '/account/usage',
      '/account/usage.csv',
      '/account/login',
      '/account/style.css',
      `/account/keys/${k.id}/revoke`,
      '/account/nope',
    ]) {
      const res = await v.get(path);
      expect(res.status, path).toBeLessThan(500);
      expect(res.headers['content-security-policy'], path).toBe(DASHBOARD_CSP);
      expect(res.headers['x-frame-options'], path).toBe('DENY');
      expect(res.headers['referrer-policy'], path).toBe('no-referrer');
      expect(res.headers['cache-control'], path).toBe('no-store');
      expect(res.headers['x-content-type-options'], path).toBe('nosniff');
      if (String(res.headers['content-type']).startsWith('text/html')) {
        expect(res.body, path).not.toMatch(/<script/i);
        expect(res.body, path).not.toMatch(/\sstyle=/i);
        expect(res.body, path).not.toMatch(/<[^>]*\son[a-z]+=/i);
      }
    }
    expect(DASHBOARD_CSP).toContain("default-src 'none'");
    expect(DASHBOARD_CSP).toContain("frame-ancestors 'none'");
    expect(DASHBOARD_CSP).not.toContain('unsafe-inline');
    expectErrorPage(await v.get('/account/nope'), 404, 'not_found');
    // The account's own name is markup-free text on every page.
    const overview = (await v.get('/account')).body;
    expect(overview).toContain(escapeHtml(HOSTILE));
    expect(overview).not.toContain(HOSTILE);
  });

  it('the overview: credits by kind with the expiry of subscription credits, plans with this period’s use, included, overage and rate limits', async () => {
    service.billing.grant(B, 40);
    service.billing.subscribe(B, 'marketplace', 'pro');
    const v = await signedIn(B);
    const page = (await v.get('/account')).body;
    const s = service.billing.summary(B);
    expect(page).toContain(`<td class="num" id="credits-total">${s.credits.total}</td>`);
    expect(page).toMatch(/<tr data-kind="subscription"><td>Subscription<\/td><td class="num">40<\/td>/);
    expect(s.credits.expiring).toHaveLength(1);
    expect(page).toContain(`<li><span class="num">40</span> credits expire at ${s.credits.expiring[0].expires_at.slice(0, 16).replace('T', ' ')} UTC</li>`);
    const market = /<tr data-product="marketplace">([\s\S]*?)<\/tr>/.exec(page)![1];
    expect(market).toContain('<td>pro</td>');
    expect(market).toContain('<td class="num">3700</td>');
    expect(market).toContain('<td class="num">18500</td>');
    expect(market).toContain('<td class="rate">5/s</td>');
    expect(/<tr data-product="news">[\s\S]*?<td class="rate">([^<]+)<\/td>/.exec(page)![1]).toBe('10/min');
  });

  it('keys: created with a scope, the secret shown once, listed by prefix; the key works, then a revoke (confirmed) stops it on the next call', async () => {
    const v = await signedIn(A);
    const k = await createKey(v, [
      ['name', 'ci <b>'],
      ['scope', 'sources'],
      ['scope', 'news'],
      ['scope', 'sources'],
    ]);
    expect(k.secret).toMatch(/^nmb_[A-Za-z0-9_-]{43}$/);
    expect(k.page).toContain('this is the only time it is shown');
    const info = service.keys.get(k.id)!;
    expect(info).toMatchObject({ account: A, scheme: 'bearer', name: 'ci <b>', scopes: ['sources', 'news'], revokedAt: null });
    const list = (await v.get('/account/keys')).body;
    expect(list).not.toContain(k.secret);
    expect(list).toContain(`<tr data-key="${k.id}" class="live">`);
    expect(list).toContain(`<code>${k.secret.slice(0, 10)}…</code>`);
    expect(list).toContain('ci &lt;b&gt;');
    expect(list).toContain('sources, news');
    expect(/data-key="[^"]+" class="live">[\s\S]*?<td class="last-used">never<\/td>/.test(list)).toBe(true);

    expect((await api('/v1/sources', k.secret)).statusCode).toBe(200);
    expect((await api('/v1/jobs?q=x', k.secret)).statusCode).toBe(403); // out of its scope
    const used = (await v.get('/account/keys')).body;
    expect(new RegExp(`data-key="${k.id}" class="live">[\\s\\S]*?<td class="last-used">${shownTime(T0)}</td>`).test(used)).toBe(true);

    const confirm = await v.get(`/account/keys/${k.id}/revoke`);
    expect(confirm.status).toBe(200);
    expect(confirm.body).toContain('Revoke this key?');
    expect(service.keys.get(k.id)!.revokedAt).toBeNull(); // a GET changes nothing
    const res = await v.post(`/account/keys/${k.id}/revoke`, { csrf: hiddenValue(confirm.body, 'csrf')! });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/account/keys');
    const refused = await api('/v1/sources', k.secret);
    expect(refused.statusCode).toBe(401);
    expect(JSON.parse(refused.body).error).toBe('unauthorized');
    expect((await v.get('/account/keys')).body).toContain(`<tr data-key="${k.id}" class="revoked">`);
    expectErrorPage(await v.post(`/account/keys/${k.id}/revoke`, { csrf: await v.csrf() }), 404, 'key_not_found');
    // Bad input on the create form: 400 with the catalogue's code, nothing made.
    const before = service.keys.list().length;
    expectErrorPage(
      await v.post('/account/keys', [
        ['csrf', await v.csrf()],
        ['scope', 'nope'],
      ]),
      400,
      'bad_request',
    );
    expectErrorPage(
      await v.post('/account/keys', [
        ['csrf', await v.csrf()],
        ['name', 'x'.repeat(101)],
      ]),
      400,
      'bad_request',
    );
    expectErrorPage(
      await v.post('/account/keys', [
        ['csrf', await v.csrf()],
        ['name', 'a'],
        ['name', 'b'],
      ]),
      400,
      'bad_request',
    );
    expect(service.keys.list()).toHaveLength(before);
  });

  it('a reload of the page a key was made on (the same form, sent again) makes no second key', async () => {
    const v = await signedIn(A);
    const form = (await v.get('/account/keys')).body;
    const fields: [string, string][] = [
      ['csrf', hiddenValue(form, 'csrf')!],
      ['once', hiddenValue(form, 'once')!],
      ['name', 'reloaded'],
    ];
    const before = service.keys.list().length;
    const first = await v.post('/account/keys', fields);
    expect(first.status).toBe(200);
    expect(first.body).toContain('this is the only time it is shown');
    const id = service.keys.list().find((k) => k.name === 'reloaded')!.id;
    const again = await v.post('/account/keys', fields);
    expect(again.status).toBe(200);
    expect(again.body).toContain('This form was already sent');
    expect(again.body).toContain(id);
    expect(again.body).not.toContain('id="secret"');
    expect(service.keys.list()).toHaveLength(before + 1);
    // Each page gives a fresh nonce; a malformed one is 400.
    expect(hiddenValue(again.body, 'once')).not.toBe(hiddenValue(form, 'once'));
    expectErrorPage(
      await v.post('/account/keys', [
        ['csrf', await v.csrf()],
        ['once', 'x'],
      ]),
      400,
      'bad_request',
    );
    expect(service.keys.list()).toHaveLength(before + 1);
  });

  it('every form needs this session’s CSRF token: none, a forged one or another session’s is 403 csrf_failed', async () => {
    const a = await signedIn(A);
    const b = await signedIn(B);
    const k = await createKey(a);
    const otherCsrf = await b.csrf();
    const before = service.keys.list().length;
    for (const fields of [{}, { csrf: '' }, { csrf: 'x'.repeat(43) }, { csrf: otherCsrf }] as Record<string, string>[]) {
      expectErrorPage(await a.post('/account/keys', fields), 403, 'csrf_failed');
      expectErrorPage(await a.post(`/account/keys/${k.id}/revoke`, fields), 403, 'csrf_failed');
      expectErrorPage(await a.post('/account/logout', fields), 403, 'csrf_failed');
    }
    expect(service.keys.list()).toHaveLength(before);
    expect(service.keys.get(k.id)!.revokedAt).toBeNull();
    expect((await a.get('/account')).status).toBe(200);
  });

  it('one account never sees or touches another’s keys or ledger', async () => {
    const a = await signedIn(A);
    const b = await signedIn(B);
    const bCall = await api('/v1/sources', bKey.secret, { 'x-request-id': 'b-secret-call-1' });
    expect(bCall.statusCode).toBe(200);
    // B's key id, from A's session: the confirmation page and the revoke are the 404 of a key A does not have.
    expectErrorPage(await a.get(`/account/keys/${bKey.id}/revoke`), 404, 'key_not_found');
    expectErrorPage(await a.post(`/account/keys/${bKey.id}/revoke`, { csrf: await a.csrf() }), 404, 'key_not_found');
    // B's own CSRF token does not help A either (it is bound to B's session).
    expectErrorPage(await a.post(`/account/keys/${bKey.id}/revoke`, { csrf: await b.csrf() }), 403, 'csrf_failed');
    expect(service.keys.get(bKey.id)!.revokedAt).toBeNull();
    expect((await api('/v1/sources', bKey.secret)).statusCode).toBe(200);
    // A's pages and CSV name nothing of B's.
    for (const path of ['/account', '/account/keys', '/account/usage', '/account/usage.csv']) {
      const body = (await a.get(path)).body;
      expect(body, path).not.toContain(bKey.id);
      expect(body, path).not.toContain('b-secret-call-1');
      expect(body, path).not.toContain(B);
    }
    // B sees its own.
    expect((await b.get('/account/keys')).body).toContain(bKey.id);
    expect((await b.get('/account/usage.csv')).body).toContain('b-secret-call-1');
    // The operator's and gateway keys are nobody's to list.
    const keysPage = (await a.get('/account/keys')).body;
    for (const k of service.keys.list().filter((k) => k.account !== A)) expect(keysPage).not.toContain(k.id);
  });

  it('odd form posts and query strings: repeated and prototype-named fields, other content types, huge bodies: a 4xx page with a catalogue code, never a 5xx', async () => {
    const v = await signedIn(A);
    const csrf = await v.csrf();
    const codes = new Set<string>(Object.values(catalogue).map((e) => e.code));
    const keysBefore = service.keys.list().length;
    const cases: { url: string; body: string; type?: string }[] = [];
    const keyed = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '__proto__[csrf]', 'csrf[]', 'prototype'];
    for (const url of [
      '/account/keys',
      '/account/login',
      '/account/logout',
      `/account/keys/${bKey.id}/revoke`,
      '/account/keys/x/revoke',
      '/account/keys/__proto__/revoke',
    ]) {
      for (const k of keyed) cases.push({ url, body: `csrf=${csrf}&${encodeURIComponent(k)}=1` });
      cases.push({ url, body: `csrf=${csrf}&csrf=${csrf}` });
      cases.push({ url, body: `token=a&token=b` });
      cases.push({ url, body: `csrf=${csrf}&scope=__proto__&scope=constructor` });
      cases.push({ url, body: `csrf=%ZZ&name=%E2%80%AE%00` });
      cases.push({ url, body: JSON.stringify({ csrf }), type: 'application/json' });
      cases.push({ url, body: `csrf=${csrf}`, type: 'text/plain' });
      cases.push({ url, body: `--x\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n${csrf}\r\n--x--`, type: 'multipart/form-data; boundary=x' });
      cases.push({ url, body: `csrf=${csrf}&name=${'x'.repeat(20_000)}` });
    }
    for (const c of cases) {
      const res = await v.post(c.url, { raw: c.body }, c.type ? { 'content-type': c.type } : {});
      const ctx = `${c.url} ${c.type ?? 'form'} ${c.body.slice(0, 80)}: ${res.status} ${res.body.slice(0, 200)}`;
      // Every one is refused (an extra field by name, a repeated one, a body that is no form).
      expect(res.status, ctx).toBeGreaterThanOrEqual(400);
      expect(res.status, ctx).toBeLessThan(500);
      if (res.status >= 400) {
        expect(String(res.headers['content-type']), ctx).toMatch(/^text\/html/);
        const code = /data-error="([^"]+)"/.exec(res.body)?.[1];
        expect(codes.has(code!), ctx).toBe(true);
      }
    }
    expectErrorPage(await v.post('/account/keys', { raw: `csrf=${csrf}&name=${'x'.repeat(20_000)}` }), 413, 'payload_too_large');
    expectErrorPage(await v.post('/account/keys', { raw: `{"csrf":"${csrf}"}` }, { 'content-type': 'application/json' }), 415, 'unsupported_media_type');
    for (const q of ['?before=0', '?before=x', '?before=1&before=2', '?__proto__=1', '?constructor=1&x=1'])
      expectErrorPage(await v.get(`/account/usage${q}`), 400, 'bad_request');
    expectErrorPage(await v.get('/account/keys?x=1'), 400, 'bad_request');
    expect(service.keys.get(bKey.id)!.revokedAt).toBeNull();
    expect(service.keys.list()).toHaveLength(keysBefore);
    expect((await v.get('/account')).status).toBe(200); // still signed in: no post signed it out
    // The API's own bodies stay JSON only: a form sent to it is still 415.
    const apiForm = await app.inject({
      method: 'POST',
      url: '/v1/match',
      payload: 'a=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${bKey.secret}` },
    });
    expect(apiForm.statusCode).toBe(415);
  });
});

describe('the same facts as the API', () => {
  it('after a burst of metered calls, the pages, GET /v1/account and `newsmatch usage` agree on balance, use and ledger', async () => {
    const acct = service.billing.createAccount('burst').id;
    service.billing.buy(acct, 30);
    const v = await signedIn(acct);
    const k = await createKey(v);
    const calls: [string, number][] = [];
    for (let i = 0; i < 6; i++) calls.push([`/v1/sources`, 200]);
    calls.push(['/v1/news?q=storm', 200], ['/v1/news?q=port', 200]);
    calls.push(['/v1/news?q=%21%21%21', 400]); // charged, then refunded: empty_query
    for (const [i, [path, status]] of calls.entries()) {
      now = T0 + i * 1000;
      const res = await api(path, k.secret, { 'x-request-id': `burst-${i}` });
      expect(res.statusCode, `${path} ${res.body}`).toBe(status);
    }
    now = T0 + 60_000;
    try {
      const account = JSON.parse((await api('/v1/account', k.secret)).body);
      const overview = (await v.get('/account')).body;
      const usage = (await v.get('/account/usage')).body;
      const csv = (await v.get('/account/usage.csv')).body;
      const r = cli(['usage', '--account', acct], env);
      expect(r.status, r.stderr).toBe(0);

      // Balance: 250 free + 30 bought − 8 kept calls.
      expect(account.credits.total).toBe(272);
      expect(Number(/id="credits-total">(\d+)</.exec(overview)![1])).toBe(account.credits.total);
      expect(Number(/^credits: (\d+) /m.exec(r.stdout)![1])).toBe(account.credits.total);
      for (const kind of ['free', 'purchased', 'subscription'] as const) {
        expect(Number(new RegExp(`<tr data-kind="${kind}"><td>[^<]+</td><td class="num">(\\d+)</td>`).exec(overview)![1]), kind).toBe(account.credits[kind]);
      }
      // This period's use per product.
      for (const sub of account.subscriptions) {
        const shown = Number(
          new RegExp(`<tr data-product="${sub.product}">\\s*<td>[^<]*</td><td>[^<]*</td><td class="num used">(\\d+)</td>`).exec(overview)![1],
        );
        const cliUsed = Number(new RegExp(`^  ${sub.product} +\\S+ +\\S+ +used +(\\d+)`, 'm').exec(r.stdout)![1]);
        expect([shown, cliUsed], sub.product).toEqual([sub.used, sub.used]);
      }
      expect(account.subscriptions.find((s: any) => s.product === 'sources').used).toBe(6);
      expect(account.subscriptions.find((s: any) => s.product === 'news').used).toBe(2);
      // Today's row of the chart's numbers, and the chart's bars.
      const day = (p: string) =>
        /<td class="num requests">(-?\d+)<\/td><td class="num credits">(-?\d+)<\/td>/.exec(
          new RegExp(`<tr data-day="${TODAY}" data-product="${p}">.*?</tr>`).exec(usage)![0],
        )!;
      expect([Number(day('sources')[1]), Number(day('sources')[2])]).toEqual([6, 6]);
      expect([Number(day('news')[1]), Number(day('news')[2])]).toEqual([2, 2]);
      const bars = /<svg class="chart" data-measure="requests"[\s\S]*?<\/svg>/.exec(usage)![0];
      expect(bars).toContain(`<g data-day="${TODAY}" data-total="8">`);
      expect(bars).toMatch(/data-product="sources" data-value="6"/);
      expect(usage).toContain('Billed requests: <strong id="requests-total">8</strong>. Credits spent: <strong id="credits-spent">8</strong>.');

      // The ledger: the CSV, the page and the CLI list the same entries.
      const csvRows = csv
        .trimEnd()
        .split('\r\n')
        .slice(1)
        .map((l) => l.split(','));
      const cliRows = r.stdout
        .split('\nledger')[1]
        .split('\n')
        .slice(1)
        .filter(Boolean)
        .map((l) => l.trim().split(/\s+/));
      const entries = service.billing.entries(acct);
      expect(csvRows.map((c) => [Number(c[0]), c[2], Number(c[3]), Number(c[4]), c[5], c[7]])).toEqual(
        entries.map((e) => [e.seq, e.kind, e.credits, e.balance, e.product ?? '', e.requestId ?? '']),
      );
      expect(cliRows.map((c) => [Number(c[0]), c[2], Number(c[3]), Number(c[4])])).toEqual(entries.map((e) => [e.seq, e.kind, e.credits, e.balance]));
      expect(csvRows.at(-1)![4]).toBe(String(account.credits.total));
      const pageSeqs = [...usage.matchAll(/<tr data-seq="(\d+)">/g)].map((m) => Number(m[1]));
      expect(pageSeqs).toEqual(entries.map((e) => e.seq).reverse());
      for (let i = 0; i < calls.length; i++) expect(usage).toContain(`burst-${i}`);
      expect(csv).toMatch(/,refund,1,\d+,news,,burst-8,/);
    } finally {
      now = T0;
    }
  }, 60_000);

  it('the ledger pages, newest first, 50 a page, to the oldest', async () => {
    const acct = service.billing.createAccount('pages').id;
    for (let i = 0; i < 120; i++) service.billing.grant(acct, 1);
    const v = await signedIn(acct);
    const seen: number[] = [];
    let url = '/account/usage';
    for (let p = 0; p < 10; p++) {
      const body = (await v.get(url)).body;
      seen.push(...[...body.matchAll(/<tr data-seq="(\d+)">/g)].map((m) => Number(m[1])));
      const older = /<a href="\/account\/usage\?before=(\d+)" id="older">/.exec(body);
      if (!older) break;
      url = `/account/usage?before=${older[1]}`;
    }
    const all = service.billing.entries(acct).map((e) => e.seq);
    expect(seen).toEqual([...all].reverse());
    expect(all.length).toBeGreaterThan(100);
  });
});

/** A mail as the receiver got it: envelope and the raw message. */
interface Mail {
  from: string;
  to: string[];
  data: string;
}

/**
 * A tiny SMTP receiver on 127.0.0.1 (node:net): greets, takes EHLO, MAIL, RCPT and DATA,
 * keeps each message. `next()` resolves with the next message to arrive (no timer: a mail that
 * never comes fails the test by its timeout).
 */
async function smtpReceiver() {
  const mails: Mail[] = [];
  const waiting: ((m: Mail) => void)[] = [];
  const server = net.createServer((socket) => {
    let buf = '';
    let inData = false;
    let mail: Mail = { from: '', to: [], data: '' };
    socket.write('220 test ESMTP\r\n');
    socket.on('data', (chunk) => {
      buf += chunk.toString('latin1');
      for (let i = buf.indexOf('\r\n'); i >= 0; i = buf.indexOf('\r\n')) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (inData) {
          if (line !== '.') mail.data += `${line.startsWith('..') ? line.slice(1) : line}\n`;
          else {
            inData = false;
            mails.push(mail);
            waiting.shift()?.(mail);
            mail = { from: '', to: [], data: '' };
            socket.write('250 queued\r\n');
          }
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'MAIL') mail.from = line;
        if (verb === 'RCPT') mail.to.push(line);
        if (verb === 'DATA') {
          inData = true;
          socket.write('354 go on\r\n');
        } else if (verb === 'QUIT') socket.end('221 bye\r\n');
        else socket.write(verb === 'EHLO' || verb === 'HELO' ? '250 test\r\n' : '250 ok\r\n');
      }
    });
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    mails,
    next: () => new Promise<Mail>((r) => waiting.push(r)),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A mail's text with quoted-printable soft breaks and escapes undone. */
const unQp = (s: string): string => s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h) => String.fromCharCode(Number.parseInt(h, 16)));

describe('sign-in links by mail', () => {
  it('without SMTP_URL there is no mail form: the page says to ask the operator, and a post is the 404 page', async () => {
    const v = new Visitor(() => app, address());
    const page = await v.get('/account/login');
    expect(page.body).not.toContain('action="/account/email-link"');
    expectErrorPage(await v.post('/account/email-link', { email: 'a@example.com' }), 404, 'not_found');
  });

  it('with SMTP_URL: a link mailed to the account’s address (set by `newsmatch accounts email`), pointing at PUBLIC_URL whatever the Host; the same answer for any address', async () => {
    const smtp = await smtpReceiver();
    const mailApp = await buildApp({
      ...service,
      config: { ...service.config, smtpUrl: `smtp://127.0.0.1:${smtp.port}`, smtpFrom: 'newsmatch <noreply@dash.test>' },
    });
    try {
      const set = cli(['accounts', 'email', B, 'Holder@Example.COM'], env);
      expect(set.status, set.stderr).toBe(0);
      expect(service.emails.of(B)).toBe('holder@example.com');
      const v = new Visitor(() => mailApp, address());
      const form = await v.get('/account/login');
      expect(form.body).toContain('<form method="post" action="/account/email-link">');
      expect(form.body).not.toContain('This server does not send email');

      const unknown = await v.post('/account/email-link', { email: 'nobody@example.com' }, { host: 'evil.example' });
      expect(unknown.status).toBe(200);
      expect(unknown.body).toContain('id="sent"');
      const arriving = smtp.next();
      const known = await v.post('/account/email-link', { email: ' HOLDER@example.com ' }, { host: 'evil.example' });
      expect(known.body).toBe(unknown.body); // nothing tells the two apart
      const mail = await arriving;
      expect(mail.to).toEqual(['RCPT TO:<holder@example.com>']);
      expect(mail.from).toBe('MAIL FROM:<noreply@dash.test>');
      const text = unQp(mail.data);
      expect(text).toMatch(/^Subject: Your newsmatch sign-in link$/m);
      const url = /http:\/\/dash\.test:8080\/account\/login\?token=([A-Za-z0-9_-]{43})/.exec(text);
      expect(url, text).not.toBeNull();
      expect(text).not.toContain('evil.example');
      secrets.add(url![1]);
      const signIn = await new Visitor(() => mailApp, address()).signIn(url![1]);
      expect(signIn.status).toBe(303);
      expect(smtp.mails).toHaveLength(1); // none for the address no account has

      expectErrorPage(await v.post('/account/email-link', { email: 'not an address' }), 400, 'bad_request');
      expectErrorPage(
        await v.post('/account/email-link', [
          ['email', 'holder@example.com'],
          ['email', 'x@example.com'],
        ]),
        400,
        'bad_request',
      );
      const signedInB = await signedIn(B);
      expect((await signedInB.get('/account')).body).toContain('<code id="email">holder@example.com</code>');
    } finally {
      await mailApp.close();
      await smtp.close();
    }
  }, 60_000);
});

describe('logs', () => {
  it('no sign-in link token, session token or key secret reached a log line; the sign-ins and keys were logged by id', () => {
    expect(secrets.size).toBeGreaterThan(10);
    const text = logLines.join('\n');
    for (const s of secrets) expect(text.includes(s), `a secret ${s.slice(0, 6)}… is in the log`).toBe(false);
    expect(text).toContain('dashboard: signed in');
    expect(text).toContain('dashboard: key created');
    expect(text).toContain('dashboard: key revoked');
    // The request lines were logged (debug level): the link's URL among them, redacted.
    expect(text).toMatch(/\/account\/login\?token=\[redacted\]/);
  });
});
