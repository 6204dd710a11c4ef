/**
 * The one error handler: every failure, ours or the framework's, leaves as the error body of
 * README "Errors" with a catalogue code. Anything unrecognised is a 500 and logged: a bug.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isAppError } from '../errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What a failed schema check is: 422 invalid_request (default) or 400 bad_request (`bad_parameter`). */
    badInput?: 'invalid_request' | 'bad_parameter';
    /** An HTML route (the dashboard): its errors are this page, with the same status and code. */
    errorPage?: (e: AppError, req: FastifyRequest) => string;
  }
}

interface AjvError {
  instancePath: string;
  schemaPath?: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
  /** With Ajv's `verbose` (validation.ts): the failing value and the schema holding the keyword. */
  data?: unknown;
  parentSchema?: Fragment;
}

/** `/sources/0` → `sources[0]`; the root → `body`. */
const fieldName = (instancePath: string, context: string): string =>
  instancePath === ''
    ? context
    : instancePath
        .slice(1)
        .split('/')
        .map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i ? `.${p}` : p))
        .join('');

/** A value as a message quotes it: at most 100 characters. */
const shown = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v.length > 100 ? `${v.slice(0, 100)}…` : v) : (JSON.stringify(v) ?? String(v)));

// biome-ignore lint/suspicious/noExplicitAny: a JSON Schema fragment, read field by field
type Fragment = Record<string, any>;

/** A JSON Schema type as a noun: "a number", "an integer", "a JSON object". */
const NOUNS: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  array: 'an array',
  object: 'a JSON object',
  null: 'null',
};

/** "1024", "1 to 50", "at least 1", "at most 50", or '' from a pair of bounds. */
function bounds(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && min === max) return `${min}`;
  if (min !== undefined && max !== undefined) return `${min} to ${max}`;
  if (min !== undefined) return `at least ${min}`;
  return max !== undefined ? `at most ${max}` : '';
}

/**
 * What a field's or parameter's schema asks for, in words: "an integer from 1 to 10", "one of
 * a, b", "true or false", "an array of 1 to 50 strings", "a string of 1 to 4000 characters".
 */
function expected(s: Fragment): string {
  if (Array.isArray(s.enum)) return `one of ${s.enum.join(', ')}`;
  if (s.const !== undefined) return `must be ${JSON.stringify(s.const)}`;
  if (Array.isArray(s.type)) return s.type.map((t: string) => NOUNS[t] ?? t).join(' or ');
  if (s.type === 'integer' || s.type === 'number') {
    const what = NOUNS[s.type];
    if (s.minimum !== undefined && s.minimum === s.maximum) return `must be ${s.minimum}`;
    if (s.minimum !== undefined && s.maximum !== undefined) return `${what} from ${s.minimum} to ${s.maximum}`;
    return what;
  }
  if (s.type === 'array') {
    const n = bounds(s.minItems, s.maxItems);
    const item = s.items?.type ? `${s.items.type}s` : 'values';
    return `an array of ${n ? `${n} ` : ''}${item}`;
  }
  if (s.pattern !== undefined) return s.description ?? `must match ${s.pattern}`;
  if (s.format !== undefined) return `a ${s.format} string`;
  if (s.type === 'string') {
    const n = bounds(s.minLength, s.maxLength);
    return n ? `a string of ${n} characters` : 'a string';
  }
  return NOUNS[s.type] ?? 'a value';
}

/** What was sent instead, as a message quotes it: a long string or an array by its length. */
function got(e: AjvError): string {
  const v = e.data;
  if ((e.keyword === 'minItems' || e.keyword === 'maxItems') && Array.isArray(v)) return `${v.length} items`;
  if ((e.keyword === 'minLength' || e.keyword === 'maxLength') && typeof v === 'string' && v !== '') return `${v.length} characters`;
  if (Array.isArray(v)) return 'an array';
  if (v !== null && typeof v === 'object') return 'an object';
  return shown(v);
}

/**
 * A failed schema check in the words of the parameter readers it replaced, the same for a
 * query string and a JSON body: `page: an integer from 1 to 10, got 11`, `order: one of time,
 * relevance, got "newest"`, `engine is required: web_search, marketplace`, and for a query
 * string only, `q: sent more than once; send it once`.
 */
