/**
 * Fastify's validator, in two Ajv configurations. A JSON body is validated as sent: no
 * coercion (`"limit": "5"` is not a number), no defaults filled in. A query string arrives as
 * text, so there Ajv turns each value into its declared type (integer, number, boolean) and
 * fills in the declared defaults: a route's handler receives typed values, and the schema is
 * the one place a parameter's type, bounds and default are written. A repeated parameter
 * arrives as an array (app.ts parses with node's querystring), which no declared type is
 * coerced from: it fails on `type`, and error-handler.ts names it. `verbose` (both) keeps the
 * failing value and its schema on each error, for a message that says what was allowed.
 */
import AjvCompiler from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

/** Bodies: checked as sent. Also what Fastify's own `ajv.customOptions` are set to (app.ts). */
export const BODY_AJV = { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: false, verbose: true } as const;
/** Query strings: every value coerced to its declared type, declared defaults filled in. */
export const QUERY_AJV = { ...BODY_AJV, coerceTypes: true, useDefaults: true } as const;

type BuildValidator = ReturnType<typeof AjvCompiler>;

/** The validator factory (Fastify `schemaController.compilersFactory.buildValidator`): `querystring` schemas on QUERY_AJV, the rest on BODY_AJV. */
export function splitValidator(): BuildValidator {
  const pool = AjvCompiler();
  return (externalSchemas, options) => {
    const withOptions = (custom: object) => ({ ...options, customOptions: { ...options?.customOptions, ...custom } }) as typeof options;
    const body = pool(externalSchemas, withOptions(BODY_AJV));
    const query = pool(externalSchemas, withOptions(QUERY_AJV));
    // Fastify calls the compiler with the route's definition (the package's types say a bare schema).
    const compile = (route: { httpPart?: string }) => (route.httpPart === 'querystring' ? query : body)(route as never);
    return compile as unknown as ReturnType<BuildValidator>;
  };
}

type BuildSerializer = ReturnType<typeof SerializerSelector>;
type Validate = ((data: unknown, ctx?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };

/**
 * Fastify compiles every route's schemas when it starts: Ajv validators and fast-json-stringify
 * serializers for some 80 routes, about half a second of each start-up (`npm run
 * bench:startup`). Here each is compiled when a request first needs it, and the rest by
 * `warm`, one between two turns of the event loop, once the server has listened a second
 * (app.ts). `compileAll` compiles them at once, so a test finds a schema that does not compile.
 */
export class LazyCompilers {
  readonly #pending = new Set<() => unknown>();

  #defer<T>(compile: () => T): () => T {
    let fn: T | undefined;
    const get = (): T => {
      if (fn === undefined) {
        fn = compile();
        this.#pending.delete(get);
      }
      return fn;
    };
    this.#pending.add(get);
    return get;
  }

  validator(factory: BuildValidator): BuildValidator {
    return (externalSchemas, options) => {
      const build = factory(externalSchemas, options) as unknown as (route: unknown) => Validate;
      return ((route: unknown) => {
        const get = this.#defer(() => build(route));
        const validate: Validate = (data, ctx) => {
          const fn = get();
          const out = fn(data, ctx);
          validate.errors = fn.errors;
          return out;
        };
        // Fastify hands the parent object to an Ajv function (one with `schemaEnv`), so a root value can be coerced: keep that.
        validate.schemaEnv = true;
        return validate;
      }) as unknown as ReturnType<BuildValidator>;
    };
  }

  serializer(): BuildSerializer {
    const factory = SerializerSelector();
    return (externalSchemas, options) => {
      const build = factory(externalSchemas, options);
      return ((route: Parameters<ReturnType<BuildSerializer>>[0]) => {
        const get = this.#defer(() => build(route));
        return (data: unknown) => get()(data);
      }) as ReturnType<BuildSerializer>;
    };
  }

  /** Schemas not compiled yet. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Compiles what is still pending now; throws a schema's compile error. */
  compileAll(): void {
    for (const get of [...this.#pending]) get();
  }

  /** Compiles what is still pending, one schema a turn of the event loop. */
  async warm(): Promise<void> {
    for (const get of [...this.#pending]) {
      get();
      await new Promise((r) => setImmediate(r));
    }
  }
}
