/**
 * The launch listing site (Product Hunt): its launch lists (the home page, a daily
 * leaderboard) and a launch's page.
 *
 * The lists are checked against one real page, the home page of 2026-03-08
 * (test/fixtures/pages/launches/, in test/fixtures/pages/PROVENANCE.md). It is a Next.js page whose Apollo
 * client ships its query results in a script,
 * `(window[Symbol.for("ApolloSSRDataTransport")] ??= []).push({rehydrate, events})`: each
 * `started` event carries its GraphQL query, each `next` event its result. The home page's
 * `HomePage` / `HomePageLowPriority` queries ask for `homefeed(kind:FEATURED section:TODAY)`
 * and `yesterday:` / `lastWeek:` / `lastMonth:` aliases of it; each answers a `HomefeedPage`
 * (`period` "daily" | "weekly" | "monthly") whose `items` are `Post`s between `Ad`s:
 *
 *   { "__typename": "Post", "id": "1079493", "name": "TestSprite 2.1", "slug": "testsprite-2-1",
 *     "tagline": "…", "hideVotesCount": false, "product": { "slug": "testsprite" },
 *     "thumbnailImageUuid": "39d5….png", "featuredAt": "2026-03-07T00:01:00-08:00",
 *     "dailyRank": "1", "weeklyRank": "4", "monthlyRank": "6", "latestScore": 417, "commentsCount": 40,
 *     "topics": { "edges": [{ "node": { "name": "SaaS" } }, …] } }
 *
 * That state is read first: it has what the markup lacks (the post's own slug, the launch
 * time, the posts a section folds under "See all"). The markup is the fallback:
 * - a post is `section[data-test="post-item-<id>"]` (ads are `ad-slot-<id>`), inside
 *   `[data-test="homepage-section-today|yesterday|last-week|last-month"]` on the home page;
 * - its name is `span[data-test="post-name-<id>"] > a[href="/products/<product>"]`, reading
 *   "1. TestSprite 2.1" on ranked lists and a bare name in today's (shuffled) list; the
 *   tagline a plain span; topics link to `/topics/<topic>`; the comment count is an unlabeled
 *   button and `button[data-test="vote-button"]` the votes ("—" while the site hides them).
 *
 * The older markup (the name link to `/posts/<slug>` reading "3. Name", the tagline as a
 * second link, `/posts/<slug>#comments`) and a day's `/leaderboard/daily/` page are known only
 * from hand-written pages (test/fixtures/pages/synthetic/launches-*.html), as is the launch
 * page: no real one was captured. Its selectors follow the site's documented markup: name in
 * `h1`, tagline in `h2`, `/@username` links under labels "Hunter" and "Makers", comments in
 * `[data-test="comment-<id>"]`.
 */
import { isoInstant } from '../dates.js';
import { absoluteUrl, assertNotRobotCheck, imageUrl, loadPage, ScrapeError, textOf } from '../page.js';

