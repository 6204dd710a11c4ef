/** GET /openapi.json: an OpenAPI 3.1 document generated from the route schemas. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogue } from '../src/errors.js';
import { liveRouteTable } from '../src/http/routes/live.js';
import type { Param } from '../src/live/index.js';
import { SMALL, startHarness, type Harness } from './helpers/service.js';

let h: Harness;
let doc: any;

beforeAll(async () => {
  h = await startHarness({ corpus: { ...SMALL, articles: 20 } });
  const res = await h.inject({ url: '/openapi.json', noAuth: true });
  expect(res.status, res.raw).toBe(200);
  doc = res.body;
});

afterAll(async () => {
  await h?.close();
});

/** Follows local `$ref`s (`#/components/...`). */
function deref(node: any): any {
  let n = node;
  for (let i = 0; i < 10 && n && typeof n.$ref === 'string'; i++) {
    const path = n.$ref.replace(/^#\//, '').split('/');
    n = path.reduce((acc: any, k: string) => acc?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return n;
}

describe('GET /openapi.json', () => {
  it('is OpenAPI 3.1, version 1.0.0, served as JSON without a key', async () => {
    const res = await h.inject({ url: '/openapi.json', noAuth: true });
    expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
    expect(res.headers['x-request-id']).toBeTruthy();
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info?.version).toBe('1.0.0');
    expect(typeof doc.info?.title).toBe('string');
  });

  it('describes POST /v1/match with the request body schema of section 2.1', () => {
    const op = doc.paths?.['/v1/match']?.post;
    expect(op).toBeDefined();
    const schema = deref(deref(op.requestBody)?.content?.['application/json']?.schema);
    expect(schema).toBeDefined();
    expect(schema.type).toBe('object');
    expect(schema.additionalProperties).toBe(false);
    const props = schema.properties;
    expect(Object.keys(props).sort()).toEqual(
      [
        'after_seq',
        'cursor',
        'exclude_sources',
        'include_edits',
        'like',
        'limit',
        'min_score',
        'model',
        'order',
        'since',
        'sources',
        'text',
        'until',
        'vector',
      ].sort(),
    );
    const p = (k: string) => deref(props[k]);
    expect(p('vector').type).toBe('array');
    expect(p('vector').minItems).toBe(1024);
    expect(p('vector').maxItems).toBe(1024);
    expect(p('text').minLength).toBe(1);
    expect(p('text').maxLength).toBe(4000);
    expect(p('limit').type).toBe('integer');
    expect(p('limit').minimum).toBe(1);
    expect(p('limit').maximum).toBe(100);
    expect(p('min_score').minimum).toBe(-1);
    expect(p('min_score').maximum).toBe(1);
    expect(p('order').enum?.slice().sort()).toEqual(['relevance', 'time']);
    expect(p('include_edits').type).toBe('boolean');
    expect(p('like').type).toBe('string');
    // RFC 3339 or a bare date, as on every endpoint: the service reads them (time.ts readTimeRange), so no `format`.
    for (const k of ['since', 'until']) {
      expect(p(k).type).toBe('string');
      expect(p(k).description).toContain('YYYY-MM-DD');
    }
    for (const k of ['sources', 'exclude_sources']) {
      expect(p(k).type).toBe('array');
      expect(p(k).minItems).toBe(1);
      expect(p(k).maxItems).toBe(50);
    }
    expect(op.responses?.['200']).toBeDefined();
  });

  it('describes GET /v1/sources', () => {
    const op = doc.paths?.['/v1/sources']?.get;
    expect(op).toBeDefined();
    expect(op.responses?.['200']).toBeDefined();
  });
});

/** The query parameters of an operation, by name. */
function queryParams(op: any): Map<string, any> {
  return new Map((op?.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => [p.name, p]));
}

/** A value a schema accepts, for probes: an example, the first allowed value, the default, the lower bound. */
function sample(schema: any): unknown {
  const s = deref(schema);
  if (s.examples?.length) return s.examples[0];
  if (s.enum?.length) return s.enum[0];
  if (s.default !== undefined) return s.default;
  switch (s.type) {
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: s.minItems ?? 1 }, () => sample(s.items));
    case 'object':
      return Object.fromEntries((s.required ?? []).map((k: string) => [k, sample(s.properties[k])]));
  }
  // A string: a pattern without an example cannot be sampled, and is worth an example in the docs anyway.
  expect(s.pattern, `a string with a pattern and no example: ${JSON.stringify(s)}`).toBeUndefined();
  return 'x';
}

