/**
 * The account dashboard in a real browser (Debian's chromium driven by playwright-core): sign in
 * through a link the real `newsmatch accounts login-link` printed, create a key, read its secret
 * off the page, call /v1/sources with it, find the call in the usage chart and the ledger,
 * revoke the key through its confirmation, and see the next call refused. A screenshot of each
 * step is written under test-results/dashboard/ and the paths printed.
 *
 * Skipped only where /usr/bin/chromium is missing and CI is not set (as test/playground.test.ts).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_BROWSER, launchChromium } from './helpers/browser.js';
import { cli } from './helpers/cli.js';
import { startHarness, type Harness } from './helpers/service.js';
const SHOTS = resolve('test-results', 'dashboard');

describe.skipIf(!HAS_BROWSER)('the dashboard in chromium', () => {
  let h: Harness;
  let base: string;
  let account: string;
  let browser: Browser;
  let page: Page;
  /** Uncaught errors and console errors (CSP violations land here). */
  const problems: string[] = [];
  const shots: string[] = [];

  const shot = async (name: string) => {
    const file = join(SHOTS, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    shots.push(file);
  };
  const call = (secret: string, requestId: string) =>
    fetch(`${base}/v1/sources`, { headers: { authorization: `Bearer ${secret}`, 'x-request-id': requestId } });

  beforeAll(async () => {
    h = await startHarness({ corpus: null });
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    const addr = h.app.server.address();
    if (addr === null || typeof addr === 'string') throw new Error('no port');
    base = `http://127.0.0.1:${addr.port}`;
    account = h.service.billing.createAccount('Browser & Co').id;
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('response', (res) => {
      if (res.status() >= 400) problems.push(`${res.status()} ${res.url()}`);
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
    if (shots.length > 0) console.log(`[dashboard] screenshots in ${SHOTS}:\n${shots.join('\n')}`);
  });

  it('signs in through the link the CLI printed, creates a key, uses it, sees the call charted and in the ledger, revokes it, and the next call is refused', async () => {
    const r = cli(['accounts', 'login-link', account, '--public-url', base], h.env);
    expect(r.status, r.stderr).toBe(0);
    const link = r.stdout.trimEnd().split('\n').at(-1)!;
    expect(link.startsWith(`${base}/account/login?token=`)).toBe(true);

    await page.goto(link);
    await shot('01-sign-in');
    await page.click('#sign-in');
    await page.waitForURL(`${base}/account`);
    const cookies = await page.context().cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ name: 'nm_session', path: '/account', httpOnly: true, sameSite: 'Strict', secure: false });
    expect(await page.textContent('#account-id')).toBe(account);
    expect(await page.textContent('#credits-total')).toBe('250');
    expect(await page.textContent('header')).toContain('Browser & Co');
    await shot('02-overview');

    await page.click('nav a[href="/account/keys"]');
    await page.fill('input[name="name"]', 'from the browser');
    await page.check('input[name="scope"][value="sources"]');
    await page.click('#create-key button[type="submit"]');
    await page.waitForSelector('#secret');
    const secret = await page.inputValue('#secret');
    expect(secret).toMatch(/^nmb_[A-Za-z0-9_-]{43}$/);
    await shot('03-key-created');
    const keyId = (await page.textContent('#created code:last-of-type'))!;
    expect(h.service.keys.get(keyId)).toMatchObject({ account, name: 'from the browser', scopes: ['sources'], revokedAt: null });

    const ok = await call(secret, 'browser-call-1');
    expect(ok.status).toBe(200);
    const debit = h.service.billing.entries(account).find((e) => e.requestId === 'browser-call-1')!;
    expect(debit.kind).toBe('debit');
    const day = new Date(debit.at).toISOString().slice(0, 10);

    await page.click('nav a[href="/account/usage"]');
    const bar = await page.$eval(`svg[data-measure="requests"] g[data-day="${day}"] rect[data-product="sources"]`, (r: any) => ({
      value: r.dataset.value as string,
      height: Number(r.getAttribute('height')),
    }));
    expect(bar.value).toBe('1');
    expect(bar.height).toBeGreaterThan(0);
    const credits = await page.$eval(`svg[data-measure="credits"] g[data-day="${day}"]`, (g: any) => g.dataset.total as string);
    expect(credits).toBe('1');
    const row = await page.textContent(`#ledger tr[data-seq="${debit.seq}"]`);
    expect(row).toContain('browser-call-1');
    expect(row).toContain('sources');
    await shot('04-usage');

    await page.click('nav a[href="/account/keys"]');
    expect(await page.textContent(`tr[data-key="${keyId}"] .last-used`)).not.toBe('never');
    expect(await page.content()).not.toContain(secret); // shown once only
    await page.click(`tr[data-key="${keyId}"] a`);
    await page.waitForSelector('#revoke');
    await shot('05-revoke-confirm');
    // A key confirmed on the page is still live until the form is sent.
    expect((await call(secret, 'browser-call-2')).status).toBe(200);
    await page.click('#revoke button');
    await page.waitForURL(`${base}/account/keys`);
    expect(await page.getAttribute(`tr[data-key="${keyId}"]`, 'class')).toBe('revoked');
    await shot('06-revoked');

    const refused = await call(secret, 'browser-call-3');
    expect(refused.status).toBe(401);
    expect((await refused.json()).error).toBe('unauthorized');

    await page.click('header button[type="submit"]'); // sign out
    await page.waitForURL(`${base}/account/login`);
    await page.goto(`${base}/account`);
    expect(page.url()).toBe(`${base}/account/login`);
    await shot('07-signed-out');

    for (const file of shots) expect(existsSync(file), file).toBe(true);
    expect(problems).toEqual([]);
  }, 120_000);
});
