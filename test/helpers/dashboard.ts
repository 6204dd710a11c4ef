/**
 * A visitor of the account dashboard without a browser: plain GETs and urlencoded form posts
 * over `app.inject`, keeping the session cookie as a browser would (its Set-Cookie, its
 * clearing), and reading what the pages show.
 */
import { expect } from 'vitest';
import type { App } from './service.js';

export interface PageRes {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/** Form fields as pairs, so a field may repeat and be named anything (`__proto__`). */
export type Fields = [string, string][] | Record<string, string>;

export const encodeForm = (fields: Fields): string => new URLSearchParams(Array.isArray(fields) ? fields : Object.entries(fields)).toString();

export class Visitor {
  cookie: string | null = null;

  constructor(
    readonly app: () => App,
    readonly remoteAddress = '127.0.0.1',
  ) {}

  async get(url: string, headers: Record<string, string> = {}): Promise<PageRes> {
    return this.#send('GET', url, undefined, headers);
  }

  /** Posts `fields` urlencoded (or `raw` as it is, with its own content type in `headers`). */
  async post(url: string, fields: Fields | { raw: string }, headers: Record<string, string> = {}): Promise<PageRes> {
    const body = 'raw' in fields && typeof fields.raw === 'string' ? fields.raw : encodeForm(fields as Fields);
    return this.#send('POST', url, body, { 'content-type': 'application/x-www-form-urlencoded', ...headers });
  }

  /** Signs in with a sign-in link's token: opens the link's page, then posts its form. */
  async signIn(token: string): Promise<PageRes> {
    const page = await this.get(`/account/login?token=${encodeURIComponent(token)}`);
    expect(page.status).toBe(200);
    expect(hiddenValue(page.body, 'token')).toBe(token);
    return this.post('/account/login', { token });
  }

  /** The CSRF token of the page at `url`. */
  async csrf(url = '/account/keys'): Promise<string> {
    const page = await this.get(url);
    expect(page.status, page.body.slice(0, 300)).toBe(200);
    return hiddenValue(page.body, 'csrf')!;
  }

  async #send(method: 'GET' | 'POST', url: string, payload: string | undefined, headers: Record<string, string>): Promise<PageRes> {
    const all: Record<string, string> = { ...headers };
    if (this.cookie !== null && all.cookie === undefined) all.cookie = `nm_session=${this.cookie}`;
    const res = await this.app().inject({ method, url, payload, headers: all, remoteAddress: this.remoteAddress });
    const set = res.headers['set-cookie'];
    for (const line of Array.isArray(set) ? set : set ? [set] : []) {
      const m = /^nm_session=([^;]*)/.exec(line);
      if (m) this.cookie = /Max-Age=0/.test(line) || m[1] === '' ? null : m[1];
    }
    return { status: res.statusCode, headers: res.headers as PageRes['headers'], body: res.body };
  }
}

/** The value of the hidden input `name` on a page (the first one). */
export function hiddenValue(html: string, name: string): string | undefined {
  const m = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html);
  return m ? decode(m[1]) : undefined;
}

/** The text of the HTML entities the pages write (html.ts escapes these five). */
export const decode = (s: string): string =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

/** The error page's code and status: the catalogue code a page shows, as a JSON error's `error`. */
export function expectErrorPage(res: PageRes, status: number, code: string): void {
  const ctx = `${res.status} ${res.body.slice(0, 400)}`;
  expect(res.status, ctx).toBe(status);
  expect(String(res.headers['content-type']), ctx).toMatch(/^text\/html/);
  expect(res.body, ctx).toContain(`data-error="${code}"`);
  expect(res.body, ctx).toContain(`<code class="code">${code}</code>`);
}
