/**
 * The dashboard's pages as functions of what they show: no request, no store. Every value goes
 * through the `html` tag (escaped); forms carry the session's CSRF token and work without
 * JavaScript (the pages have none).
 */
import { formatRate, PRODUCT_NAMES, type AccountSummary, type KeyInfo, type LedgerEntry } from '../platform/index.js';
import { chartLegend, usageChart } from './chart.js';
import { html, type Html } from './html.js';
import { totals, type DailyUsage } from './usage.js';

export const STYLE_PATH = '/account/style.css';
export const ICON_PATH = '/account/icon.svg';

type Nav = 'overview' | 'keys' | 'usage';

/** A signed-in page's frame: who, where, and the sign-out form. */
export interface Frame {
  account: { id: string; name: string | null };
  csrf: string;
}

/** `2026-03-01 08:05 UTC`. */
export const when = (ms: number | null | undefined): string =>
  ms === null || ms === undefined ? '' : `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
const isoWhen = (iso: string): string => when(Date.parse(iso));

const csrfField = (csrf: string): Html => html`<input type="hidden" name="csrf" value="${csrf}">`;

/** The whole document. `frame`: signed in (navigation and sign-out shown). */
export function page(title: string, body: Html, frame?: Frame, nav?: Nav): string {
  const link = (to: Nav, href: string, text: string) => html`<a href="${href}"${to === nav ? html` aria-current="page"` : null}>${text}</a>`;
  const top = frame
    ? html`<nav>${link('overview', '/account', 'Overview')}${link('keys', '/account/keys', 'Keys')}${link('usage', '/account/usage', 'Usage')}</nav>
<span class="muted">${frame.account.name ?? frame.account.id}</span>
<form method="post" action="/account/logout">${csrfField(frame.csrf)}<button class="plain" type="submit">Sign out</button></form>`
    : null;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · newsmatch account</title>
<link rel="stylesheet" href="${STYLE_PATH}">
<link rel="icon" href="${ICON_PATH}" type="image/svg+xml">
</head>
<body>
<header><h1>newsmatch account</h1>${top}</header>
<main>
${body}
</main>
</body>
</html>
`.text;
}

/**
 * The sign-in page. With a link's token: a button that posts it (a link opened by a mail
 * scanner or a preview is not used up, and the cookie is set by a same-site request, as
 * SameSite=Strict needs). Without: how to get a link.
 */
export function signInPage(token?: string, mail: { on: boolean; sent?: boolean } = { on: false }): string {
  if (token !== undefined) {
    return page(
      'Sign in',
      html`<section><h2>Sign in</h2>
<p>This one-time link signs you in to your newsmatch account. It works once, within 15 minutes of being made.</p>
<form method="post" action="/account/login"><input type="hidden" name="token" value="${token}"><button type="submit" id="sign-in">Sign in</button></form></section>`,
    );
  }
  const byMail = mail.on
    ? html`<section id="email-link"><h2>Email me a link</h2>
${mail.sent ? html`<p class="notice" id="sent">If an account has this address, a sign-in link is on its way to it. It works once, within 15 minutes.</p>` : null}
<form method="post" action="/account/email-link"><label>Your account's email address <input type="text" name="email" maxlength="254" autocomplete="email"></label>
<button type="submit">Email me a link</button></form></section>`
    : html`<section class="notice" id="email-link"><h2>Email me a link</h2>
<p>This server does not send email. Ask the operator of this service for a sign-in link.</p></section>`;
  return page(
    'Sign in',
    html`<section><h2>Sign in</h2>
<p>The dashboard has no passwords: you sign in with a one-time link from the operator of this service${mail.on ? ", or mailed to your account's address" : ''}.</p>
<p>The operator makes one with <code>newsmatch accounts login-link &lt;your account id&gt;</code>. It works once, within 15 minutes.</p></section>
${byMail}`,
  );
}

/** An error as a page: its status is the response's, its code the catalogue's. */
export function errorPage(e: { status: number; code: string; message: string }, frame?: Frame): string {
  return page(
    'Error',
    html`<section class="error" data-error="${e.code}"><h2>${e.status === 404 ? 'Not found' : 'Refused'}</h2>
<p><code class="code">${e.code}</code> (HTTP ${e.status}): <span class="message">${e.message}</span></p>
<p><a href="${frame ? '/account' : '/account/login'}">${frame ? 'Back to the overview' : 'Sign in'}</a></p></section>`,
    frame,
  );
}

