/** GET /docs: the API reference page and its script, served by this server, no key, nothing from elsewhere. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_SCRIPT } from '../src/http/docs.js';
import { startHarness, type Harness } from './helpers/service.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({});
});

afterAll(async () => {
  await h?.close();
});

/** Every URL the page loads or links to: src, href, and url(...) in inline styles. */
const references = (html: string) => [...html.matchAll(/(?:src|href)\s*=\s*["']([^"']+)["']|url\(\s*["']?([^"')]+)/gi)].map((m) => m[1] ?? m[2]);

describe('GET /docs', () => {
  it('answers an HTML page without a key that loads only this server’s script and /openapi.json', async () => {
    for (const url of ['/docs', '/docs/', '/docs?x=1']) {
      const res = await h.inject({ url, noAuth: true });
      expect(res.status, url).toBe(200);
      expect(String(res.headers['content-type'])).toMatch(/^text\/html/);
      expect(res.headers['x-credits-charged']).toBeUndefined();
      expect(references(res.raw)).toEqual([DOCS_SCRIPT]);
      expect(res.raw).not.toMatch(/https?:\/\//);
      expect(res.raw).toContain('"url":"/openapi.json"');
      // What would reach out from the browser is off: fonts, telemetry, the request proxy.
      expect(res.raw).toContain('"withDefaultFonts":false');
      expect(res.raw).toContain('"telemetry":false');
      expect(res.raw).toContain('"proxyUrl":""');
    }
  });

  it('serves the script it references, from the package', async () => {
    const res = await h.inject({ url: DOCS_SCRIPT, noAuth: true });
    expect(res.status).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^application\/javascript/);
    expect(res.raw.length).toBeGreaterThan(1_000_000);
    expect(res.raw).toContain('createApiReference');
  });

  it('answers other methods and paths under /docs with a catalogue 4xx', async () => {
    for (const [method, url] of [
      ['POST', '/docs'],
      ['DELETE', DOCS_SCRIPT],
      ['GET', '/docs/js/scalar.js'],
      ['GET', '/docs/openapi.json'],
    ] as const) {
      const res = await h.inject({ method, url, noAuth: true, payload: method === 'POST' ? {} : undefined });
      expect([res.status, res.body?.error], `${method} ${url}`).toEqual([404, 'not_found']);
    }
    // A malformed path: refused by the router before any route (as on any path).
    expect((await h.inject({ url: '/docs/%ff', noAuth: true })).status).toBe(400);
    // A Host header no URL can be built from (the plugin's own page route would answer 500).
    const res = await h.inject({ url: '/docs', noAuth: true, headers: { host: 'a b[' } });
    expect(res.status).toBe(200);
  });
});