const declared = (endpoint: { params: object }) => Object.entries(endpoint.params as Record<string, Param<unknown>>);

describe('every parameter, in /openapi.json', () => {
  it('lists each live endpoint’s declared parameters: names, types, required, defaults, allowed values and bounds', () => {
    const routes = liveRouteTable(h.service.scrapers);
    expect(routes.length).toBeGreaterThanOrEqual(16);
    for (const route of routes) {
      const ctx = route.path;
      const endpoints = [...route.engines.values()].map((x) => x.endpoint);
      const listed = queryParams(doc.paths?.[route.path]?.get);
      const names = new Set(endpoints.flatMap((e) => Object.keys(e.params)));
      expect([...listed.keys()].sort(), ctx).toEqual(['engine', ...names].sort());

      const engine = listed.get('engine');
      expect(engine.required, `${ctx} engine`).toBe(route.engineRequired);
      expect(engine.schema.enum.slice().sort(), `${ctx} engine`).toEqual([...route.engines.keys()].sort());

      for (const name of names) {
        const at = `${ctx} ${name}`;
        const doc = listed.get(name);
        const decls = endpoints.map((e) => (e.params as Record<string, Param<unknown> | undefined>)[name]);
        const takers = decls.filter((d): d is Param<unknown> => d !== undefined);
        // Required where every engine of the path requires it (one engine: where it does).
        expect(doc.required, at).toBe(decls.every((d) => d?.required === true));
        // A default where every engine of the path has that same default.
        const defaults = decls.map((d) => d?.schema.default);
        expect(doc.schema.default, at).toEqual(defaults.every((d) => d !== undefined && d === defaults[0]) ? defaults[0] : undefined);
        if (endpoints.length === 1) {
          // One engine: the declaration as it is (swagger moves `description` beside the schema, and a sole example too).
          const { description, examples, ...schema } = takers[0].schema as Record<string, any>;
          expect(doc.schema, at).toEqual(schema);
          expect(doc.description, at).toBe(description);
          expect(doc.example, at).toBe(examples?.[0]);
          continue;
        }
        // Several: the type every engine gives it, and bounds and values that admit each engine's.
        for (const d of takers) {
          const s = d.schema as Record<string, any>;
          expect(doc.schema.type, at).toBe(s.type);
          if (s.enum) expect(doc.schema.enum, at).toEqual(expect.arrayContaining([...s.enum]));
          if (s.minimum !== undefined) expect(doc.schema.minimum, at).toBeLessThanOrEqual(s.minimum);
          if (s.maximum !== undefined) expect(doc.schema.maximum, at).toBeGreaterThanOrEqual(s.maximum);
          if (s.maxLength !== undefined) expect(doc.schema.maxLength, at).toBeGreaterThanOrEqual(s.maxLength);
        }
        // Taken by some engines only, or required by some: the description says which.
        if (takers.length < endpoints.length)
          for (const e of endpoints.filter((e) => Object.hasOwn(e.params, name))) expect(doc.description, at).toContain(e.engine);
      }
    }
  });

  it('types every query parameter of every /v1/ endpoint', () => {
    let count = 0;
    for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
      if (!path.startsWith('/v1/')) continue;
      for (const [method, op] of Object.entries<any>(ops)) {
        for (const p of queryParams(op).values()) {
          count++;
          expect(['string', 'integer', 'number', 'boolean'], `${method} ${path} ${p.name}`).toContain(p.schema?.type);
        }
      }
    }
    expect(count).toBeGreaterThan(80);
  });

  it('leaves no /v1/ route without a querystring schema, nor a POST without a body schema: an unknown name is refused as such', async () => {
    const live = new Map(liveRouteTable(h.service.scrapers).map((r) => [r.path, r]));
    let probed = 0;
    for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
      if (!path.startsWith('/v1/')) continue;
      for (const [method, op] of Object.entries<any>(ops)) {
        // What the route requires, sampled, so that the unknown name is what fails. A live path
        // serving several engines: each engine with its own required parameters.
        const route = live.get(path);
        const queries: Record<string, unknown>[] = route
          ? [...route.engines].map(([name, { endpoint }]) => ({
              engine: name,
              ...Object.fromEntries(
                declared(endpoint)
                  .filter(([, p]) => p.required)
                  .map(([n, p]) => [n, sample(p.schema)]),
              ),
            }))
          : [Object.fromEntries([...queryParams(op).values()].filter((p) => p.required).map((p) => [p.name, p.example ?? sample(p.schema)]))];
        const bodySchema = deref(deref(op.requestBody)?.content?.['application/json']?.schema);
        if (method === 'post') expect(bodySchema, `${path}: POST without a body schema`).toBeDefined();
        const body = bodySchema ? (sample(bodySchema) as Record<string, unknown>) : undefined;
        for (const q of queries) {
          const qs = new URLSearchParams(Object.entries({ ...q, zz_probe: '1' }).map(([k, v]) => [k, String(v)]));
          const res = await h.inject({ method: method.toUpperCase() as 'GET', url: `${path}?${qs}`, headers: h.bearerHeaders, noAuth: true, payload: body });
          expect([res.status, res.body?.message], `${method} ${path}?${qs}`).toEqual([
            expect.toSatisfy((s: number) => s === 400 || s === 422),
            expect.stringMatching(/^unknown parameter "zz_probe"/),
          ]);
          probed++;
        }
        if (body) {
          const res = await h.inject({ method: 'POST', url: path, headers: h.bearerHeaders, noAuth: true, payload: { ...body, zz_probe: 1 } });
          expect([res.status, res.body?.message], `${method} ${path} body`).toEqual([
            expect.toSatisfy((s: number) => s === 400 || s === 422),
            'unknown field "zz_probe"',
          ]);
        }
      }
    }
    expect(probed).toBeGreaterThan(25);
  });
});

