/**
 * The launch listing site (a Product Hunt–like site): its daily leaderboard and a launch's page.
 *
 * No real page of the site was ever captured (test/fixtures/pages/PROVENANCE.md, "Targets not
 * found"), so the selectors follow the site's publicly documented markup and are checked only
 * against hand-written pages (test/fixtures/pages/synthetic/LAUNCHES-PUBLISHER.PROVENANCE.md):
 * - a leaderboard post is `section[data-test="post-item-<id>"]`; its name is
 *   `[data-test="post-name-<id>"]` (the link itself, or a span around it) reading "3. Name"
 *   on ranked lists; the link goes to `/posts/<slug>` (older) or `/products/<slug>` (newer);
 *   topics link to `/topics/<topic>`; `button[data-test="vote-button"]` holds the vote count;
 * - a launch page has the name in `h1`, the tagline in `h2`, `/@username` user links under
 *   labels "Hunter" and "Makers", comments in `[data-test="comment-<id>"]`.
 */
import { absoluteUrl, assertNotRobotCheck, imageUrl, loadPage, ScrapeError, textOf } from '../page.js';

/** One post of a daily leaderboard. */
export interface Launch {
  /** The rank the page shows ("3. Name"), else the position on the page, 1-based. */
  rank: number;
  slug: string;
  name: string;
  tagline: string | null;
  /** Topic names as shown ("Developer Tools"). */
  topics: string[];
  votes: number | null;
  comments: number | null;
  /** The launch's page on the listing site. */
  url: string;
  thumbnail_url: string | null;
}

/** A user as the site links one: `/@username`. */
export interface LaunchUser {
  name: string;
  username: string;
  url: string;
}

export interface LaunchComment {
  author: string | null;
  username: string | null;
  body: string;
  posted_at: string | null;
  votes: number | null;
}

/** Outbound links the launch page shows for the product and its makers, one per kind. */
export interface LaunchContact {
  website: string | null;
  x: string | null;
  linkedin: string | null;
  github: string | null;
  facebook: string | null;
  instagram: string | null;
  youtube: string | null;
  email: string | null;
}

export interface LaunchDetail {
  slug: string;
  name: string;
  tagline: string | null;
  description: string | null;
  /** The product's outbound link as the page shows it (a tracking redirect included); never fetched. */
  website: string | null;
  launched_at: string | null;
  topics: string[];
  votes: number | null;
  hunter: LaunchUser | null;
  makers: LaunchUser[];
  /** Gallery images, absolute, in page order. */
  images: string[];
  /** Comments and replies in page order. */
  comments: LaunchComment[];
  contact: LaunchContact;
}

