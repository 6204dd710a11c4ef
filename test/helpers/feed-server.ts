/**
 * A loopback web site for feed-polling tests: routes that tests set and change between rounds
 * (feeds, article pages, failures), a robots.txt, ETag / If-None-Match on every 200 answer, and
 * a log of every request (path, If-None-Match sent, status answered).
 *
 * Every feed and page built here is synthetic, made up for the tests, except what a test serves
 * from the captured real pages in test/fixtures/pages/.
 *
 *   const site = await startFeedServer();
 *   site.set('/feed.xml', { body: rss2('Desk', [{ title: 'A', link: `${site.base}/a`, date: t }]), type: RSS });
 *   ... poll ...
 *   site.hits('/feed.xml') → [{ path: '/feed.xml', ifNoneMatch: null, status: 200 }, { ..., ifNoneMatch: '"…"', status: 304 }]
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const RSS = 'application/rss+xml; charset=utf-8';
export const ATOM = 'application/atom+xml; charset=utf-8';
export const RDF = 'application/rdf+xml; charset=utf-8';
export const HTML = 'text/html; charset=utf-8';

export interface Answer {
  /** Default 200. A 3xx takes its Location from `location`. */
  status?: number;
  body?: string | Buffer;
  type?: string;
  location?: string;
  /** Milliseconds before the answer is sent. */
  delayMs?: number;
  /** Sent in pieces without a Content-Length (default: one piece with a Content-Length). */
  chunked?: boolean;
  /** A 200 answer carries an ETag of its body and honours If-None-Match (default true). */
  etag?: boolean;
}

export type Route = Answer | ((req: IncomingMessage) => Answer);

export interface Hit {
  path: string;
  ifNoneMatch: string | null;
  status: number;
  userAgent: string | null;
}

/** By default everything may be fetched but /private/. */
export const ROBOTS = 'User-agent: *\nAllow: /\nDisallow: /private/\n';

export interface FeedServer {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  base: string;
  set(path: string, route: Route): void;
  /** Every request so far, in order. */
  log: Hit[];
  /** The requests for one path. */
  hits(path: string): Hit[];
  close(): Promise<void>;
}

const etagOf = (body: Buffer) => `"${createHash('sha1').update(body).digest('hex').slice(0, 20)}"`;