/** One launch of a list (a daily leaderboard, a section of the home page). */
export interface Launch {
  /**
   * Its rank in its list: the site's rank for the list's period (`dailyRank`, `weeklyRank`,
   * `monthlyRank`) or the "3. Name" the page shows; else the position in the list, 1-based
   * (today's list on the home page is shuffled and unranked).
   */
  rank: number;
  /**
   * The launch's slug, as `/v1/launches/product` takes it ("testsprite-2-1"). Read from the
   * markup alone it is the product's slug from the name link ("testsprite"): the cards show no other.
   */
  slug: string;
  name: string;
  tagline: string | null;
  /** Topic names as shown ("Developer Tools"). */
  topics: string[];
  /** Upvotes; null where the page hides them (the first hours of a launch day show "—"). */
  votes: number | null;
  comments: number | null;
  /** The page the card links to on the listing site (`/products/<product>`, older `/posts/<slug>`). */
  url: string;
  thumbnail_url: string | null;
  /**
   * The home page's list it is in: "today", "yesterday", "last_week" or "last_month" (the
   * site's own section names); null on a page with one list (a day's leaderboard).
   */
  section: string | null;
  /** When it went live (ISO 8601), from the embedded state; null when only the markup was read. */
  launched_at: string | null;
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
const SECTION = '[data-test^="homepage-section-"]';
const COMMENT_TEST = /^comment-\d+$/;
const SLUG_PATH = /^\/(?:posts|products)\/([^/?#]+)/;
/** The home page's sections in the order it shows them. */
const SECTION_ORDER = ['today', 'yesterday', 'last_week', 'last_month'];
/** The site's image host: the state names thumbnails by file name only. */
const IMAGE_HOST = 'https://ph-files.imgix.net/';

/**
 * The launches of a list page (the home page's sections, a day's leaderboard), in page
 * order: from the embedded Apollo state when it holds a list of posts, else from the markup.
 * A leaderboard with no posts (a day with "No launches yet") gives []; a page that is neither
 * throws ScrapeError naming what it lacks.
 */
export function parseLeaderboard(html: string, origin: string): Launch[] {
  const doc = loadPage(html);
  assertNotRobotCheck(doc);
  const fromState = launchesFromState(doc, origin);
  if (fromState.length) return fromState;
  const posts = [...doc.querySelectorAll(POST)];
  if (posts.length === 0) {
    // Empty only with both the leaderboard's day navigation and its "nothing yet" message: a
    // bare message on some other page is not an empty day.
    const isLeaderboard = !!doc.querySelector('a[href*="/leaderboard/daily/"]');
    const empty = /\bno (?:launches|products|posts)\b/i.test(doc.body?.textContent ?? '');
    if (isLeaderboard && empty) return [];
    throw new ScrapeError(
      'no launch list on the page: no Post list in an embedded Apollo state (ApolloSSRDataTransport) and no post items (section[data-test^="post-item-"]): the layout changed or the page is not a launch list',
    );
  }
  const out: Launch[] = [];
  const positions = new Map<Element | null, number>();
  for (const post of posts) {
    const box = post.closest(SECTION);
    const position = (positions.get(box) ?? 0) + 1;
    const launch = parsePost(post, origin, position, box);
    if (!launch) continue;
    positions.set(box, position);
    out.push(launch);
  }
  if (out.length === 0)
    throw new ScrapeError('post items without a name link ([data-test^="post-name-"] a[href^="/products/"] or "/posts/"): the layout changed');
  return out;
}

function parsePost(post: Element, origin: string, position: number, box: Element | null): Launch | null {
  const nameEl = post.querySelector('[data-test^="post-name-"]');
  const link = nameEl?.closest('a[href]') ?? nameEl?.querySelector('a[href]') ?? null;
  const path = pathOf(link?.getAttribute('href'), origin);
  const slug = path && SLUG_PATH.exec(path)?.[1];
  const shown = textOf(nameEl);
  if (!slug || !shown || !path) return null;
  const ranked = /^(\d+)\.\s*(.+)$/.exec(shown);
  const commentLink = post.querySelector('a[href$="#comments"]');
  // Named sections only ("homepage-section-last-week"); a numbered one is a page's single list.
  const named = /^homepage-section-([a-z][a-z-]*)$/.exec(box?.getAttribute('data-test') ?? '');
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
    section: named ? named[1]!.replace(/-/g, '_') : null,
    launched_at: null,
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
// The embedded Apollo state

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };
const isObj = (v: Json | undefined): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: Json | undefined): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null);
const num = (v: Json | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
/** A count the state writes as a number or, for ranks, as a string ("dailyRank":"1"). */
const int = (v: Json | undefined): number | null => num(v) ?? (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : null);

/** One list of posts in a query result, with what it says about itself. */
interface PostList {
  section: string | null;
  period: string | null;
  posts: Obj[];
}

/**
 * The launches of every list of `Post`s in the page's Apollo query results, the home page's
 * sections in their order. [] when the page has no such state or no such list (then the
 * markup is read).
 */
function launchesFromState(doc: Document, origin: string): Launch[] {
  const lists: PostList[] = [];
  for (const push of apolloPushes(doc)) {
    const events = Array.isArray(push.events) ? push.events.filter(isObj) : [];
    // Which top-level result field answers which home-page section: the started query names it
    // ("yesterday:homefeed(kind:FEATURED section:YESTERDAY)"; no alias answers as "homefeed").
    const sections = new Map<string, Map<string, string>>();
    for (const e of events) {
      const query = isObj(e.options) ? str(e.options.query) : null;
      if (e.type !== 'started' || !query || typeof e.id !== 'string') continue;
      const byField = new Map<string, string>();
      for (const m of query.matchAll(/(?:\b(\w+)\s*:\s*)?\bhomefeed\s*\(([^)]*)\)/g)) {
        const section = /\bsection\s*:\s*(\w+)/.exec(m[2]!)?.[1];
        if (section) byField.set(m[1] ?? 'homefeed', section.toLowerCase());
      }
      sections.set(e.id, byField);
    }
    for (const e of events) {
      const result = isObj(e.value) ? e.value : isObj(e.result) ? e.result : null;
      if (e.type !== 'next' || !result || !isObj(result.data)) continue;
      for (const [field, value] of Object.entries(result.data)) {
        const section = sections.get(typeof e.id === 'string' ? e.id : '')?.get(field) ?? null;
        collectPostLists(value, section, lists);
      }
    }
  }
  const rankOf = (l: PostList) => (l.section && SECTION_ORDER.includes(l.section) ? SECTION_ORDER.indexOf(l.section) : SECTION_ORDER.length);
  lists.sort((a, b) => rankOf(a) - rankOf(b));
  const out: Launch[] = [];
  const seen = new Set<string>();
  for (const list of lists) {
    list.posts.forEach((post, i) => {
      const key = `${list.section}/${String(post.id)}`;
      if (seen.has(key)) return;
      seen.add(key);
      const launch = launchFromState(post, list, i + 1, origin);
      if (launch) out.push(launch);
    });
  }
  return out;
}

/**
 * The objects the page pushed to `window[Symbol.for("ApolloSSRDataTransport")]`. Their text
 * is a JavaScript literal, not JSON (a pending query's `"data":undefined`), so bare
 * `undefined`s become null before it is parsed; a push that still does not parse is skipped.
 */
function apolloPushes(doc: Document): Obj[] {
  const out: Obj[] = [];
  for (const script of doc.querySelectorAll('script:not([src])')) {
    const text = script.textContent ?? '';
    const at = text.indexOf('ApolloSSRDataTransport');
    if (at < 0) continue;
    const open = text.indexOf('.push(', at);
    const close = text.lastIndexOf(')');
    if (open < 0 || close <= open) continue;
    try {
      const value = JSON.parse(undefinedAsNull(text.slice(open + '.push('.length, close))) as Json;
      if (isObj(value)) out.push(value);
    } catch {
      // not a literal this reader knows: the markup is read instead
    }
  }
  return out;
}

/** A JavaScript object literal's bare `undefined` tokens (outside strings) as `null`. */
function undefinedAsNull(src: string): string {
  let out = '';
  let from = 0;
  let inString = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
    } else if (c === 'u' && src.startsWith('undefined', i) && !/[\w$]/.test(src[i - 1] ?? '') && !/[\w$]/.test(src[i + 9] ?? '')) {
      out += `${src.slice(from, i)}null`;
      from = i + 9;
      i += 8;
    }
  }
  return out + src.slice(from);
}

