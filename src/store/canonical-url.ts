/** Query parameters that identify a campaign or a click, not a page (an article is its canonical URL: the same page under two campaign tags is one article). */
const TRACKING = /^(utm_.*|fbclid|gclid|dclid|gbraid|wbraid|msclkid|mc_cid|mc_eid|igshid|yclid|_hsenc|_hsmktracking|mkt_tok|ocid|cmpid|smid|sr_share)$/i;

/**
 * The article identity of a URL: scheme and host lower-cased (WHATWG URL does that), default
 * port dropped, fragment and tracking parameters removed, remaining parameters kept in order.
 * Returns null for anything that is not an absolute http(s) URL.
 *
 * Example: `HTTPS://News.Example.com:443/a?id=7&utm_source=x#top` → `https://news.example.com/a?id=7`
 */
export function canonicalUrl(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  u.hash = '';
  u.username = '';
  u.password = '';
  for (const key of [...u.searchParams.keys()]) if (TRACKING.test(key)) u.searchParams.delete(key);
  // URLSearchParams re-serialises what it touched; an untouched `?` with no params is dropped too.
  if ([...u.searchParams.keys()].length === 0) u.search = '';
  return u.toString();
}