export function overviewPage(frame: Frame, s: AccountSummary, email: string | null = null): string {
  const c = s.credits;
  const subs = s.subscriptions.map(
    (sub) => html`<tr data-product="${sub.product}">
<td>${sub.product}</td><td>${sub.plan}</td><td class="num used">${sub.used}</td>
<td class="num">${sub.included ?? ''}</td><td class="num">${sub.overage_requests ?? ''}</td>
<td class="num">${sub.overage_usd === undefined ? '' : `$${sub.overage_usd.toFixed(4)}`}</td><td class="num">${sub.stop ?? ''}</td>
<td class="num">${sub.included === undefined ? sub.credits_per_call : ''}</td><td class="rate">${formatRate(sub.rate_limit)}</td>
<td>${isoWhen(sub.period_start)} – ${isoWhen(sub.period_end)}</td></tr>`,
  );
  return page(
    'Overview',
    html`<section id="balance"><h2>Credits</h2>
<table><thead><tr><th>Kind</th><th class="num">Credits</th><th>Note</th></tr></thead><tbody>
<tr data-kind="total"><th>Total</th><td class="num" id="credits-total">${c.total}</td><td></td></tr>
<tr data-kind="subscription"><td>Subscription</td><td class="num">${c.subscription}</td><td class="muted">spent first; end with the period</td></tr>
<tr data-kind="free"><td>Free</td><td class="num">${c.free}</td><td class="muted">never expire</td></tr>
<tr data-kind="purchased"><td>Purchased</td><td class="num">${c.purchased}</td><td class="muted">never expire; spent last</td></tr>
</tbody></table>
${
  c.expiring.length > 0
    ? html`<h2>Expiring</h2><ul id="expiring">${c.expiring.map((x) => html`<li><span class="num">${x.credits}</span> credits expire at ${isoWhen(x.expires_at)}</li>`)}</ul>`
    : html`<p class="muted">No credits expire.</p>`
}</section>
<section id="plans"><h2>Plans, this period's use and rate limits</h2>
<table><thead><tr><th>Product</th><th>Plan</th><th class="num">Used</th><th class="num">Included</th><th class="num">Overage</th><th class="num">Overage $</th><th class="num">Stops at</th><th class="num">Credits a call</th><th>Rate limit</th><th>Period</th></tr></thead>
<tbody>${subs}</tbody></table></section>
<section><h2>Account</h2><p>Id <code id="account-id">${s.id}</code>${s.name ? html`, “${s.name}”` : null}, created ${isoWhen(s.created_at)}.</p>
<p>Sign-in links by mail: ${email === null ? html`<span class="muted">no address (the operator sets one with <code>newsmatch accounts email</code>)</span>` : html`<code id="email">${email}</code>`}.</p></section>`,
    frame,
    'overview',
  );
}

/** A key as the keys page lists it, with when it was last charged (from the ledger). */
export interface KeyRow extends KeyInfo {
  lastUsed: number | null;
}

const keyPrefix = (k: KeyInfo): string => (k.hint ? `${k.hint}…` : 'nmb_…');

/**
 * The keys page. `once`: the create form's nonce (fresh for each page); `created`: the key this
 * page's post made, its secret shown this once; `repeated`: the post repeated one that made that
 * key (a reload), so nothing new was made.
 */
export function keysPage(frame: Frame, keys: KeyRow[], shown: { once: string; created?: { id: string; secret: string }; repeated?: string }): string {
  const { created, repeated } = shown;
  const rows = keys.map(
    (k) => html`<tr data-key="${k.id}" class="${k.revokedAt === null ? 'live' : 'revoked'}">
<td>${k.name ?? ''}</td><td><code>${keyPrefix(k)}</code></td><td>${k.scopes ? k.scopes.join(', ') : 'every product'}</td>
<td>${when(k.createdAt)}</td><td class="last-used">${k.lastUsed === null ? 'never' : when(k.lastUsed)}</td>
<td>${k.revokedAt === null ? html`<a href="/account/keys/${k.id}/revoke">Revoke…</a>` : html`revoked ${when(k.revokedAt)}`}</td></tr>`,
  );
  const fresh = created
    ? html`<section class="notice" id="created"><h2>Your new key</h2>
<p>Copy it now: <strong>this is the only time it is shown</strong>. It is stored only as a hash and cannot be shown again.</p>
<input class="secret" id="secret" type="text" readonly value="${created.secret}" aria-label="the new key">
<p class="muted">Send it as <code>Authorization: Bearer &lt;key&gt;</code>. Key id <code>${created.id}</code>.</p></section>`
    : repeated !== undefined
      ? html`<section class="notice" id="repeated"><h2>This form was already sent</h2>
<p>It made key <code>${repeated}</code> then, whose secret was shown once on that page. No second key was made.</p></section>`
      : null;
  return page(
    'Keys',
    html`${fresh}<section><h2>Keys</h2>
${keys.length === 0 ? html`<p class="muted">No keys yet.</p>` : html`<table id="keys"><thead><tr><th>Name</th><th>Prefix</th><th>Scope</th><th>Created</th><th>Last used</th><th></th></tr></thead><tbody>${rows}</tbody></table>`}</section>
<section><h2>Create a key</h2>
<form method="post" action="/account/keys" id="create-key">${csrfField(frame.csrf)}<input type="hidden" name="once" value="${shown.once}">
<label>Name (optional) <input type="text" name="name" maxlength="100"></label>
<fieldset><legend>Scope: the products it may call (none ticked: every product)</legend>
${PRODUCT_NAMES.map((p) => html`<label class="inline"><input type="checkbox" name="scope" value="${p}"> ${p}</label>`)}
</fieldset>
<p><button type="submit">Create key</button></p></form></section>`,
    frame,
    'keys',
  );
}