const POST = 'section[data-test^="post-item-"]';
const COMMENT_TEST = /^comment-\d+$/;
const SLUG_PATH = /^\/(?:posts|products)\/([^/?#]+)/;

/**
 * The posts of a daily leaderboard page, in page order. A leaderboard with no posts (a day
 * with "No launches yet") gives []; a page that is no leaderboard throws ScrapeError.
 */
export function parseLeaderboard(html: string, origin: string): Launch[] {
  const doc = loadPage(html);
  assertNotRobotCheck(doc);
  const posts = [...doc.querySelectorAll(POST)];
  if (posts.length === 0) {
    // Empty only with both the leaderboard's day navigation and its "nothing yet" message: a
    // bare message on some other page is not an empty day.
    const isLeaderboard = !!doc.querySelector('a[href*="/leaderboard/daily/"]');
    const empty = /\bno (?:launches|products|posts)\b/i.test(doc.body?.textContent ?? '');
    if (isLeaderboard && empty) return [];
    throw new ScrapeError('no post items on the page: the layout changed or the page is not a leaderboard');
  }
  const out: Launch[] = [];
  for (const post of posts) {
    const launch = parsePost(post, origin, out.length + 1);
    if (launch) out.push(launch);
  }
  if (out.length === 0) throw new ScrapeError('leaderboard post items without a name link: the layout changed');
  return out;
}

function parsePost(post: Element, origin: string, position: number): Launch | null {
  const nameEl = post.querySelector('[data-test^="post-name-"]');
  const link = nameEl?.closest('a[href]') ?? nameEl?.querySelector('a[href]') ?? null;
  const path = pathOf(link?.getAttribute('href'), origin);
  const slug = path && SLUG_PATH.exec(path)?.[1];
  const shown = textOf(nameEl);
  if (!slug || !shown || !path) return null;
  const ranked = /^(\d+)\.\s*(.+)$/.exec(shown);
  const commentLink = post.querySelector('a[href$="#comments"]');
  return {
    rank: ranked ? Number(ranked[1]) : position,
    slug,
    name: ranked ? ranked[2]! : shown,
    tagline: tagline(post, nameEl!),
    topics: topics(post),
    votes: count(textOf(post.querySelector('button[data-test="vote-button"]'))),
    comments: count(textOf(commentLink)) ?? count(textOf(post.querySelector('button:not([data-test])'))),
    url: new URL(path, origin).href,
    thumbnail_url: imageUrl(post.querySelector('img'), origin),
  };
}

/**
 * The first text leaf of the post that is not its name, a topic, a count or a separator: the
 * tagline is a link to the post in the older layout and a plain span in the newer one.
 */
function tagline(post: Element, nameEl: Element): string | null {
  for (const el of post.querySelectorAll('a, span, div, p')) {
    if (el.children.length || nameEl.contains(el) || el.closest('button, a[href^="/topics/"], a[href$="#comments"]')) continue;
    const t = textOf(el);
    if (t && !/^[\d.,kKmM\s•·]+$/.test(t)) return t;
  }
  return null;
}

function topics(scope: Element): string[] {
  const names = [...scope.querySelectorAll('a[href^="/topics/"]')]
    .filter((a) => !a.closest('nav, footer'))
    .map((a) => textOf(a))
    .filter((t): t is string => !!t);
  return [...new Set(names)];
}

/** "1,204", "1.2K", "Upvote (12)", "112 comments" → the number; null when there is none. */
function count(text: string | null): number | null {
  const m = text?.match(/(\d[\d,]*(?:\.\d+)?)\s*([KkMm])?\b/);
  if (!m) return null;
  const n = Number(m[1]!.replace(/,/g, ''));
  return Math.round(m[2] ? n * (/k/i.test(m[2]) ? 1_000 : 1_000_000) : n);
}

/** A same-site link's path (query and fragment dropped), or null for another site. */
function pathOf(href: string | null | undefined, origin: string): string | null {
  if (!href) return null;
  try {
    const u = new URL(href, `${origin}/`);
    return u.origin === new URL(origin).origin ? u.pathname : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// The launch page

/**
 * A launch's page; null when the site answered with its not-found page. Throws ScrapeError on
 * a robot check and on a page that is not a launch page (a leaderboard, a layout change).
 */
export function parseLaunch(html: string, origin: string): LaunchDetail | null {
  const doc = loadPage(html);
  assertNotRobotCheck(doc);
  const h1 = textOf(doc.querySelector('h1'));
  if (isNotFound(doc, h1)) return null;
  if (doc.querySelector(POST)) throw new ScrapeError('a leaderboard, not a launch page');
  const main = doc.querySelector('main') ?? doc.body;
  const canonical = doc.querySelector('link[rel="canonical"]')?.getAttribute('href') ?? doc.querySelector('meta[property="og:url"]')?.getAttribute('content');
  // Any host's path: a mirror (LAUNCHES_BASE_URL) serves pages whose canonical names the real site.
  const slug = (canonical && URL.canParse(canonical, `${origin}/`) ? new URL(canonical, `${origin}/`).pathname : undefined)?.match(SLUG_PATH)?.[1];
  if (!h1 || !slug || !main) throw new ScrapeError('no launch name (h1) or canonical launch link: the layout changed or the page is not a launch page');

  const website = outbound(doc.querySelector('a[data-test="visit-website-button"]') ?? [...main.querySelectorAll('a[href]')].find((a) => /^visit( website)?$/i.test(textOf(a) ?? '')), origin);
  const notComment = (el: Element) => !commentOf(el);
  return {
    slug,
    name: h1,
    tagline: textOf(main.querySelector('h2')),
    description: paragraphs(main.querySelector('[data-test="post-description"]')) ?? doc.querySelector('meta[name="description"]')?.getAttribute('content')?.trim() ?? null,
    website,
    launched_at: isoAttr([...main.querySelectorAll('time')].find(notComment)),
    topics: topics(main),
    votes: count(textOf([...main.querySelectorAll('button[data-test="vote-button"]')].find(notComment))),
    hunter: usersUnder(main, /^hunter$/i, origin)[0] ?? null,
    makers: usersUnder(main, /^makers?$/i, origin),
    images: gallery(main, origin),
    comments: [...main.querySelectorAll('[data-test^="comment-"]')].filter((el) => COMMENT_TEST.test(el.getAttribute('data-test') ?? '')).map((el) => parseComment(el, origin)),
    contact: contact(main, website, origin),
  };
}

/** The site's 404: a "Page not found" title or heading. */
function isNotFound(doc: Document, h1: string | null): boolean {
  const title = textOf(doc.querySelector('title')) ?? '';
  return /\b(page not found|404)\b/i.test(title) || /\b(page not found|couldn.t find)\b/i.test(h1 ?? '');
}

/** A link's absolute href as shown (redirects and tracking parameters kept); null for none. */
function outbound(a: Element | null | undefined, origin: string): string | null {
  return absoluteUrl(a?.getAttribute('href')?.trim(), `${origin}/`);
}

/** Text with its paragraphs on lines of their own (an element without p: its text). */
function paragraphs(el: Element | null | undefined): string | null {
  const ps = el ? [...el.querySelectorAll('p')].map((p) => textOf(p)).filter(Boolean) : [];
  return ps.length ? ps.join('\n') : textOf(el);
}

function isoAttr(el: Element | null | undefined): string | null {
  const v = el?.getAttribute('datetime') ?? el?.getAttribute('dateTime');
  const d = v ? new Date(v) : null;
  return d && !Number.isNaN(d.getTime()) ? d.toISOString() : null;
}

/** The comment an element belongs to (the innermost `[data-test="comment-<id>"]`), or null. */
function commentOf(el: Element): Element | null {
  for (let e: Element | null = el; e; e = e.parentElement) {
    if (COMMENT_TEST.test(e.getAttribute('data-test') ?? '')) return e;
  }
  return null;
}

/** `/@username` links of the section whose label (a heading or short text leaf) matches. */
function usersUnder(main: Element, label: RegExp, origin: string): LaunchUser[] {
  // Comments carry "Hunter" / "Maker" badges: never a section label.
  const heading = [...main.querySelectorAll('h2, h3, h4, h5, div, span, p')].find((el) => !el.children.length && !commentOf(el) && label.test(textOf(el) ?? ''));
  const box = heading?.closest('section') ?? heading?.parentElement;
  return box ? users([...box.querySelectorAll('a[href^="/@"]')], origin) : [];
}

/** Users from their links, one per username: the name is a link's text, else its avatar's alt. */
function users(links: Element[], origin: string): LaunchUser[] {
  const byName = new Map<string, LaunchUser>();
  for (const a of links) {
    const username = /^\/@([^/?#]+)/.exec(a.getAttribute('href') ?? '')?.[1];
    if (!username) continue;
    const name = textOf(a) ?? a.querySelector('img')?.getAttribute('alt')?.trim() ?? null;
    const seen = byName.get(username);
    if (!seen) byName.set(username, { name: name ?? username, username, url: `${new URL(origin).origin}/@${username}` });
    else if (name && seen.name === username) seen.name = name;
  }
  return [...byName.values()];
}

function gallery(main: Element, origin: string): string[] {
  const urls = [...main.querySelectorAll('[data-test*="gallery"] img')].map((img) => imageUrl(img, origin)).filter((u): u is string => !!u);
  return [...new Set(urls)];
}

function parseComment(el: Element, origin: string): LaunchComment {
  const own = (sel: string) => [...el.querySelectorAll(sel)].filter((e) => commentOf(e) === el);
  const author = users(own('a[href^="/@"]').slice(0, 2), origin)[0] ?? null;
  const body = paragraphs(own('[data-test="comment-body"]')[0]) ?? own('p').map((p) => textOf(p)).filter(Boolean).join('\n');
  return {
    author: author?.name ?? null,
    username: author?.username ?? null,
    body: body ?? '',
    posted_at: isoAttr(own('time')[0]),
    votes: count(textOf(own('button[data-test="vote-button"]')[0] ?? own('button').find((b) => /upvote/i.test(textOf(b) ?? '')))),
  };
}

const SOCIAL: [keyof LaunchContact, RegExp][] = [
  ['x', /^(?:www\.)?(?:x|twitter)\.com$/],
  ['linkedin', /(?:^|\.)linkedin\.com$/],
  ['github', /^(?:www\.)?github\.com$/],
  ['facebook', /(?:^|\.)facebook\.com$/],
  ['instagram', /^(?:www\.)?instagram\.com$/],
  ['youtube', /(?:^|\.)youtube\.com$|^youtu\.be$/],
];

/**
 * The first link of each kind on the page outside comments, navigation and footer (the site's
 * own social links live there), the site's own links left out.
 */
function contact(main: Element, website: string | null, origin: string): LaunchContact {
  const out: LaunchContact = { website, x: null, linkedin: null, github: null, facebook: null, instagram: null, youtube: null, email: null };
  const site = new URL(origin).hostname.replace(/^www\./, '');
  for (const a of main.querySelectorAll('a[href]')) {
    if (commentOf(a) || a.closest('nav, footer')) continue;
    const href = a.getAttribute('href')!.trim();
    if (/^mailto:/i.test(href)) {
      out.email ??= href.slice(7).split('?')[0] || null;
      continue;
    }
    let u: URL;
    try {
      u = new URL(href);
    } catch {
      continue;
    }
    if (u.hostname.replace(/^www\./, '') === site) continue;
    const kind = SOCIAL.find(([, re]) => re.test(u.hostname))?.[0];
    if (kind) out[kind] ??= u.href;
  }
  return out;
}
