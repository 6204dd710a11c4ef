/**
 * Website contacts (`GET /v1/contacts?domain=`, 10 credits): the emails, phones and social
 * profiles a domain publishes, read from its home page and at most CONTACTS_MAX_PAGES − 1
 * same-site pages it links as contact, imprint, about or team. robots.txt is honoured (as
 * `newsmatch`, so `*` groups apply), each page is cut at CONTACTS_PAGE_BYTES, and a redirect
 * off the domain is not followed. Every item names the page it was first found on, and
 * `pages` says what became of each page tried.
 */
import { AppError } from '../../errors.js';
import type { Page } from '../../net/index.js';
import { bad, type Param } from '../declare.js';
import type { LiveCall, LiveEndpoint } from '../scraper.js';
import type { CountryCode, PageContacts } from './extract.js';

export interface ContactItem {
  type: 'email' | 'phone' | 'social';
  value: string;
  /** Phones: "fax" where the page labels the number a fax ("Fax", "Telefax", a fax: link, JSON-LD faxNumber), else "phone"; null for emails and socials. */
  kind: 'phone' | 'fax' | null;
  /** The social network (social items), else null. */
  network: string | null;
  /** The number as the page wrote it (phones), else null. */
  shown: string | null;
  page: string;
}

export interface PageRead {
  url: string;
  status: 'read' | 'truncated' | 'disallowed' | 'redirected_off_site' | 'failed';
  detail: string | null;
}

export interface ContactsOptions {
  /** CONTACTS_BASE_URL: `{domain}` filled in gives the home page's origin. */
  baseUrl: string;
  maxPages: number;
  pageBytes: number;
}

/** A host name (IDN allowed, stored as punycode) with an optional port; no scheme or path. */
const DOMAIN = /^(?=.{1,253}(:|$))([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(:\d{1,5})?$/;
const DOMAIN_WHAT = 'a domain name such as example.com, without scheme or path';

/**
 * The domain: lower-cased, a trailing dot dropped, an internationalised name as the punycode
 * the DNS holds, then matched against DOMAIN (which the sent form need not match, so the
 * schema checks only that it is text).
 */
const domainParam: Param<string> = {
  schema: {
    type: 'string',
    minLength: 1,
    maxLength: 300,
    examples: ['example.com'],
    description: `${DOMAIN_WHAT[0].toUpperCase()}${DOMAIN_WHAT.slice(1)}; an internationalised one is read as its punycode.`,
  },
  required: true,
  read: (value, name) => {
    let host = value.trim().toLowerCase().replace(/\.$/, '');
    if (URL.canParse(`http://${host}`) && !/[/?#@\s]/.test(host)) host = new URL(`http://${host}`).host;
    if (!DOMAIN.test(host)) throw bad(`${name}: ${DOMAIN_WHAT}, got ${JSON.stringify(host)}`);
    return host;
  },
};

export function contactsEndpoint(opts: ContactsOptions) {
  const contacts: LiveEndpoint<{ domain: string }, ContactItem> = {
    engine: 'contacts',
    family: 'contacts',
    params: { domain: domainParam },
    run: (q, call) => crawl(q.domain, call, opts),
  };
  return { contacts };
}

async function crawl(domain: string, call: LiveCall, opts: ContactsOptions) {
  const origin = new URL(opts.baseUrl.replace(/\{domain\}/g, domain)).origin;
  const pages: PageRead[] = [];
  const found = new Map<string, ContactItem>();
  const add = (item: ContactItem) => {
    const key = `${item.type}\t${item.type === 'email' ? item.value.toLowerCase() : item.value}`;
    if (!found.has(key)) found.set(key, item);
  };
  const done = () => ({ results: [...found.values()], extra: { domain, pages } });

  // A site that cannot be reached at all fails the call (502), rather than reading as "disallowed".
  const robots = await call.robots(origin, { untrusted: true });
  /** Reads one page and collects its contacts; the home page's (null for another page) gives its hints and links. */
  const read = async (url: string, home: { hints: CountryCode[] } | null): Promise<{ hints: CountryCode[]; links: string[] } | null> => {
    const refusal = robots.refusal(url);
    if (refusal) {
      pages.push({ url, status: 'disallowed', detail: refusal });
      return null;
    }
    let page: Page;
    try {
      page = await call.get(url, { untrusted: true, offSite: 'stop', cutAt: opts.pageBytes });
    } catch (e) {
      // The home page failing fails the call; a linked page failing is noted and skipped.
      if (!home || !(e instanceof AppError) || e.code !== 'scrape_failed') throw e;
      pages.push({ url, status: 'failed', detail: e.message });
      return null;
    }
    if (page.redirectedTo) {
      pages.push({ url, status: 'redirected_off_site', detail: `redirected to ${page.redirectedTo}, not followed` });
      return null;
    }
    pages.push({
      url: page.url,
      status: page.truncated ? 'truncated' : 'read',
      detail: page.truncated ? `cut at ${opts.pageBytes} bytes (CONTACTS_PAGE_BYTES)` : null,
    });
    const { contacts, hints, links } = await call.parse('readContactsPage', page.html, page.url, home, opts.maxPages - 1);
    collect(contacts, page.url);
    return { hints, links };
  };
  const collect = (c: PageContacts, url: string) => {
    for (const value of c.emails) add({ type: 'email', value, kind: null, network: null, shown: null, page: url });
    for (const p of c.phones) add({ type: 'phone', value: p.e164, kind: p.kind, network: null, shown: p.shown, page: url });
    for (const s of c.socials) add({ type: 'social', value: s.url, kind: null, network: s.network, shown: null, page: url });
  };

  const home = await read(`${origin}/`, null);
  if (home === null) return done();
  // Read one after another: a small site is not hit by a burst, and the order of `pages` is stable.
  for (const url of home.links) await read(url, { hints: home.hints });
  return done();
}