export function revokePage(frame: Frame, k: KeyInfo): string {
  return page(
    'Revoke a key',
    html`<section class="notice"><h2>Revoke this key?</h2>
<p>Key <code>${keyPrefix(k)}</code>${k.name ? html` (“${k.name}”)` : null}, created ${when(k.createdAt)}. Every request with it is refused from the moment it is revoked; this cannot be undone.</p>
<form method="post" action="/account/keys/${k.id}/revoke" id="revoke">${csrfField(frame.csrf)}<button class="danger" type="submit">Revoke the key</button> <a href="/account/keys">Cancel</a></form></section>`,
    frame,
    'keys',
  );
}

/** A page of the ledger: newest first, and where the next (older) page starts. */
export interface LedgerPage {
  entries: LedgerEntry[];
  /** `before` for the next (older) page; null: this is the last. */
  older: number | null;
  /** Whether this is the newest page. */
  newest: boolean;
}

export function usagePage(frame: Frame, u: DailyUsage, ledger: LedgerPage): string {
  const tableRows = u.days.flatMap((day) =>
    [...u.cells.get(day)!].map(
      ([p, c]) =>
        html`<tr data-day="${day}" data-product="${p}"><td>${day}</td><td>${p}</td><td class="num requests">${c.requests}</td><td class="num credits">${c.credits}</td></tr>`,
    ),
  );
  const all = totals(u);
  const entries = ledger.entries.map(
    (
      e,
    ) => html`<tr data-seq="${e.seq}"><td class="num">${e.seq}</td><td>${when(e.at)}</td><td>${e.kind}</td><td class="num">${e.credits}</td><td class="num">${e.balance}</td>
<td>${e.product ?? ''}</td><td class="mono">${e.requestId ?? ''}</td><td>${
      e.refundOf !== undefined ? `refund of ${e.refundOf}` : e.refundedBy !== undefined ? `refunded by ${e.refundedBy}` : ''
    }${e.note ? ` ${e.note}` : ''}</td></tr>`,
  );
  return page(
    'Usage',
    html`<section id="usage"><h2>The last ${u.days.length} days (UTC)</h2>
<p>Billed requests: <strong id="requests-total">${all.requests}</strong>. Credits spent: <strong id="credits-spent">${all.credits}</strong>.</p>
<h3>Requests a day</h3>${usageChart(u, 'requests', 'billed requests a day, by product')}
<h3>Credits a day</h3>${usageChart(u, 'credits', 'credits spent a day, by product')}
${chartLegend(u.products)}
<details><summary>The numbers</summary><table id="daily"><thead><tr><th>Day</th><th>Product</th><th class="num">Requests</th><th class="num">Credits</th></tr></thead><tbody>${tableRows}</tbody></table></details>
</section>
<section id="ledger"><h2>Ledger</h2>
<p><a href="/account/usage.csv" download>Download the whole ledger (CSV)</a></p>
<table><thead><tr><th class="num">Seq</th><th>Time</th><th>Kind</th><th class="num">Credits</th><th class="num">Balance</th><th>Product</th><th>Request</th><th></th></tr></thead>
<tbody>${entries}</tbody></table>
<p class="pager">${ledger.newest ? null : html`<a href="/account/usage" id="newest">Newest</a>`}${ledger.older === null ? null : html`<a href="/account/usage?before=${ledger.older}" id="older">Older</a>`}</p></section>`,
    frame,
    'usage',
  );
}
