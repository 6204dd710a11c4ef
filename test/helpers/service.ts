/**
 * Test harness: a service on a temporary DATA_DIR with one gateway key and one bearer key,
 * an optional generated corpus imported once, and request helpers over `app.inject`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openService } from '../../src/service.js';
import { buildApp } from '../../src/http/app.js';
import { generateCorpus, writeCorpusJsonl, type Corpus, type CorpusOptions } from './corpus.js';

export type Service = Awaited<ReturnType<typeof openService>>;
export type App = Awaited<ReturnType<typeof buildApp>>;
export type ImportSummary = Awaited<ReturnType<Service['importFile']>>;

export const GATEWAY_HOST = 'gw.test';

/** Full corpus (1,800 articles) and smaller ones for files that need less. */
export const FULL: CorpusOptions = { seed: 20250101, articles: 1800 };
export const MEDIUM: CorpusOptions = { seed: 777, articles: 700 };
export const SMALL: CorpusOptions = { seed: 4242, articles: 150 };

export interface Res {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  /** Parsed JSON body, or undefined when it is not JSON. */
  body: any;
  raw: string;
}

export interface InjectOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'HEAD' | 'OPTIONS';
  url: string;
  headers?: Record<string, string | undefined>;
  /** An object is sent as JSON; a string or Buffer is sent raw; undefined sends no body. */
  payload?: unknown;
  /** Leave out the default auth headers. */
  noAuth?: boolean;
}

export interface PageAllResult {
  items: any[];
  pages: { count: number; limit: number; next_cursor: string | null }[];
}

export interface Harness {
  dir: string;
  env: Record<string, string>;
  service: Service;
  app: App;
  corpus: Corpus | null;
  corpusFile: string | null;
  importSummary: ImportSummary | null;
  gateway: { id: string; secret: string };
  bearer: { id: string; secret: string };
  gatewayHeaders: Record<string, string>;
  bearerHeaders: Record<string, string>;
  inject(o: InjectOptions): Promise<Res>;
  /**
   * POST /v1/match with gateway auth. `headers` are merged over the auth headers; a header
   * set to undefined is left out.
   */
  match(body?: unknown, headers?: Record<string, string | undefined>): Promise<Res>;
  /** Follows next_cursor to the end, asserting 200 on every page and no duplicate id. */
  pageAll(body: Record<string, unknown>, limits?: number | number[], maxPages?: number): Promise<PageAllResult>;
  /**
   * Closes service and app, runs `between` (e.g. to delete files), and opens them again on the
   * same DATA_DIR (keys and data persist).
   */
  reopen(between?: () => void | Promise<void>): Promise<void>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** A corpus to generate and import; null for an empty service. */
  corpus?: CorpusOptions | null;
  env?: Record<string, string>;
  /** Unix ms for plans, periods, rate limits and monitors' delivery schedule (tests move it instead of waiting). */
  clock?: () => number;
  /** Start the service's background work (as serve does) before the import: cluster mode applies the revision log there. */
  background?: boolean;
}

