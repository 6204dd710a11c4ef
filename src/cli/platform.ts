/**
 * The platform's CLI commands: keys, accounts, plans, credits, usage. They work on LMDB alone
 * (no search engine), so they run beside a live server, which sees their writes at its next
 * request.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Cluster, clusterSettings } from '../cluster/index.js';
import { publicBaseUrl, type Config } from '../config.js';
import { AccountEmails, LOGIN_LINK_TTL_MS, SessionStore } from '../dashboard/index.js';
import { isAppError } from '../errors.js';
import {
  Billing,
  formatRate,
  FREE_CREDITS,
  isProduct,
  KeyStore,
  OPERATOR,
  parseRate,
  PRODUCT_NAMES,
  type AccountSummary,
  type KeyScheme,
  type LedgerEntry,
  type Plan,
  type Product,
} from '../platform/index.js';
import { Store } from '../store/index.js';
import { UsageError, quietLog } from './output.js';

export interface PlatformFlags {
  scheme?: string;
  name?: string;
  account?: string;
  scope?: string[];
  rate?: string;
  product?: string;
  plan?: string;
  credits?: string;
  period?: string;
}

const out = (s: string) => process.stdout.write(`${s}\n`);

/**
 * Runs `f` on the store and billing; a refused operation (no such account, bad plan) exits 1
 * with its message. Cluster mode (CLUSTER_NATS_URLS): billing's changes go to the wallet log,
 * computed on this data directory's copy of it (a node's, or none) and on what the log holds past it.
 */
async function withStore(config: Config, f: (store: Store, billing: Billing, cluster: Cluster | null) => number | Promise<number>): Promise<number> {
  fs.mkdirSync(config.dataDir, { recursive: true });
  const store = new Store(path.join(config.dataDir, 'lmdb'));
  const cluster = config.clusterNatsUrls.length > 0 ? await Cluster.open(clusterSettings(config, `cli-${process.pid}`), quietLog(config)) : null;
  const billing = new Billing(store, Date.now, undefined, undefined, cluster?.wallet);
  try {
    return await f(store, billing, cluster);
  } catch (e) {
    if (!isAppError(e)) throw e;
    process.stderr.write(`newsmatch: ${e.message}\n`);
    return 1;
  } finally {
    await billing.close();
    await cluster?.close();
    await store.close();
  }
}

const product = (p: string | undefined): Product => {
  if (!p || !isProduct(p)) throw new UsageError(`--product must be one of ${PRODUCT_NAMES.join(', ')}`);
  return p;
};

const credits = (s: string | undefined): number => {
  const n = Number(s);
  if (!s || !/^\d+$/.test(s) || !Number.isSafeInteger(n) || n <= 0) throw new UsageError(`--credits must be a positive whole number, got ${s ?? 'nothing'}`);
  return n;
};

