/**
 * Which of a page's links lead to the site's own contact, imprint, about or team pages: the
 * next pages a contact crawl should fetch.
 */

/*
 * Kinds of page in rank order, each as a pattern for the link's last path segment
 * ("kontakt.html", "about-us") and one for its text ("Über uns"). Both anchor at a word start
 * only, so "contact-us", "Kontaktformular" and "Contacts" match.
 */
const KINDS: { path: RegExp; text: RegExp }[] = [
  { path: /(?:^|[-_])(?:contact|kontakt|contacto|contatti|contato|contactez)/, text: /(?:^|[^\p{L}])(?:contact|kontakt|contacto|contatti|contato|contactez)/u },
  {
    path: /(?:^|[-_])(?:imprint|impressum|mentions-legales|legal-notice|aviso-legal|colofon)/,
    text: /(?:^|[^\p{L}])(?:imprint|impressum|mentions légales|mentions legales|legal notice|aviso legal|colofon)/u,
  },
  {
    path: /(?:^|[-_])(?:about|über-uns|ueber-uns|uber-uns|chi-siamo|qui-sommes-nous|quienes-somos|sobre-nosotros|over-ons|company|unternehmen)/,
    text: /(?:^|[^\p{L}])(?:about|über uns|ueber uns|chi siamo|qui sommes|quiénes somos|quienes somos|sobre nosotros|over ons|company|unternehmen)/u,
  },
  { path: /(?:^|[-_])(?:team|people|staff|ansprechpartner)/, text: /(?:^|[^\p{L}])(?:team|people|staff|ansprechpartner)/u },
];

// Pages, not downloads: a last segment with one of these extensions, or none, is a page.
const PAGE_EXT = /\.(?:html?|php\d?|aspx?|jsp|shtml|cfm)$/;

const bareHost = (h: string): string => h.toLowerCase().replace(/^www\./, '');
/** One key for the ways a link names one page: http or https, www. or not, a trailing slash or not, any fragment. */
const pageKey = (u: URL): string => `${bareHost(u.host)}${u.pathname.replace(/\/+$/, '')}${u.search}`;

/**
 * Absolute URLs of up to `max` links on the page to likely contact pages of the same site
 * (www. and the bare host are one site, subdomains are not), best first: contact, then
 * imprint, about, team; page order within a kind. Never the page itself, a fragment-only
 * link, mailto:/tel:, or a file (.pdf …). Link text counts only when short, so an article
 * headline that mentions "our team" is not taken for a team page.
 */
export function contactPageLinks(doc: Document, pageUrl: string, max: number): string[] {
  const page = new URL(pageUrl);
  let base = page;
  try {
    const b = doc.querySelector('base[href]')?.getAttribute('href');
    if (b) base = new URL(b, pageUrl);
  } catch {
    // An unreadable <base> leaves links relative to the page.
  }
  const best = new Map<string, { url: string; rank: number }>();
  for (const a of doc.querySelectorAll('a[href]')) {
    const href = a.getAttribute('href')!.trim();
    if (!href || href.startsWith('#')) continue;
    let url: URL;
    try {
      url = new URL(href, base);
    } catch {
      continue;
    }
    if ((url.protocol !== 'https:' && url.protocol !== 'http:') || bareHost(url.host) !== bareHost(page.host)) continue;
    const key = pageKey(url);
    if (key === pageKey(page)) continue;
    let last = url.pathname.split('/').filter(Boolean).pop() ?? '';
    try {
      last = decodeURIComponent(last).toLowerCase();
    } catch {
      last = last.toLowerCase();
    }
    if (/\.[a-z0-9]{1,5}$/.test(last) && !PAGE_EXT.test(last)) continue;
    last = last.replace(PAGE_EXT, '');
    const text = (a.textContent ?? '').replace(/\s+/g, ' ').trim().toLowerCase();
    const rank = KINDS.findIndex((k) => k.path.test(last) || (text.length <= 40 && k.text.test(text)));
    const seen = best.get(key);
    url.hash = '';
    if (rank >= 0 && (!seen || rank < seen.rank)) best.set(key, { url: seen?.url ?? url.href, rank });
  }
  // Map order is first-seen order and the sort is stable, so page order holds within a rank.
  return [...best.values()]
    .sort((a, b) => a.rank - b.rank)
    .slice(0, Math.max(0, max))
    .map((l) => l.url);
}
