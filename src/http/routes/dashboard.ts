/**
 * The account dashboard (README, "Dashboard"): HTML pages under /account for an account holder
 * signed in with a one-time link. Thin, like every route file: read the session and the form,
 * call the same billing and key functions `GET /v1/account` and `newsmatch usage` call, render
 * a page from src/dashboard/. Not part of the JSON API: hidden from /openapi.json.
 *
 * Everything here runs in its own Fastify scope, so what it changes stays here: form bodies
 * (`application/x-www-form-urlencoded`, at most FORM_BODY_LIMIT bytes) are parsed only for these
 * routes, and every answer, errors included, carries the pages' security headers.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  errorPage,
  Form,
  ICON_PATH,
  ICON_SVG,
  keysPage,
  ledgerCsv,
  normaliseEmail,
  signInMail,
  type AccountEmails,
  type Mailer,
  overviewPage,
  revokePage,
  signInPage,
  STYLE_CSS,
  STYLE_PATH,
  usagePage,
  dailyUsage,
  type Frame,
  type KeyRow,
  type Session,
  type SessionStore,
} from '../../dashboard/index.js';
import { AppError } from '../../errors.js';
import { isProduct, PRODUCT_NAMES, RateLimiter, type Billing, type KeyInfo, type KeyStore, type Product } from '../../platform/index.js';
import { queryString } from '../schemas.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The dashboard session the request's cookie names, if any. */
    dashSession?: Session | null;
  }
}

/** No script at all, styles from this origin, forms posted here only, never framed. */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': DASHBOARD_CSP,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  // A page may hold a key's secret: never kept by a cache, the browser's included.
  'cache-control': 'no-store',
};

export const SESSION_COOKIE = 'nm_session';
/** Forms hold a few fields; a bigger body is 413 before it is read further. */
const FORM_BODY_LIMIT = 16 * 1024;
/** Sign-in mails to one address at most: an address cannot be flooded through the form. */
const MAIL_RATE = { quota: 3, windowS: 900 };
/** Ledger entries a usage page shows. */
const LEDGER_PAGE = 50;
const NAME_MAX = 100;

export interface DashboardDeps {
  sessions: SessionStore;
  emails: Pick<AccountEmails, 'accountOf' | 'of'>;
  /** Sends "email me a link" mails (SMTP_URL); null: the sign-in page says to ask the operator. */
  mailer: Mailer | null;
  /** Where mailed links point (PUBLIC_URL): never the request's Host header, which the asker chooses. */
  publicUrl: string;
  /** `ledger` reads off the event loop (an account's whole ledger may be long). */
  billing: Pick<Billing, 'summary' | 'ledger' | 'account' | 'clock'>;
  keys: Pick<KeyStore, 'create' | 'get' | 'list' | 'revoke'>;
  /** Reads LMDB afresh: the CLI's logouts, keys and grants count from the next request. */
  refresh: () => void;
  /** How long a session lasts. */
  sessionMs: number;
  /** Sign-in attempts a minute from one client address. */
  signInsPerMinute: number;
  /** Mark the cookie Secure even on a plain-HTTP request (PUBLIC_URL is https: TLS ends before us). */
  secureCookie: boolean;
}

/** A form's one-time nonce (SessionStore.useForm): 128 random bits, 22 characters. */
const formNonce = (): string => randomBytes(16).toString('base64url');

/** The session cookie's value(s) in a Cookie header. */
function cookieValues(header: string | undefined): string[] {
  if (!header) return [];
  const out: string[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) out.push(part.slice(eq + 1).trim());
  }
  return out;
}

