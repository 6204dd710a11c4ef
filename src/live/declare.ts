/**
 * The query parameters of live endpoints, declared as JSON Schema. An endpoint's `params`
 * (engine.ts) name them; the HTTP layer builds the route's querystring schema from them, so
 * /openapi.json publishes each one's type, bounds, allowed values and default, and Ajv checks,
 * coerces and defaults them before the call is charged. `check` and `run` receive the typed
 * values, unsent ones null. What a schema cannot say (a host name to punycode, a URL to
 * normalise) is a `read` of the checked value.
 *
 * Example: `page: pageParam({ max: 10 })` is the schema
 * `{ type: 'integer', minimum: 1, maximum: 10, default: 1 }`; `?page=3` reaches `run` as
 * `q.page === 3`, no `page` as `q.page === 1`, and `?page=11` is 400 bad_request
 * "page: an integer from 1 to 10, got 11".
 */
import { AppError } from '../errors.js';

/** A 400 bad_request about a parameter (`message` names it). */
export const bad = (message: string) => new AppError('bad_parameter', message);

/** One parameter's JSON Schema: what Ajv applies and /openapi.json shows. */
export type ParamSchema =
  | {
      type: 'string';
      minLength?: number;
      maxLength?: number;
      pattern?: string;
      enum?: readonly string[];
      default?: string;
      description?: string;
      examples?: readonly string[];
    }
  | { type: 'integer' | 'number'; minimum: number; maximum: number; default?: number; description?: string }
  | { type: 'boolean'; default?: boolean; description?: string };

/** One query parameter of a live endpoint; `T` is the value `check` and `run` see. */
export interface Param<T> {
  readonly schema: ParamSchema;
  /** Unsent is 400 "<name> is required" (the route's schema lists it as required). */
  readonly required?: boolean;
  /**
   * Runs on the value the schema let through: gives the value the endpoint uses (trimmed,
   * normalised) or refuses what no schema can say (400 bad_request naming the parameter).
   */
  read?(value: T, name: string): T;
}

interface Options<T> {
  default?: T;
  required?: boolean;
  description?: string;
}

const given = <T>(o: Options<T>) => ({
  ...(o.default !== undefined && { default: o.default }),
  ...(o.description !== undefined && { description: o.description }),
});

/** Text of at most `max` characters, trimmed; empty or blank is 400 "<name>: empty". */
export const stringParam = (max = 500, o: Options<string> = {}): Param<string> => ({
  schema: { type: 'string', minLength: 1, maxLength: max, ...given(o) },
  required: o.required,
  read: (value, name) => {
    const v = value.trim();
    if (v === '') throw bad(`${name}: empty`);
    return v;
  },
});

export const enumParam = <T extends string>(values: readonly T[], o: Options<T> = {}): Param<T> => ({
  schema: { type: 'string', enum: values, ...given(o) },
  required: o.required,
});

export const intParam = (min: number, max: number, o: Options<number> = {}): Param<number> => ({
  schema: { type: 'integer', minimum: min, maximum: max, ...given(o) },
  required: o.required,
});

export const numberParam = (min: number, max: number, o: Options<number> = {}): Param<number> => ({
  schema: { type: 'number', minimum: min, maximum: max, ...given(o) },
  required: o.required,
});

export const boolParam = (o: Options<boolean> = {}): Param<boolean> => ({
  schema: { type: 'boolean', ...given(o) },
  required: o.required,
});

/**
 * Text matching `re` (no flags: JSON Schema patterns have none). `what` says what that means
 * ("a 10-character ASIN such as B0DR8G428S"): the description /openapi.json shows, and what a
 * refusal says; `example` is a value it matches, shown beside it.
 */
export function patternParam(re: RegExp, what: string, example: string, o: Omit<Options<string>, 'description'> = {}): Param<string> {
  if (re.flags !== '') throw new Error(`patternParam ${re}: a JSON Schema pattern takes no flags`);
  if (!re.test(example)) throw new Error(`patternParam ${re}: the example ${JSON.stringify(example)} does not match`);
  return { schema: { type: 'string', pattern: re.source, description: what, examples: [example], ...given(o) }, required: o.required };
}

/**
 * `page`, by how the engine pages: 1 to `max`, only 1 (`single`), or
 * 1 to 1000 passed on to the site as given (`forwarded`). Default 1.
 */
export function pageParam(rule: { max: number } | 'single' | 'forwarded'): Param<number> {
  if (rule === 'single') return intParam(1, 1, { default: 1, description: 'This engine has a single page: 1.' });
  if (rule === 'forwarded') return intParam(1, 1_000, { default: 1, description: 'The page, passed on to the site.' });
  return intParam(1, rule.max, { default: 1, description: `The page, 1 to ${rule.max}.` });
}

const URL_WHAT = 'an absolute http(s) URL';

/** An absolute http(s) URL a caller names (read as an untrusted target), normalised. */
export const urlParam = (example: string, o: Omit<Options<string>, 'description'> = {}): Param<string> => ({
  schema: { type: 'string', maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/]', description: URL_WHAT, examples: [example] },
  required: o.required,
  read: (value, name) => {
    const v = value.trim();
    if (!URL.canParse(v)) throw bad(`${name}: ${URL_WHAT}, got ${JSON.stringify(value.slice(0, 100))}`);
    return new URL(v).href;
  },
});
