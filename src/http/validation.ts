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