export function keysCommand(config: Config, rest: string[], f: PlatformFlags): Promise<number> {
  const [sub, arg] = rest;
  return withStore(config, async (store, billing, cluster) => {
    const keys = new KeyStore(store);
    // Cluster mode: a key made or revoked here reaches every node before the command says so.
    const share = async (id: string) => void (await cluster?.shareKey(keys, id));
    switch (sub) {
      case 'create': {
        const scheme = (f.scheme ?? 'bearer') as KeyScheme;
        if (scheme !== 'gateway' && scheme !== 'bearer') throw new UsageError('--scheme must be gateway or bearer');
        const scopes = f.scope ?? [];
        const bad = scopes.filter((s) => !isProduct(s));
        if (bad.length > 0) throw new UsageError(`--scope: unknown product ${bad.join(', ')}; products: ${PRODUCT_NAMES.join(', ')}`);
        if (scheme === 'gateway' && f.account) throw new UsageError('gateway keys belong to no account (the gateway bills its users): leave out --account');
        if (scheme === 'bearer' && f.rate) throw new UsageError("--rate is for gateway keys; a Bearer key has its account's plan limits");
        const rate = f.rate === undefined ? undefined : parseRate(f.rate);
        if (rate === null) throw new UsageError('--rate must look like 10/s, 600/min or 5000/h');
        if (f.account && !(await billing.accountShared(f.account))) throw new UsageError(`no account ${f.account} (newsmatch accounts create)`);
        const { id, secret } = keys.create({ scheme, name: f.name, account: f.account, scopes, rate });
        await share(id);
        const owner = scheme === 'bearer' ? ` for account ${f.account ?? OPERATOR}` : '';
        out(`created ${scheme} key ${id}${f.name ? ` (${f.name})` : ''}${owner}; the secret is shown only now:\n${secret}`);
        return 0;
      }
      case 'list':
        for (const k of keys.list()) {
          const state = k.revokedAt ? `revoked ${new Date(k.revokedAt).toISOString()}` : 'live';
          const extra = [k.account ? `account ${k.account}` : '', k.scopes ? `scope ${k.scopes.join(',')}` : '', k.rate ? `rate ${formatRate(k.rate)}` : '']
            .filter(Boolean)
            .join('  ');
          out(`${k.id}  ${k.scheme.padEnd(7)}  ${state.padEnd(32)}  ${k.name ?? ''}  ${extra}`.trimEnd());
        }
        return 0;
      case 'revoke':
        if (!arg) throw new UsageError('keys revoke takes a key id');
        if (!keys.revoke(arg)) {
          process.stderr.write(`newsmatch: no live key ${arg}\n`);
          return 1;
        }
        await share(arg);
        out(`revoked ${arg}`);
        return 0;
      default:
        throw new UsageError('keys takes create, list or revoke');
    }
  });
}

export function accountsCommand(config: Config, rest: string[], f: PlatformFlags): Promise<number> {
  const [sub, id] = rest;
  return withStore(config, async (store, billing) => {
    switch (sub) {
      case 'create': {
        const a = await billing.createAccountShared(f.name ?? null);
        out(
          `created account${f.name ? ` "${f.name}"` : ''} with ${FREE_CREDITS} free credits, every credit product on the free plan and the marketplace on Free:`,
        );
        out(a.id);
        return 0;
      }
      case 'show':
        if (!id) throw new UsageError('accounts show takes an account id');
        printSummary(billing.summary(id));
        return 0;
      case 'login-link': {
        if (!id) throw new UsageError('accounts login-link takes an account id');
        if (!billing.account(id)) throw new UsageError(`no account ${id} (the operator account has no dashboard; newsmatch accounts create makes one)`);
        const link = new SessionStore(store).createLoginLink(id);
        const url = `${publicBaseUrl(config)}/account/login?token=${link.token}`;
        out(
          `a one-time sign-in link to the dashboard of ${id}, valid ${LOGIN_LINK_TTL_MS / 60_000} minutes (until ${new Date(link.expiresAt).toISOString()}), once:`,
        );
        out(url);
        return 0;
      }
      case 'logout': {
        if (!id) throw new UsageError('accounts logout takes an account id');
        if (!billing.account(id)) throw new UsageError(`no account ${id}`);
        const n = new SessionStore(store).revokeAccount(id);
        out(`ended ${n} dashboard session${n === 1 ? '' : 's'} of ${id}, and voided its unused sign-in links`);
        return 0;
      }
      case 'email': {
        const address = rest[2];
        if (!id || !address) throw new UsageError('accounts email takes an account id and an address (none: remove it)');
        if (!billing.account(id)) throw new UsageError(`no account ${id}`);
        const set = new AccountEmails(store).set(id, address === 'none' ? null : address);
        out(set === null ? `${id} has no address for sign-in links` : `sign-in links for ${id} may be mailed to ${set} (when SMTP_URL is set)`);
        return 0;
      }
      default:
        throw new UsageError('accounts takes create, show, login-link, logout or email');
    }
  });
}