function checkMessage(e: AjvError, at: string, context: string): string {
  const s = e.parentSchema ?? {};
  switch (e.keyword) {
    case 'required': {
      const name = String(e.params.missingProperty);
      const p = s.properties?.[name] ?? {};
      return `${name} is required${Array.isArray(p.enum) ? `: ${p.enum.join(', ')}` : p.pattern !== undefined && p.description ? ` (${p.description})` : ''}`;
    }
    case 'type':
      // Query values arrive as strings and are coerced to their type; an array was sent more than once.
      if (context === 'querystring' && Array.isArray(e.data)) return `${at}: sent more than once; send it once`;
      return `${at}: ${expected(s)}, got ${got(e)}`;
    case 'enum':
    case 'const':
    case 'minimum':
    case 'maximum':
    case 'pattern':
    case 'format':
    case 'minItems':
    case 'maxItems':
    case 'minLength':
    case 'maxLength':
      return `${at}: ${expected(s)}, got ${got(e)}`;
  }
  return `${at}: ${e.message ?? 'is invalid'}`;
}

function validationMessage(errors: AjvError[], context: string): string {
  const e = errors[0];
  const at = fieldName(e.instancePath, context);
  if (e.keyword === 'additionalProperties') {
    const what = context === 'querystring' ? 'parameter' : 'field';
    // A parameter the route takes for other engines only (live routes serving several: routes/live.ts).
    const engine = e.parentSchema?.properties?.engine?.const;
    return `unknown ${what} "${String(e.params.additionalProperty)}"${e.instancePath ? ` in ${at}` : ''}${typeof engine === 'string' ? ` for engine=${engine}` : ''}`;
  }
  return checkMessage(e, at, context);
}

/**
 * The catalogue error for any thrown value. `invalid` names the entry a failed schema check
 * becomes: 422 invalid_request on the match service, 400 bad_request on the platform's GET
 * endpoints.
 */
export function toAppError(err: unknown, invalid: 'invalid_request' | 'bad_parameter' = 'invalid_request'): AppError {
  if (isAppError(err)) return err;
  const fe = err as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fe.validation) return new AppError(invalid, validationMessage(fe.validation, fe.validationContext ?? 'body'), { cause: err });
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type', 'this Content-Type is not supported: send application/json', { cause: err });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', undefined, { cause: err });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('bad_request', `body is not valid JSON`, { cause: err });
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    if (fe.statusCode === 413) return new AppError('payload_too_large', undefined, { cause: err });
    if (fe.statusCode === 415) return new AppError('unsupported_media_type', undefined, { cause: err });
    return new AppError('bad_request', fe.message, { cause: err });
  }
  return new AppError('internal', undefined, { cause: err });
}

/** Retry-After of a 503 that names none: the condition (no model, a product switched off) is not fixed by retrying at once. */
const DEFAULT_RETRY_AFTER_503 = '60';

export function errorHandler(err: unknown, req: FastifyRequest, reply: FastifyReply): void {
  const e = toAppError(err, req.routeOptions.config.badInput);
  // A 500 is a bug: its stack is logged. An upstream's failure (502/504 of a live scrape) is
  // expected and any caller can cause one: a warning with its detail, no stack. A 503 is
  // expected under load or with a product off; one with a cause (the store refusing a charge)
  // is still worth a line.
  if (e.status === 502 || e.status === 504) req.log.warn({ error: e.code, detail: e.message }, 'upstream failed');
  else if (e.status >= 500 && e.status !== 503) req.log.error({ err }, 'request failed');
  else if (e.status === 503 && e.cause !== undefined) req.log.warn({ err }, 'request refused: service unavailable');
  reply.code(e.status).headers(e.headers);
  if (e.status === 503 && e.headers['retry-after'] === undefined) reply.header('retry-after', DEFAULT_RETRY_AFTER_503);
  const page = req.routeOptions.config.errorPage;
  if (page) reply.type('text/html; charset=utf-8').send(page(e, req));
  else reply.send(e.toBody());
}