export async function dashboardRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const { sessions, billing, keys, mailer } = deps;
  const limiter = new RateLimiter(billing.clock);
  const signInRate = { quota: deps.signInsPerMinute, windowS: 60 };

  const frameOf = (s: Session): Frame => ({ account: { id: s.account, name: billing.account(s.account)?.name ?? null }, csrf: s.csrf });
  const renderError = (e: AppError, req: FastifyRequest): string => errorPage(e, req.dashSession ? frameOf(req.dashSession) : undefined);
  const config = { errorPage: renderError, badInput: 'bad_parameter' as const };
  const hidden = (query: Record<string, Record<string, unknown>> = {}) => ({ hide: true, querystring: queryString(query) });

  /** A POST's form, any field outside `fields` refused. */
  const formOf = (req: FastifyRequest, ...fields: string[]): Form => {
    const body = req.body;
    // No body at all (app.ts makes a POST's missing body `{}`): a form with no fields.
    const form = body instanceof Form ? body : Form.parse('');
    return form.only(...fields);
  };
  const signedIn = (req: FastifyRequest): Session => {
    if (!req.dashSession) throw new AppError('session_required');
    return req.dashSession;
  };
  const checkedForm = (req: FastifyRequest, ...fields: string[]): { session: Session; form: Form } => {
    const session = signedIn(req);
    const form = formOf(req, 'csrf', ...fields);
    if (!sessions.checkCsrf(session, form.one('csrf'))) throw new AppError('csrf_failed');
    return { session, form };
  };
  /** A live Bearer key of this session's account: another account's key, or none, is the same 404. */
  const ownKey = (session: Session, id: string): KeyInfo => {
    const k = keys.get(id);
    if (k?.scheme !== 'bearer' || k.account !== session.account || k.revokedAt !== null) throw new AppError('key_not_found');
    return k;
  };
  const keyRows = async (account: string): Promise<KeyRow[]> => {
    const lastUsed = new Map<string, number>();
    for (const e of await billing.ledger(account)) if (e.kind === 'debit' && e.keyId !== undefined) lastUsed.set(e.keyId, e.at);
    return keys
      .list()
      .filter((k) => k.scheme === 'bearer' && k.account === account)
      .sort((a, b) => (a.revokedAt === null ? 0 : 1) - (b.revokedAt === null ? 0 : 1) || b.createdAt - a.createdAt)
      .map((k) => ({ ...k, lastUsed: lastUsed.get(k.id) ?? null }));
  };
  const html = (reply: FastifyReply, body: string) => reply.type('text/html; charset=utf-8').send(body);
  /** Sign-in attempts (a link used, a link asked for by mail) from one client address. */
  const countSignIn = (req: FastifyRequest): void => {
    const d = limiter.take(`sign-in ${req.ip}`, 'sign-in', signInRate);
    if (!d.ok) throw new AppError('too_many_sign_ins', undefined, { headers: { 'retry-after': String(d.resetS) } });
  };

  await app.register(async (scope) => {
    // Only urlencoded forms, and only here: the API's own bodies stay JSON (app.ts).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_req, raw, done) =>
      done(null, Form.parse(raw as string)),
    );
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (req, raw, done) => {
      if ((raw as string).length === 0) return done(null, undefined);
      done(
        new AppError(
          'unsupported_media_type',
          `Content-Type ${JSON.stringify(req.headers['content-type'] ?? '')} is not a form: send application/x-www-form-urlencoded`,
        ),
      );
    });
    scope.addHook('onRequest', async (req, reply) => {
      reply.headers(SECURITY_HEADERS);
      deps.refresh();
      req.dashSession = null;
      for (const v of cookieValues(req.headers.cookie)) if ((req.dashSession = sessions.verify(v))) break;
    });

    scope.get(STYLE_PATH, { schema: hidden(), config }, async (_req, reply) => reply.type('text/css; charset=utf-8').send(STYLE_CSS));
    scope.get(ICON_PATH, { schema: hidden(), config }, async (_req, reply) => reply.type('image/svg+xml').send(ICON_SVG));

    scope.get('/account/login', { schema: hidden({ token: { maxLength: 200 } }), config }, async (req, reply) => {
      const { token } = req.query as { token?: string };
      return html(reply, signInPage(token, { on: mailer !== null }));
    });

    scope.post('/account/login', { schema: { hide: true }, config }, async (req, reply) => {
      countSignIn(req);
      const token = formOf(req, 'token').one('token') ?? '';
      const made = sessions.redeem(token, deps.sessionMs);
      if (!made) throw new AppError('login_link_invalid');
      req.log.info({ account: made.session.account }, 'dashboard: signed in');
      const secure = deps.secureCookie || req.protocol === 'https';
      const maxAge = Math.floor(deps.sessionMs / 1000);
      reply.header('set-cookie', `${SESSION_COOKIE}=${made.cookie}; Path=/account; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`);
      return reply.redirect('/account', 303);
    });

    if (mailer !== null) {
      scope.post('/account/email-link', { schema: { hide: true }, config }, async (req, reply) => {
        countSignIn(req);
        const email = normaliseEmail(formOf(req, 'email').one('email') ?? '');
        if (email === null) throw new AppError('bad_parameter', 'email: an email address');
        const account = deps.emails.accountOf(email);
        // The same answer, as fast, for any address: the page tells no one which addresses have accounts.
        if (account !== null && billing.account(account) && limiter.take(`mail ${email}`, 'sign-in-mail', MAIL_RATE).ok) {
          const mail = signInMail(`${deps.publicUrl}/account/login?token=${sessions.createLoginLink(account).token}`);
          mailer.send(email, mail.subject, mail.text).then(
            () => req.log.info({ account }, 'dashboard: sign-in link mailed'),
            (e: unknown) => req.log.warn({ account, error: (e as Error)?.message }, 'dashboard: a sign-in link could not be mailed'),
          );
        }
        return html(reply, signInPage(undefined, { on: true, sent: true }));
      });
    }

    scope.post('/account/logout', { schema: { hide: true }, config }, async (req, reply) => {
      const { session } = checkedForm(req);
      sessions.end(session);
      reply.header('set-cookie', `${SESSION_COOKIE}=; Path=/account; Max-Age=0; HttpOnly; SameSite=Strict`);
      return reply.redirect('/account/login', 303);
    });

    scope.get('/account', { schema: hidden(), config }, async (req, reply) => {
      const s = req.dashSession;
      if (!s) return reply.redirect('/account/login', 303);
      return html(reply, overviewPage(frameOf(s), billing.summary(s.account), deps.emails.of(s.account)));
    });

    scope.get('/account/keys', { schema: hidden(), config }, async (req, reply) => {
      const s = req.dashSession;
      if (!s) return reply.redirect('/account/login', 303);
      return html(reply, keysPage(frameOf(s), await keyRows(s.account), { once: formNonce() }));
    });

    scope.post('/account/keys', { schema: { hide: true }, config }, async (req, reply) => {
      const { session, form } = checkedForm(req, 'name', 'scope', 'once');
      // The page's form carries a nonce: a reload of the page a key was made on makes no second key.
      const once = form.one('once');
      if (once !== undefined && !/^[A-Za-z0-9_-]{22}$/.test(once)) throw new AppError('bad_parameter', "once: the form's nonce, as the keys page gives it");
      const name = form.one('name')?.trim() ?? '';
      if (name.length > NAME_MAX) throw new AppError('bad_parameter', `name: at most ${NAME_MAX} characters, got ${name.length}`);
      const scopes = [...new Set(form.all('scope'))];
      const bad = scopes.find((p) => !isProduct(p));
      if (bad !== undefined) throw new AppError('bad_parameter', `scope: one of ${PRODUCT_NAMES.join(', ')}, got ${JSON.stringify(bad.slice(0, 100))}`);
      const make = () => keys.create({ scheme: 'bearer', account: session.account, name: name || undefined, scopes: scopes as Product[] });
      let created: ReturnType<typeof make> | undefined;
      const used = once === undefined ? null : sessions.useForm(session, once, () => (created = make()).id);
      if (used?.repeat) return html(reply, keysPage(frameOf(session), await keyRows(session.account), { once: formNonce(), repeated: used.made }));
      created ??= make();
      req.log.info({ account: session.account, key: created.id }, 'dashboard: key created');
      return html(reply, keysPage(frameOf(session), await keyRows(session.account), { once: formNonce(), created }));
    });

    scope.get('/account/keys/:id/revoke', { schema: hidden(), config }, async (req, reply) => {
      const s = req.dashSession;
      if (!s) return reply.redirect('/account/login', 303);
      return html(reply, revokePage(frameOf(s), ownKey(s, (req.params as { id: string }).id)));
    });

    scope.post('/account/keys/:id/revoke', { schema: { hide: true }, config }, async (req, reply) => {
      const { session } = checkedForm(req);
      const k = ownKey(session, (req.params as { id: string }).id);
      keys.revoke(k.id);
      req.log.info({ account: session.account, key: k.id }, 'dashboard: key revoked');
      return reply.redirect('/account/keys', 303);
    });

    scope.get('/account/usage', { schema: hidden({ before: { type: 'integer', minimum: 1 } }), config }, async (req, reply) => {
      const s = req.dashSession;
      if (!s) return reply.redirect('/account/login', 303);
      const { before } = req.query as { before?: number };
      const entries = await billing.ledger(s.account);
      const older = before === undefined ? entries : entries.filter((e) => e.seq < before);
      const shown = older.slice(-LEDGER_PAGE).reverse();
      const ledger = { entries: shown, older: older.length > LEDGER_PAGE ? shown.at(-1)!.seq : null, newest: shown[0]?.seq === entries.at(-1)?.seq };
      return html(reply, usagePage(frameOf(s), dailyUsage(entries, billing.clock()), ledger));
    });

    scope.get('/account/usage.csv', { schema: hidden(), config }, async (req, reply) => {
      const s = req.dashSession;
      if (!s) throw new AppError('session_required');
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="newsmatch-ledger-${s.account}.csv"`)
        .send(ledgerCsv(await billing.ledger(s.account)));
    });

    // Any other path under /account: the error page, not the API's JSON 404.
    scope.all('/account/*', { schema: { hide: true }, config }, async (req) => {
      throw new AppError('not_found', `no page ${req.method} ${req.url.split('?')[0]}`);
    });
  });
}
