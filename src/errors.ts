/**
 * The one error catalogue. Every error a client can see is an entry here: a stable `code`
 * (what clients branch on), its HTTP status, and a default message. Errors from libraries
 * are translated into these at the edge (src/http/error-handler.ts).
 *
 * Two entries may share a wire code with different statuses (malformed JSON is a 400
 * `invalid_request`, a field that fails validation a 422 one), so entries are keyed by an
 * internal name and carry their wire `code`.
 */
export const catalogue = {
  // request shape
  bad_request: { code: 'invalid_request', status: 400, message: 'The request is malformed (e.g. the body is not valid JSON).' },
  invalid_request: { code: 'invalid_request', status: 422, message: 'A field failed validation.' },
  bad_cursor: { code: 'bad_cursor', status: 400, message: 'The cursor is malformed, was not issued by this service, or was issued for other inputs.' },
  // a query parameter of the platform's GET endpoints (400 for every one)
  bad_parameter: { code: 'bad_request', status: 400, message: 'A parameter failed validation.' },
  payload_too_large: { code: 'payload_too_large', status: 413, message: 'The request body is too large.' },
  headers_too_large: { code: 'headers_too_large', status: 431, message: 'The request headers are too large.' },
  request_timeout: { code: 'request_timeout', status: 408, message: 'The request did not arrive in time (HTTP_REQUEST_TIMEOUT_MS); the connection is closed.' },
  method_not_allowed: { code: 'method_not_allowed', status: 405, message: 'The endpoint does not take this method; see the Allow header.' },
  unsupported_media_type: { code: 'unsupported_media_type', status: 415, message: 'Send the body as application/json.' },
  not_found: { code: 'not_found', status: 404, message: 'No such endpoint.' },
  // auth, plans and metering
  unauthorized: { code: 'unauthorized', status: 401, message: 'Missing or invalid key.' },
  forbidden: { code: 'forbidden', status: 403, message: 'This key cannot call this product or engine.' },
  not_subscribed: { code: 'not_subscribed', status: 403, message: 'The account does not subscribe to this product.' },
  quota_exceeded: { code: 'quota_exceeded', status: 429, message: 'The wallet cannot pay for this call, or the plan is past its rate or period limit.' },
  rate_limited: { code: 'rate_limited', status: 429, message: 'The gateway key is past its rate limit.' },
  product_unavailable: { code: 'product_unavailable', status: 503, message: 'The product is not available on this service, or credits could not be reached.' },
  overloaded: { code: 'overloaded', status: 503, message: 'The endpoint is at its concurrency limit on this machine. Retry after Retry-After seconds.' },
  shutting_down: { code: 'shutting_down', status: 503, message: 'The server is shutting down: retry on another instance, or after Retry-After seconds.' },
  too_many_connections: {
    code: 'too_many_connections',
    status: 503,
    message: 'The server (or this client address) is at its connection limit; the connection is closed. Retry after Retry-After seconds.',
  },
  // the account dashboard (HTML pages under /account; the same codes, shown on an error page)
  session_required: { code: 'session_required', status: 401, message: 'Sign in first: ask the operator for a sign-in link (newsmatch accounts login-link).' },
  login_link_invalid: {
    code: 'login_link_invalid',
    status: 401,
    message: 'The sign-in link is unknown, expired or already used: ask the operator for a new one.',
  },
  csrf_failed: { code: 'csrf_failed', status: 403, message: "The form's CSRF token is missing or not this session's: reload the page and send it again." },
  key_not_found: { code: 'key_not_found', status: 404, message: 'This account has no live key with this id.' },
  too_many_sign_ins: { code: 'too_many_sign_ins', status: 429, message: 'Too many sign-in attempts from this address: retry after Retry-After seconds.' },
  // match
  too_many_matches: {
    code: 'too_many_matches',
    status: 422,
    message: 'The query matched more articles than one pass can collect. Raise min_score or narrow since/until.',
  },
  order_requires_query: { code: 'order_requires_query', status: 422, message: 'order=relevance needs a text, vector or like query.' },
  cursor_requires_time_order: { code: 'cursor_requires_time_order', status: 422, message: 'cursor is valid only with order=time.' },
  unknown_article: { code: 'unknown_article', status: 422, message: 'No stored article has the id given as like.' },
  article_not_embedded: {
    code: 'article_not_embedded',
    status: 422,
    message: 'The article given as like is stored without vectors (imported while text mode was off); run `newsmatch embed`.',
  },
  // monitors
  monitor_not_found: { code: 'monitor_not_found', status: 404, message: 'This account has no monitor with this id.' },
  monitor_limit: { code: 'monitor_limit', status: 403, message: "The plan's count of monitors is reached: delete one or change plan." },
  // keyword search (news, jobs)
  empty_query: {
    code: 'empty_query',
    status: 400,
    message: 'The query has nothing searchable once normalised (no letters or digits, or only excluded terms).',
  },
  unknown_source: { code: 'unknown_source', status: 400, message: 'A source name is not in GET /v1/sources.' },
  unknown_skill: { code: 'unknown_skill', status: 400, message: 'A skill is not in the reviewed vocabulary (GET /v1/taxonomies/skills).' },
  // live scrapes
  locked_parameter: { code: 'locked_parameter', status: 400, message: 'A parameter this endpoint does not take was sent (limit or cursor on a live scrape).' },
  scrape_failed: { code: 'scrape_failed', status: 502, message: 'The live page could not be fetched or parsed.' },
  timeout: { code: 'timeout', status: 504, message: 'The live scrape exceeded its deadline.' },
  // monitors
  webhook_blocked: {
    code: 'webhook_blocked',
    status: 422,
    message: 'webhook_url is a private, loopback or otherwise non-public address, or resolves to one: webhooks are delivered to public addresses only.',
  },
  webhook_unreachable: {
    code: 'webhook_unreachable',
    status: 422,
    message: 'webhook_url gave no HTTP answer to a signed test POST (the name did not resolve, the connection failed, or no answer came in time).',
  },
  // text mode
  text_mode_unavailable: { code: 'text_mode_unavailable', status: 503, message: 'Text mode is off: no bge-m3 model is configured. Send a vector instead.' },
  embed_unavailable: { code: 'embed_unavailable', status: 503, message: 'The embedding service is unavailable. Retry, or send a vector instead.' },
  // cluster mode
  shard_unavailable: {
    code: 'shard_unavailable',
    status: 503,
    message: 'A shard the query touches is served by no node that answered: the message names it. Retry, or narrow since/until.',
  },
  // server
  internal: { code: 'internal', status: 500, message: 'Internal error. Report it with the X-Request-ID.' },
  not_ready: { code: 'not_ready', status: 503, message: 'The service is not ready: an index is behind LMDB, or a configured part is not loaded.' },
} as const satisfies Record<string, { code: string; status: number; message: string }>;

export type ErrorName = keyof typeof catalogue;

/** An error with a catalogue entry; the HTTP layer turns it into the error body (README, "Errors"). */
export class AppError extends Error {
  readonly name = 'AppError';
  readonly code: string;
  readonly status: number;
  /** Extra body fields, e.g. `matched_at_least` on too_many_matches. */
  readonly extra: Record<string, unknown>;
  /** Response headers, e.g. Retry-After. */
  readonly headers: Record<string, string>;

  constructor(
    readonly entry: ErrorName,
    message?: string,
    options: { cause?: unknown; extra?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message ?? catalogue[entry].message, { cause: options.cause });
    this.code = catalogue[entry].code;
    this.status = catalogue[entry].status;
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
  }

  /** The error body: `error`, `message`, `detail` (the same text, as the platform spec names it) and extras. */
  toBody(): Record<string, unknown> {
    return { error: this.code, message: this.message, detail: this.message, ...this.extra };
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;