/** A list's posts: an array of `Post`s (or of edges `{node: Post}`) anywhere under `value`. */
function collectPostLists(value: Json, section: string | null, into: PostList[], parent: Obj | null = null): void {
  if (Array.isArray(value)) {
    const posts = value
      .map((v) => (isObj(v) && v.__typename === 'Post' ? v : isObj(v) && isObj(v.node) && v.node.__typename === 'Post' ? v.node : null))
      .filter((p): p is Obj => !!p && !!str(p.slug) && !!str(p.name));
    if (posts.length) {
      into.push({ section, period: str(parent?.period), posts });
      return;
    }
    for (const v of value) collectPostLists(v, section, into, parent);
    return;
  }
  // A Post's own fields (its featured comment, its product) hold no lists of launches.
  if (!isObj(value) || value.__typename === 'Post') return;
  for (const v of Object.values(value)) collectPostLists(v, section, into, value);
}

function launchFromState(post: Obj, list: PostList, position: number, origin: string): Launch | null {
  const slug = str(post.slug);
  const name = str(post.name);
  if (!slug || !name) return null;
  const rankField = list.period === 'weekly' ? 'weeklyRank' : list.period === 'monthly' ? 'monthlyRank' : 'dailyRank';
  const product = isObj(post.product) ? str(post.product.slug) : null;
  const topicEdges = isObj(post.topics) && Array.isArray(post.topics.edges) ? post.topics.edges : Array.isArray(post.topics) ? post.topics : [];
  const topicNames = topicEdges.map((t) => (isObj(t) && isObj(t.node) ? str(t.node.name) : isObj(t) ? str(t.name) : null)).filter((t): t is string => !!t);
  const thumb = str(post.thumbnailImageUuid);
  return {
    rank: int(post[rankField]) ?? position,
    slug,
    name,
    tagline: str(post.tagline),
    topics: [...new Set(topicNames)],
    votes: post.hideVotesCount === true ? null : (int(post.latestScore) ?? int(post.votesCount)),
    comments: int(post.commentsCount),
    // Where the card links: the product's page, as the markup's name link has it.
    url: new URL(product ? `/products/${encodeURIComponent(product)}` : `/posts/${encodeURIComponent(slug)}`, origin).href,
    thumbnail_url: thumb && /^[\w.-]+$/.test(thumb) ? `${IMAGE_HOST}${thumb}` : null,
    section: list.section,
    launched_at: isoInstant(str(post.featuredAt) ?? str(post.scheduledAt)),
  };
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

  const website = outbound(
    doc.querySelector('a[data-test="visit-website-button"]') ?? [...main.querySelectorAll('a[href]')].find((a) => /^visit( website)?$/i.test(textOf(a) ?? '')),
    origin,
  );
  const notComment = (el: Element) => !commentOf(el);
  return {
    slug,
    name: h1,
    tagline: textOf(main.querySelector('h2')),
    description:
      paragraphs(main.querySelector('[data-test="post-description"]')) ??
      doc.querySelector('meta[name="description"]')?.getAttribute('content')?.trim() ??
      null,
    website,
    launched_at: isoAttr([...main.querySelectorAll('time')].find(notComment)),
    topics: topics(main),
    votes: count(textOf([...main.querySelectorAll('button[data-test="vote-button"]')].find(notComment))),
    hunter: usersUnder(main, /^hunter$/i, origin)[0] ?? null,
    makers: usersUnder(main, /^makers?$/i, origin),
    images: gallery(main, origin),
    comments: [...main.querySelectorAll('[data-test^="comment-"]')]
      .filter((el) => COMMENT_TEST.test(el.getAttribute('data-test') ?? ''))
      .map((el) => parseComment(el, origin)),
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
  const heading = [...main.querySelectorAll('h2, h3, h4, h5, div, span, p')].find(
    (el) => !el.children.length && !commentOf(el) && label.test(textOf(el) ?? ''),
  );
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
  const body =
    paragraphs(own('[data-test="comment-body"]')[0]) ??
    own('p')
      .map((p) => textOf(p))
      .filter(Boolean)
      .join('\n');
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
