import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { LazyCompilers, splitValidator } from './validation.js';

function app(schema: object) {
  const compilers = new LazyCompilers();
  const a = Fastify({
    schemaController: { compilersFactory: { buildValidator: compilers.validator(splitValidator()), buildSerializer: compilers.serializer() } },
  });
  a.post(
    '/x',
    {
      schema: {
        body: schema,
        querystring: { type: 'object', properties: { n: { type: 'integer', default: 3 } } },
        response: { 200: { type: 'object', properties: { n: { type: 'integer' } } } },
      },
    },
    async (req) => ({
      n: (req.query as { n: number }).n,
      secret: 'not in the schema',
    }),
  );
  return { a, compilers };
}

describe('LazyCompilers', () => {
  it('compiles a route schema when a request first needs it, and validates, coerces and serialises as an eager compile does', async () => {
    const { a, compilers } = app({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] });
    await a.ready();
    expect(compilers.pending).toBe(3);
    const bad = await a.inject({ method: 'POST', url: '/x', payload: { q: 5 } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/must be string/);
    const good = await a.inject({ method: 'POST', url: '/x?n=7', payload: { q: 'a' } });
    expect(good.statusCode).toBe(200);
    // The query string's "7" coerced to 7; the serializer drops what the response schema lacks.
    expect(good.json()).toEqual({ n: 7 });
    expect((await a.inject({ method: 'POST', url: '/x', payload: { q: 'a' } })).json()).toEqual({ n: 3 });
    expect(compilers.pending).toBe(0);
    await a.close();
  });

  it('compileAll throws for a schema that does not compile; warm compiles the rest', async () => {
    const broken = app({ type: 'object', properties: { q: { type: 'strin' } } });
    await broken.a.ready();
    expect(() => broken.compilers.compileAll()).toThrow(/schema is invalid: data\/properties\/q\/type/);
    await broken.a.close();
    const fine = app({ type: 'object' });
    await fine.a.ready();
    await fine.compilers.warm();
    expect(fine.compilers.pending).toBe(0);
    await fine.a.close();
  });
});