export function subscribeCommand(config: Config, f: PlatformFlags): Promise<number> {
  if (!f.account || !f.plan) throw new UsageError('subscribe needs --account ID --product P --plan PLAN');
  const p = product(f.product);
  return withStore(config, async (_store, billing) => {
    const sub = await billing.subscribeShared(f.account!, p, f.plan as Plan | 'none');
    out(sub ? `${f.account} is on the ${sub.plan} plan of ${p} from now` : `${f.account} no longer subscribes to ${p}`);
    return 0;
  });
}

export function creditsCommand(config: Config, rest: string[], f: PlatformFlags): Promise<number> {
  const [sub] = rest;
  if (sub !== 'grant' && sub !== 'buy') throw new UsageError('credits takes grant or buy: newsmatch credits grant|buy --account ID --credits N');
  if (!f.account) throw new UsageError(`credits ${sub} needs --account ID`);
  const n = credits(f.credits);
  return withStore(config, async (_store, billing) => {
    const e = await (sub === 'grant' ? billing.grantShared(f.account!, n) : billing.buyShared(f.account!, n));
    out(
      `${sub === 'grant' ? 'granted' : 'added'} ${n} ${sub === 'grant' ? 'subscription credits (expire with the period)' : 'purchased credits (never expire)'}; balance ${e.balance}`,
    );
    return 0;
  });
}

/** `--period current|previous|YYYY-MM|all` → [since, until) in unix ms. */
function periodRange(period: string | undefined, now: number): [number, number] {
  if (period === undefined || period === 'all') return [0, Number.POSITIVE_INFINITY];
  const d = new Date(now);
  if (period === 'current') return [Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), Number.POSITIVE_INFINITY];
  if (period === 'previous') return [Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1), Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)];
  const m = /^(\d{4})-(\d{2})$/.exec(period);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 12) throw new UsageError('--period must be all, current, previous or YYYY-MM');
  return [Date.UTC(Number(m[1]), Number(m[2]) - 1, 1), Date.UTC(Number(m[1]), Number(m[2]), 1)];
}

export function usageCommand(config: Config, f: PlatformFlags): Promise<number> {
  if (!f.account) throw new UsageError('usage needs --account ID');
  return withStore(config, (_store, billing) => {
    const [since, until] = periodRange(f.period, Date.now());
    if (f.account !== OPERATOR) printSummary(billing.summary(f.account!));
    out('\nledger (seq  time  kind  credits  balance  product  request):');
    for (const e of billing.entries(f.account!, since, until)) out(ledgerLine(e));
    return 0;
  });
}

function printSummary(s: AccountSummary): void {
  out(`account ${s.id}${s.name ? ` "${s.name}"` : ''}, created ${s.created_at}`);
  const c = s.credits;
  out(`credits: ${c.total} (subscription ${c.subscription}, free ${c.free}, purchased ${c.purchased})`);
  for (const x of c.expiring) out(`  ${x.credits} expire at ${x.expires_at}`);
  out('subscriptions:');
  for (const sub of s.subscriptions) {
    const plan =
      sub.included === undefined
        ? `${sub.credits_per_call} credit(s) a call`
        : `${sub.included} included, overage ${sub.overage_requests} ($${sub.overage_usd?.toFixed(4)}), stops at ${sub.stop}`;
    out(
      `  ${sub.product.padEnd(16)} ${sub.plan.padEnd(6)} ${formatRate(sub.rate_limit).padEnd(7)} used ${String(sub.used).padStart(6)}  ${plan}  period ${sub.period_start} – ${sub.period_end}`,
    );
  }
}

const ledgerLine = (e: LedgerEntry): string =>
  [
    String(e.seq).padStart(6),
    new Date(e.at).toISOString(),
    e.kind.padEnd(9),
    String(e.credits).padStart(6),
    String(e.balance).padStart(7),
    (e.product ?? '').padEnd(16),
    e.requestId ?? '',
    e.units ? `units ${e.units}${e.overageMicros ? ` overage $${(e.overageMicros / 1e6).toFixed(4)}` : ''}` : '',
    e.refundOf ? `refund of ${e.refundOf}` : e.refundedBy ? `refunded by ${e.refundedBy}` : '',
    e.note ?? '',
  ]
    .join('  ')
    .trimEnd();
