/**
 * Social profile links, canonicalised so one profile linked several ways is one entry:
 * "http://mobile.twitter.com/AcmeHQ?lang=de" and "https://x.com/acmehq/" → "https://x.com/acmehq".
 */

export interface Social {
  /** facebook, instagram, x, linkedin, youtube, tiktok, github, pinterest, threads, bluesky, mastodon */
  network: string;
  url: string;
}

interface Network {
  name: string;
  /** Whether this network's hosts (after www./m./mobile./web./locale. are dropped) include `host`. */
  hosts: (host: string) => boolean;
  /** Canonical host of a profile URL on `host`. */
  canon: (host: string) => string;
  /** The profile's canonical path from the link's path segments (query for Facebook's numeric ids), or null for a non-profile link. */
  profile: (segs: string[], url: URL) => string | null;
}

// Pages every network has that are never a profile.
const NOT_PROFILE = new Set([
  'share',
  'sharer',
  'sharer.php',
  'intent',
  'login',
  'logout',
  'signup',
  'home',
  'home.php',
  'privacy',
  'legal',
  'help',
  'policy',
  'policies',
  'terms',
  'tos',
  'about',
  'settings',
  'search',
  'explore',
  'hashtag',
  'dialog',
  'plugins',
]);
const reserved = (...words: string[]): Set<string> => new Set([...NOT_PROFILE, ...words]);

const FB_RESERVED = reserved(
  'watch',
  'events',
  'marketplace',
  'gaming',
  'photo',
  'photos',
  'ads',
  'business',
  'notes',
  'reel',
  'reels',
  'stories',
  'messages',
  'friends',
  'bookmarks',
  'tr',
);
const IG_RESERVED = reserved('p', 'reel', 'reels', 'tv', 'stories', 'accounts', 'direct', 'developer', 'web');
const X_RESERVED = reserved('i', 'share', 'messages', 'notifications', 'compose', 'en');
const GH_RESERVED = reserved(
  'features',
  'pricing',
  'join',
  'site',
  'security',
  'topics',
  'marketplace',
  'sponsors',
  'settings',
  'contact',
  'enterprise',
  'team',
  'customer-stories',
  'readme',
  'collections',
  'trending',
  'events',
  'apps',
  'pulls',
  'issues',
  'notifications',
  'new',
  'organizations',
  'codespaces',
  'resources',
  'solutions',
);
const PIN_RESERVED = reserved('pin', 'ideas', 'today', '_', 'business', 'categories', 'topics');
const MASTODON = new Set([
  'mastodon.social',
  'mastodon.online',
  'mstdn.social',
  'fosstodon.org',
  'hachyderm.io',
  'infosec.exchange',
  'mas.to',
  'mastodon.world',
]);

const only =
  (...hosts: string[]) =>
  (h: string) =>
    hosts.includes(h);
const fixed = (host: string) => () => host;
/** The segment when it matches `re` and is not reserved, else null. */
const handle = (seg: string | undefined, re: RegExp, no?: Set<string>): string | null =>
  seg !== undefined && re.test(seg) && !no?.has(seg.toLowerCase()) ? seg : null;
const lower = (s: string | undefined): string | undefined => s?.toLowerCase();

const NETWORKS: Network[] = [
  {
    name: 'facebook',
    hosts: only('facebook.com', 'fb.com'),
    canon: fixed('facebook.com'),
    profile: ([a, b, c], url) => {
      if (a === 'profile.php') return /^\d+$/.test(url.searchParams.get('id') ?? '') ? `profile.php?id=${url.searchParams.get('id')}` : null;
      if ((a === 'pages' || a === 'people') && b && c) return `${a}/${b}/${c}`;
      if (a === 'groups' && b) return `groups/${b}`;
      if (a === 'pg') return handle(b, /^[\w.%-]+$/, FB_RESERVED);
      return handle(a, /^(?![\w.%-]*\.php$)[\w.%-]+$/, FB_RESERVED);
    },
  },
  { name: 'instagram', hosts: only('instagram.com'), canon: fixed('instagram.com'), profile: ([a]) => handle(lower(a), /^[a-z0-9._]{1,30}$/, IG_RESERVED) },
  { name: 'x', hosts: only('twitter.com', 'x.com'), canon: fixed('x.com'), profile: ([a]) => handle(lower(a), /^[a-z0-9_]{1,15}$/, X_RESERVED) },
  {
    name: 'linkedin',
    hosts: only('linkedin.com'),
    canon: fixed('linkedin.com'),
    profile: ([a, b]) => (a && ['company', 'in', 'school', 'showcase'].includes(a) && handle(b, /^[\w.%-]+$/) ? `${a}/${b}` : null),
  },
  {
    name: 'youtube',
    hosts: only('youtube.com'),
    canon: fixed('youtube.com'),
    profile: ([a, b]) => handle(a, /^@[\w.%-]+$/) ?? (a && ['channel', 'c', 'user'].includes(a) && handle(b, /^[\w.%-]+$/) ? `${a}/${b}` : null),
  },
  { name: 'tiktok', hosts: only('tiktok.com'), canon: fixed('tiktok.com'), profile: ([a]) => handle(a, /^@[\w.]+$/) },
  {
    name: 'github',
    hosts: only('github.com'),
    canon: fixed('github.com'),
    profile: ([a, b]) => handle(lower(a === 'orgs' ? b : a), /^[a-z0-9][a-z0-9-]{0,38}$/, GH_RESERVED),
  },
  {
    name: 'pinterest',
    // pinterest.de, pinterest.co.uk, pinterest.com.au … are one network.
    hosts: (h) => /^pinterest\.(?:com|[a-z]{2}|co\.[a-z]{2}|com\.[a-z]{2})$/.test(h),
    canon: fixed('pinterest.com'),
    profile: ([a]) => handle(a, /^[\w.-]+$/, PIN_RESERVED),
  },
  // Threads moved from threads.net to threads.com in 2025; both name one profile.
  { name: 'threads', hosts: only('threads.net', 'threads.com'), canon: fixed('threads.com'), profile: ([a]) => handle(a, /^@[\w.]+$/) },
  {
    name: 'bluesky',
    hosts: only('bsky.app'),
    canon: fixed('bsky.app'),
    profile: ([a, b]) => (a === 'profile' && handle(b, /^[\w.:-]+$/) ? `profile/${b}` : null),
  },
  { name: 'mastodon', hosts: (h) => MASTODON.has(h), canon: (h) => h, profile: ([a]) => handle(a, /^@\w+$/) },
];

/**
 * The canonical profile a link points at, or null for anything else: another site, a share,
 * intent or login link, a policy or help page, a post without a profile in its path, or the
 * bare home page. A link without a scheme (as JSON-LD sameAs sometimes has) is read as https.
 */
export function canonicalSocial(href: string, base?: string): Social | null {
  let url: URL;
  try {
    const abs = !base && !/^[a-z][a-z0-9+.-]*:/i.test(href.trim()) ? `https://${href.trim().replace(/^\/\//, '')}` : href.trim();
    url = new URL(abs, base);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  // Mobile and language subdomains show the same profile; other subdomains (help., developers., gist.) are other sites.
  const host = url.hostname.toLowerCase().replace(/^(?:www|m|mobile|web|[a-z]{2}(?:-[a-z]{2})?)\.(?=.+\.)/, '');
  const net = NETWORKS.find((n) => n.hosts(host));
  if (!net) return null;
  const segs = url.pathname.split('/').filter(Boolean);
  const path = segs.length ? net.profile(segs, url) : null;
  return path ? { network: net.name, url: `https://${net.canon(host)}/${path}` } : null;
}
