/** GET /openapi.json: an OpenAPI 3.1 document generated from the route schemas. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
      ['cursor', 'exclude_sources', 'include_edits', 'like', 'limit', 'min_score', 'model', 'order', 'since', 'sources', 'text', 'until', 'vector'].sort(),
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