export async function startFeedServer(): Promise<FeedServer> {
  const routes = new Map<string, Route>([['/robots.txt', { body: ROBOTS, type: 'text/plain', etag: false }]]);
  const log: Hit[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const answer = (req: IncomingMessage, res: ServerResponse, a: Answer): void => {
    const path = (req.url ?? '/').split('?')[0];
    const inm = typeof req.headers['if-none-match'] === 'string' ? req.headers['if-none-match'] : null;
    const hit: Hit = { path, ifNoneMatch: inm, status: 0, userAgent: req.headers['user-agent'] ?? null };
    log.push(hit);
    const status = a.status ?? 200;
    const body = Buffer.isBuffer(a.body) ? a.body : Buffer.from(a.body ?? '', 'utf8');
    const send = () => {
      if (res.destroyed) return;
      if (status >= 300 && status < 400) {
        hit.status = status;
        res.writeHead(status, { location: a.location ?? '/' }).end();
        return;
      }
      const headers: Record<string, string> = { 'content-type': a.type ?? 'text/plain; charset=utf-8' };
      if (status === 200 && a.etag !== false) {
        headers.etag = etagOf(body);
        if (inm === headers.etag) {
          hit.status = 304;
          res.writeHead(304, { etag: headers.etag }).end();
          return;
        }
      }
      hit.status = status;
      if (!a.chunked) {
        res.writeHead(status, { ...headers, 'content-length': String(body.length) }).end(body);
        return;
      }
      res.writeHead(status, headers);
      for (let i = 0; i < body.length; i += 1024) res.write(body.subarray(i, i + 1024));
      res.end();
    };
    if (!a.delayMs) return send();
    const t = setTimeout(() => {
      timers.delete(t);
      send();
    }, a.delayMs);
    timers.add(t);
  };

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const route = routes.get(path);
    if (!route) return answer(req, res, { status: 404, body: 'not found', etag: false });
    answer(req, res, typeof route === 'function' ? route(req) : route);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    base: `http://127.0.0.1:${port}`,
    set: (path, route) => void routes.set(path, route),
    log,
    hits: (path) => log.filter((h) => h.path === path),
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ---- synthetic documents ----

export interface FeedEntry {
  title: string;
  link: string;
  /** HTML or plain text; left out when undefined. */
  description?: string;
  /** Unix seconds. */
  date: number;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const iso = (sec: number) => new Date(sec * 1000).toISOString().replace('.000Z', 'Z');

/** RSS 2.0, dates in RFC 822 (`Tue, 03 Sep 2024 10:00:00 GMT`). */
export function rss2(title: string, items: FeedEntry[], encoding = 'UTF-8'): string {
  return (
    `<?xml version="1.0" encoding="${encoding}"?>\n<rss version="2.0"><channel><title>${esc(title)}</title><link>http://example.invalid/</link><description>synthetic</description>\n` +
    items
      .map(
        (i) =>
          `<item><title>${esc(i.title)}</title><link>${esc(i.link)}</link><guid isPermaLink="true">${esc(i.link)}</guid>` +
          (i.description === undefined ? '' : `<description>${esc(i.description)}</description>`) +
          `<pubDate>${new Date(i.date * 1000).toUTCString()}</pubDate></item>\n`,
      )
      .join('') +
    '</channel></rss>\n'
  );
}

/** RSS 1.0 (RDF), dates in dc:date (W3C-DTF), with the channel's <items> table of contents. */
export function rdf(title: string, items: FeedEntry[]): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">\n' +
    `<channel rdf:about="http://example.invalid/rdf"><title>${esc(title)}</title><link>http://example.invalid/</link><description>synthetic</description>` +
    `<items><rdf:Seq>${items.map((i) => `<rdf:li rdf:resource="${esc(i.link)}"/>`).join('')}</rdf:Seq></items></channel>\n` +
    items
      .map(
        (i) =>
          `<item rdf:about="${esc(i.link)}"><title>${esc(i.title)}</title><link>${esc(i.link)}</link>` +
          (i.description === undefined ? '' : `<description>${esc(i.description)}</description>`) +
          `<dc:date>${iso(i.date)}</dc:date></item>\n`,
      )
      .join('') +
    '</rdf:RDF>\n'
  );
}

/** Atom 1.0, dates in RFC 3339; the description is the entry's HTML summary. */
export function atom(title: string, items: FeedEntry[]): string {
  const updated = iso(Math.max(0, ...items.map((i) => i.date)));
  return (
    '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">' +
    `<title>${esc(title)}</title><id>urn:synthetic:${esc(title)}</id><updated>${updated}</updated>\n` +
    items
      .map(
        (i) =>
          `<entry><title>${esc(i.title)}</title><link rel="alternate" href="${esc(i.link)}"/><id>${esc(i.link)}</id>` +
          `<published>${iso(i.date)}</published><updated>${iso(i.date)}</updated>` +
          (i.description === undefined ? '' : `<summary type="html">${esc(i.description)}</summary>`) +
          '</entry>\n',
      )
      .join('') +
    '</feed>\n'
  );
}

/** A synthetic article page: the text as JSON-LD NewsArticle articleBody (paragraphs split by blank lines), repeated in the markup. */
export function articlePage(o: { headline: string; text: string; date: number }): string {
  const ld = { '@context': 'https://schema.org', '@type': 'NewsArticle', headline: o.headline, datePublished: iso(o.date), articleBody: o.text };
  return (
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${esc(o.headline)} | Synthetic Desk</title>` +
    `<script type="application/ld+json">${JSON.stringify(ld).replace(/</g, '\\u003c')}</script></head>` +
    `<body><nav><a href="/">Home</a></nav><article><h1>${esc(o.headline)}</h1>` +
    o.text
      .split(/\n\n/)
      .map((p) => `<p>${esc(p)}</p>`)
      .join('') +
    '</article><footer>Synthetic footer</footer></body></html>'
  );
}
