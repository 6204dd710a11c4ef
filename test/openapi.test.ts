/** GET /openapi.json: an OpenAPI 3.1 document generated from the route schemas. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
      ['cursor', 'exclude_sources', 'include_edits', 'limit', 'min_score', 'model', 'order', 'since', 'sources', 'text', 'until', 'vector'].sort(),
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
    expect(p('since').format).toBe('date-time');
    expect(p('until').format).toBe('date-time');
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