/** Every operation of the document, with its method and path. */
function operations(): { at: string; path: string; op: any }[] {
  return Object.entries<Record<string, any>>(doc.paths).flatMap(([path, ops]) =>
    Object.entries<any>(ops).map(([method, op]) => ({ at: `${method} ${path}`, path, op })),
  );
}

/** The error codes an operation documents, by status: the `enum` narrowing ErrorBody's `error`. */
function documentedErrors(op: any): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const [status, response] of Object.entries<any>(op.responses)) {
    if (Number(status) < 400) continue;
    const schema = response.content?.['application/json']?.schema;
    expect(schema.allOf?.[0]?.$ref, `${status}`).toBe('#/components/schemas/ErrorBody');
    out.set(Number(status), schema.allOf[1].properties.error.enum);
  }
  return out;
}

const METERING_ONLY = ['not_subscribed', 'quota_exceeded', 'rate_limited', 'overloaded', 'product_unavailable'];
/**
 * Free operations of a product (managing monitors: their matches are what is charged): they
 * check the product is offered and subscribed, but are neither charged nor rate limited.
 */
const FREE_OF_A_PRODUCT = new Set([
  'createMonitor',
  'listMonitors',
  'getMonitor',
  'deleteMonitor',
  'resumeMonitor',
  'listMonitorDeliveries',
  'streamMonitorEvents',
]);
const PRODUCT_CHECKS = new Set(['not_subscribed', 'product_unavailable']);

describe('the document for readers', () => {
  it('names every operation uniquely (camelCase) and tags it with a described tag', () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(
      ids.every((id) => /^[a-z][A-Za-z0-9]+$/.test(id)),
      ids.join(', '),
    ).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const tags = new Map<string, string>(doc.tags.map((t: any) => [t.name, t.description]));
    for (const { at, op } of operations()) {
      expect(op.tags?.length, at).toBeGreaterThan(0);
      for (const t of op.tags) expect(tags.get(t), `${at} tag ${t}`).toBeTruthy();
    }
    expect(ids).toEqual(expect.arrayContaining(['matchArticles', 'searchNews', 'searchJobs', 'listSources', 'getProduct', 'getAccount', 'getHealth']));
  });

  it('says where the server is and shares its common schemas', () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(Object.keys(doc.components.schemas).sort()).toEqual(['Article', 'ErrorBody', 'LiveEnvelope']);
    const text = JSON.stringify(doc.paths);
    for (const name of ['Article', 'ErrorBody', 'LiveEnvelope']) expect(text).toContain(`"#/components/schemas/${name}"`);
  });

  it('gives every operation a 200 example, and every body a request example', () => {
    for (const { at, op } of operations()) {
      const ok = op.responses['200'].content;
      expect(Object.values<any>(ok)[0].example, at).toBeDefined();
      if (op.requestBody) expect(op.requestBody.content['application/json'].example, at).toBeDefined();
    }
  });
});