function parse(raw: string): any {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

export function makeTempDir(prefix = 'newsmatch-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const dir = makeTempDir();
  const dataDir = join(dir, 'data');
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    GATEWAY_HOST,
    LOG_LEVEL: 'silent',
    ...opts.env,
  };
  let service = await openService(loadConfig(env), { clock: opts.clock });
  if (opts.background) service.startBackground();
  let app = await buildApp(service);
  await app.ready();
  const gateway = service.keys.create({ scheme: 'gateway', name: 'test gateway' });
  const bearer = service.keys.create({ scheme: 'bearer', name: 'test bearer' });
  const gatewayHeaders = { 'x-gateway-key': gateway.secret, 'x-gateway-host': GATEWAY_HOST };
  const bearerHeaders = { authorization: `Bearer ${bearer.secret}` };

  let corpus: Corpus | null = null;
  let corpusFile: string | null = null;
  let importSummary: ImportSummary | null = null;
  if (opts.corpus !== null) {
    corpus = generateCorpus(opts.corpus ?? FULL);
    corpusFile = join(dir, 'corpus.jsonl');
    writeCorpusJsonl(corpus, corpusFile);
    importSummary = await service.importFile(corpusFile);
  }

  const h: Harness = {
    dir,
    env,
    get service() {
      return service;
    },
    get app() {
      return app;
    },
    corpus,
    corpusFile,
    importSummary,
    gateway,
    bearer,
    gatewayHeaders,
    bearerHeaders,
    async inject(o: InjectOptions): Promise<Res> {
      const merged: Record<string, string | undefined> = { ...(o.noAuth ? {} : gatewayHeaders), ...o.headers };
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(merged)) if (v !== undefined) headers[k] = v;
      let payload: string | Buffer | undefined;
      if (o.payload === undefined) payload = undefined;
      else if (typeof o.payload === 'string' || Buffer.isBuffer(o.payload)) payload = o.payload;
      else {
        payload = JSON.stringify(o.payload);
        if (!Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
      }
      const res = await app.inject({ method: o.method ?? 'GET', url: o.url, headers, payload });
      return { status: res.statusCode, headers: res.headers as Res['headers'], body: parse(res.body), raw: res.body };
    },
    match(body?: unknown, headers?: Record<string, string | undefined>): Promise<Res> {
      return h.inject({
        method: 'POST',
        url: '/v1/match',
        headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
        payload: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
    },
    async pageAll(body: Record<string, unknown>, limits: number | number[] = 100, maxPages = 2000): Promise<PageAllResult> {
      const ls = Array.isArray(limits) ? limits : [limits];
      const items: any[] = [];
      const pages: PageAllResult['pages'] = [];
      const seen = new Set<string>();
      let cursor: string | null = null;
      for (let p = 0; p < maxPages; p++) {
        const limit = ls[p % ls.length];
        const req: Record<string, unknown> = { ...body, limit };
        if (cursor !== null) req.cursor = cursor;
        const res = await h.match(req);
        if (res.status !== 200) {
          throw new Error(`page ${p + 1} of ${JSON.stringify({ ...body, vector: body.vector ? '[...]' : undefined })}: ${res.status} ${res.raw}`);
        }
        expect(res.body.order).toBe(body.order ?? 'time');
        expect(res.body.count).toBe(res.body.items.length);
        expect(res.body.items.length).toBeLessThanOrEqual(limit);
        for (const it of res.body.items) {
          expect(seen.has(it.id), `duplicate id ${it.id} on page ${p + 1}`).toBe(false);
          seen.add(it.id);
          items.push(it);
        }
        pages.push({ count: res.body.count, limit, next_cursor: res.body.next_cursor });
        expect(res.body).toHaveProperty('next_cursor');
        cursor = res.body.next_cursor;
        if (cursor === null) return { items, pages };
        expect(typeof cursor).toBe('string');
        expect(res.body.count, 'a page with a next_cursor must not be empty').toBeGreaterThan(0);
      }
      throw new Error(`pageAll: more than ${maxPages} pages`);
    },
    async reopen(between?: () => void | Promise<void>): Promise<void> {
      await app.close();
      await service.close();
      await between?.();
      service = await openService(loadConfig(env), { clock: opts.clock });
      if (opts.background) service.startBackground();
      app = await buildApp(service);
      await app.ready();
    },
    async close(): Promise<void> {
      try {
        await app.close();
      } finally {
        try {
          await service.close();
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }
    },
  };
  return h;
}

// ---- assertions shared by the test files ----

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const EVENT_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/**
 * The whole error body: exactly `error`, `message`, `detail` (plus `matched_at_least` on
 * too_many_matches), JSON content type, and an X-Request-ID header.
 */
export function expectError(res: Res, status: number, code: string, opts: { names?: string | RegExp; extra?: Record<string, unknown> } = {}): void {
  const ctx = `${res.status} ${res.raw.slice(0, 500)}`;
  expect(res.status, ctx).toBe(status);
  expect(String(res.headers['content-type']), ctx).toMatch(/^application\/json/);
  expect(res.body, ctx).toEqual({
    error: code,
    message: expect.any(String),
    detail: expect.any(String),
    ...opts.extra,
  });
  expect(res.body.message.length, ctx).toBeGreaterThan(0);
  expect(res.body.detail.length, ctx).toBeGreaterThan(0);
  if (opts.names !== undefined) {
    if (typeof opts.names === 'string') expect(res.body.message, ctx).toContain(opts.names);
    else expect(res.body.message, ctx).toMatch(opts.names);
  }
  expect(res.headers['x-request-id'], ctx).toBeTruthy();
}

/** Shape of a match item. */
export function expectItemShape(it: any, scored: boolean): void {
  expect(Object.keys(it).sort()).toEqual(['best_chunk', 'body', 'event_time', 'id', 'score', 'source_name', 'source_url', 'title']);
  expect(it.id).toMatch(UUID);
  expect(typeof it.title).toBe('string');
  expect(typeof it.body).toBe('string');
  expect(typeof it.source_name).toBe('string');
  expect(typeof it.source_url).toBe('string');
  expect(it.event_time).toMatch(EVENT_TIME);
  if (scored) {
    expect(typeof it.score).toBe('number');
    expect(typeof it.best_chunk).toBe('string');
  } else {
    expect(it.score).toBeNull();
    expect(it.best_chunk).toBeNull();
  }
}

/** Newest-first, ties broken by id descending. */
export function expectNewestFirst(items: { id: string; event_time: string }[]): void {
  for (let i = 1; i < items.length; i++) {
    const a = items[i - 1];
    const b = items[i];
    expect(a.event_time >= b.event_time, `item ${i} ${b.event_time} is newer than item ${i - 1} ${a.event_time}`).toBe(true);
    if (a.event_time === b.event_time) {
      expect(a.id > b.id, `tie at ${a.event_time}: id ${a.id} then ${b.id} is not id-descending`).toBe(true);
    }
  }
}