describe('the error codes each operation documents', () => {
  it('lists each code under the status the catalogue gives it', () => {
    for (const { at, op } of operations()) {
      for (const [status, codes] of documentedErrors(op)) {
        for (const code of codes) {
          const entries = Object.values(catalogue).filter((e) => e.code === code);
          expect(
            entries.map((e) => e.status),
            `${at}: ${code} under ${status}`,
          ).toContain(status);
        }
      }
    }
  });

  it('documents the metering codes on every metered operation, and on no other', () => {
    let metered = 0;
    for (const { at, op } of operations()) {
      const codes = [...documentedErrors(op).entries()].flatMap(([s, cs]) => cs.map((c) => `${s} ${c}`));
      if (op['x-metered']) {
        metered++;
        expect(codes, at).toEqual(
          expect.arrayContaining([
            '401 unauthorized',
            '403 forbidden',
            '403 not_subscribed',
            '429 quota_exceeded',
            '503 product_unavailable',
            '503 overloaded',
            '422 invalid_request',
          ]),
        );
      } else {
        const free = FREE_OF_A_PRODUCT.has(op.operationId);
        for (const c of METERING_ONLY) if (!(free && PRODUCT_CHECKS.has(c))) expect(codes.join(' '), at).not.toContain(c);
      }
    }
    // Every /v1/ endpoint but the free account summary and the free management of monitors.
    const free = operations().filter(({ op }) => op.operationId === 'getAccount' || FREE_OF_A_PRODUCT.has(op.operationId));
    expect(metered).toBe(operations().filter(({ path }) => path.startsWith('/v1/')).length - free.length);
  });

  it('documents no code an operation cannot give: no key codes without a key, no body codes without a body, no gateway limit on Bearer-only routes', () => {
    for (const { at, op } of operations()) {
      const codes = [...documentedErrors(op).entries()].flatMap(([s, cs]) => cs.map((c) => `${s} ${c}`));
      const keyed = (op.security ?? doc.security ?? []).length > 0;
      if (!keyed)
        expect(
          codes.filter((c) => /unauthorized|forbidden/.test(c)),
          at,
        ).toEqual([]);
      if (!op.requestBody)
        expect(
          codes.filter((c) => /payload_too_large|unsupported_media_type|^400 invalid_request/.test(c)),
          at,
        ).toEqual([]);
      const bearerOnly = keyed && op.security.every((s: Record<string, unknown>) => Object.keys(s).join() === 'bearer');
      if (bearerOnly) expect(codes, at).not.toContain('429 rate_limited');
      if (at.endsWith(' /healthz')) expect(codes, at).toEqual([]);
      // A query string that fails its schema: 400 bad_request on the platform's GET endpoints, 422 elsewhere.
      if (at.startsWith('get /v1/')) expect(codes.filter((c) => c === '400 bad_request' || c === '422 invalid_request').length, at).toBeGreaterThan(0);
    }
  });

  it('documents at least one 4xx on every /v1/ operation', () => {
    for (const { at, path, op } of operations()) {
      if (path.startsWith('/v1/'))
        expect(
          Object.keys(op.responses).some((s) => /^4\d\d$/.test(s)),
          at,
        ).toBe(true);
    }
  });
});

describe('route schemas (compiled on first use, src/http/validation.ts)', () => {
  it('every route schema compiles', () => {
    expect(h.app.schemas.pending).toBeGreaterThan(50);
    h.app.schemas.compileAll();
    expect(h.app.schemas.pending).toBe(0);
  });
});
