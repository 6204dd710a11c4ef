/**
 * The one place that reads process.env. Every setting has an environment variable and a
 * matching CLI flag (`PORT` ↔ `--port`, `DATA_DIR` ↔ `--data-dir`); a flag wins. Malformed
 * values stop start-up with a message naming the setting.
 */
import { isIP } from 'node:net';
import path from 'node:path';
import { familyOf, isProduct, PRODUCT_NAMES, type Family, type Product } from './products.js';

type Parser<T> = (raw: string, name: string) => T;

interface Setting<T> {
  env: string;
  default: T;
  parse: Parser<T>;
  doc: string;
}

export class ConfigError extends Error {
  readonly name = 'ConfigError';
}

const int =
  (min: number, max: number): Parser<number> =>
  (raw, name) => {
    if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  };
const num =
  (min: number, max: number): Parser<number> =>
  (raw, name) => {
    const n = Number(raw.trim());
    if (raw.trim() === '' || !Number.isFinite(n)) throw new ConfigError(`${name} must be a number, got "${raw}"`);
    if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  };
const str: Parser<string> = (raw) => raw;
const optionalStr: Parser<string | undefined> = (raw) => (raw === '' ? undefined : raw);
const optionalUrl: Parser<string | undefined> = (raw, name) => {
  if (raw === '') return undefined;
  if (!/^https?:\/\/[^/]/.test(raw) || !URL.canParse(raw)) throw new ConfigError(`${name}: an http(s) URL, got ${JSON.stringify(raw)}`);
  return raw;
};
/** An http(s) origin with an optional path, no query or fragment; kept without its trailing slash. */
const publicUrl: Parser<string | undefined> = (raw, name) => {
  if (raw === '') return undefined;
  const u = URL.canParse(raw) ? new URL(raw) : null;
  if (!u || !/^https?:$/.test(u.protocol) || u.search !== '' || u.hash !== '' || u.username !== '' || u.password !== '' || !/^https?:\/\/[^/]/.test(raw))
    throw new ConfigError(`${name}: an http(s) URL without query, fragment or credentials (e.g. https://api.example.com), got ${JSON.stringify(raw)}`);
  return raw.replace(/\/+$/, '');
};
/** `off`, or the proxies' addresses: IPs or CIDR blocks, comma-separated. */
const proxyList: Parser<string[]> = (raw, name) => {
  if (raw === 'off' || raw === '') return [];
  const list = raw.split(',').map((x) => x.trim());
  for (const entry of list) {
    const [ip, bits, extra] = entry.split('/');
    const family = isIP(ip ?? '');
    const max = family === 4 ? 32 : 128;
    if (family === 0 || extra !== undefined || (bits !== undefined && !(/^\d{1,3}$/.test(bits) && Number(bits) <= max)))
      throw new ConfigError(
        `${name}: \`off\` or the proxies' IP addresses or CIDR blocks, comma-separated (10.0.0.5,192.168.0.0/16), got ${JSON.stringify(entry)}`,
      );
  }
  return list;
};
/** NATS URLs, comma-separated; empty: cluster mode off. */
const natsUrls: Parser<string[]> = (raw, name) => {
  if (raw.trim() === '') return [];
  const list = raw.split(',').map((x) => x.trim());
  for (const url of list) {
    const u = URL.canParse(url) ? new URL(url) : null;
    // The value may hold a password: the message never repeats it.
    if (!u || !/^(nats|tls):$/.test(u.protocol) || u.hostname === '')
      throw new ConfigError(`${name}: nats:// (or tls://) URLs with a host, comma-separated (nats://10.0.0.1:4222,nats://10.0.0.2:4222)`);
  }
  return list;
};
const nodeId: Parser<string | undefined> = (raw, name) => {
  if (raw === '') return undefined;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(raw)) throw new ConfigError(`${name}: letters, digits, - and _ only, 1 to 64 of them, got ${JSON.stringify(raw)}`);
  return raw;
};
/** `all`, or comma-separated months and ranges of months (the ranges' sense is checked by cluster mode). */
const shardSpec: Parser<string> = (raw, name) => {
  const s = raw.trim();
  const part = String.raw`(\d{4}-\d{2}|\d{4}-\d{2}\.\.(\d{4}-\d{2})?|\.\.\d{4}-\d{2})`;
  if (s === '' || s === 'all') return 'all';
  if (!new RegExp(`^${part}(,${part})*$`).test(s.replace(/\s+/g, ''))) {
    throw new ConfigError(`${name}: all, or months and ranges of months, comma-separated (2025-01..2025-06,2026-01..), got ${JSON.stringify(raw)}`);
  }
  return s.replace(/\s+/g, '');
};
/** smtp:// or smtps://, with a host. */
const smtpUrl: Parser<string | undefined> = (raw, name) => {
  if (raw === '') return undefined;
  const u = URL.canParse(raw) ? new URL(raw) : null;
  // The value may hold a password: the message never repeats it.
  if (!u || !/^smtps?:$/.test(u.protocol) || u.hostname === '')
    throw new ConfigError(`${name}: an smtp:// or smtps:// URL with a host (smtps://user:pass@mail.example.com:465)`);
  return raw;
};
/** A base URL with {domain} / {country} placeholders: it must be a URL once they are filled in. */
const baseTemplate: Parser<string> = (raw, name) => {
  const sample = raw.replace(/\{domain\}/g, 'www.example.com').replace(/\{country\}/g, 'us');
  if (!/^https?:\/\/[^/]/.test(sample) || !URL.canParse(sample))
    throw new ConfigError(`${name}: an http(s) URL (with {domain} or {country} placeholders), got ${JSON.stringify(raw)}`);
  return raw.replace(/\/+$/, '');
};
/** An upstream URL template: http(s) once each `{name}` placeholder is filled; no others allowed. */
const urlTemplate =
  (...names: string[]): Parser<string> =>
  (raw, name) => {
    const unknown = [...raw.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).filter((n) => !names.includes(n));
    if (unknown.length) throw new ConfigError(`${name}: unknown placeholder {${unknown[0]}}; it takes ${names.map((n) => `{${n}}`).join(', ')}`);
    const sample = raw.replace(/\{(\w+)\}/g, 'x');
    if (!/^https?:\/\/[^/]/.test(sample) || !URL.canParse(sample)) throw new ConfigError(`${name}: an http(s) URL template, got ${JSON.stringify(raw)}`);
    return raw;
  };
/** `owner/name`, as the hub names a repository. */
const repoName: Parser<string> = (raw, name) => {
  if (!/^[\w.-]+\/[\w.-]+$/.test(raw)) throw new ConfigError(`${name}: owner/name (e.g. BAAI/bge-m3), got ${JSON.stringify(raw)}`);
  return raw;
};
/** A path inside a repository (a revision, a folder): segments of word characters, dots and dashes. */
const pathPart: Parser<string> = (raw, name) => {
  if (!/^[\w.-]+(\/[\w.-]+)*$/.test(raw) || raw.split('/').some((p) => p === '..' || p === '.'))
    throw new ConfigError(`${name}: a name or path without spaces or "..", got ${JSON.stringify(raw)}`);
  return raw;
};
/** `host:port` (`[::1]:9464` for IPv6), or unset. */
const optionalHostPort: Parser<{ host: string; port: number } | undefined> = (raw, name) => {
  if (raw === '') return undefined;
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/.exec(raw);
  if (!m || Number(m[3]) > 65535) throw new ConfigError(`${name}: host:port (e.g. 127.0.0.1:9464 or [::1]:9464), got ${JSON.stringify(raw)}`);
  return { host: m[1] ?? m[2], port: Number(m[3]) };
};
const oneOf =
  <T extends string>(...values: T[]): Parser<T> =>
  (raw, name) => {
    if (!(values as string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
    return raw as T;
  };

const productList: Parser<Product[]> = (raw, name) => {
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const bad = names.filter((n) => !isProduct(n));
  if (bad.length > 0) throw new ConfigError(`${name}: unknown product ${bad.join(', ')}; products: ${PRODUCT_NAMES.join(', ')}`);
  return names as Product[];
};

/** Calls of one product running at once per process, by family: indexed calls are short, live ones hold a socket. */
const INFLIGHT_DEFAULT: Record<Family, number> = { indexed: 256, live_search: 16, live_page: 16, contacts: 8, marketplace: 16 };

/** MAX_INFLIGHT_<PRODUCT>, one setting per product. */
const inflightSettings = Object.fromEntries(
  PRODUCT_NAMES.map((p) => [
    `maxInflight_${p}`,
    {
      env: `MAX_INFLIGHT_${p.toUpperCase()}`,
      default: INFLIGHT_DEFAULT[familyOf(p)],
      parse: int(1, 100_000),
      doc: `Calls of \`${p}\` running at once in this process; past it 503 \`overloaded\` with \`Retry-After\`.`,
    },
  ]),
) as Record<`maxInflight_${Product}`, Setting<number>>;

/** Every setting: environment name, default (with its unit in the doc), parser. The README's table is this. */
export const settings = {
  host: { env: 'HOST', default: '127.0.0.1', parse: str, doc: 'Address the HTTP server binds to.' },
  port: { env: 'PORT', default: 8080, parse: int(0, 65535), doc: 'HTTP port.' },
  metricsListen: {
    env: 'METRICS_LISTEN',
    default: undefined,
    parse: optionalHostPort,
    doc: '`host:port` of a second listener that serves only `/metrics`, `/healthz` and `/readyz`, with no key: bind it where only the scraper reaches. Unset: none.',
  },
  metricsPublic: {
    env: 'METRICS_PUBLIC',
    default: 'off',
    parse: oneOf('on', 'off'),
    doc: '`on`: `GET /metrics` on the main port needs no key. `off`: it needs an operator Bearer key (Operations).',
  },
  dataDir: { env: 'DATA_DIR', default: './data', parse: str, doc: 'Directory holding the LMDB store, the vector index and the cursor secret.' },
  gatewayHost: {
    env: 'GATEWAY_HOST',
    default: undefined,
    parse: optionalStr,
    doc: 'Value `X-Gateway-Host` must carry on the gateway door. Unset: the gateway door rejects every request (Bearer keys still work).',
  },
  trustProxy: {
    env: 'TRUST_PROXY',
    default: [] as string[],
    parse: proxyList,
    doc: "The gateway's or load balancer's addresses (IPs or CIDR blocks, comma-separated): a request from one of them is taken to come from the client its `X-Forwarded-For` names, over the scheme `X-Forwarded-Proto` names, so per-client limits (dashboard sign-ins) and logs see the client, and the session cookie is `Secure` behind TLS. `off`: those headers are ignored, as anyone can send them.",
  },
  publicUrl: {
    env: 'PUBLIC_URL',
    default: undefined,
    parse: publicUrl,
    doc: "The address account holders reach this server at (`https://api.example.com`), which `newsmatch accounts login-link` prints sign-in links under; an `https` one also marks the dashboard's session cookie `Secure`. Unset: `http://` and `HOST`:`PORT` (localhost for a wildcard `HOST`).",
  },
  dashboardSessionHours: {
    env: 'DASHBOARD_SESSION_HOURS',
    default: 12,
    parse: num(0.01, 24 * 30),
    doc: 'A dashboard session (the cookie a sign-in link starts) ends this many hours after sign-in; `newsmatch accounts logout` ends them sooner.',
  },
  dashboardSignInsPerMinute: {
    env: 'DASHBOARD_SIGN_INS_PER_MINUTE',
    default: 10,
    parse: int(1, 10_000),
    doc: "Dashboard sign-in attempts allowed from one client address a minute (behind a gateway, the gateway's); past it 429 `too_many_sign_ins` with `Retry-After`.",
  },
  smtpUrl: {
    env: 'SMTP_URL',
    default: undefined,
    parse: smtpUrl,
    doc: 'Mail server the dashboard sends "email me a sign-in link" mails through (`smtps://user:pass@mail.example.com:465`, or `smtp://…:587`, which upgrades to TLS when the server offers it). Unset: no mail is sent, and the sign-in page says to ask the operator for a link.',
  },
  smtpFrom: {
    env: 'SMTP_FROM',
    default: undefined,
    parse: optionalStr,
    doc: 'The From address of those mails (`newsmatch <noreply@example.com>`); needed with `SMTP_URL`.',
  },
  logLevel: {
    env: 'LOG_LEVEL',
    default: 'info',
    parse: oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
    doc: 'Log level (pino levels, or `silent`).',
  },
  logFormat: {
    env: 'LOG_FORMAT',
    default: 'auto',
    parse: oneOf('auto', 'json', 'pretty'),
    doc: '`json`: one JSON object a line (for a collector). `pretty`: coloured lines for a person (pino-pretty). `auto`: pretty when stdout is a terminal, JSON otherwise. Keys are redacted in both.',
  },
  matchMaxMatches: {
    env: 'MATCH_MAX_MATCHES',
    default: 10_000,
    parse: int(1, 10_000_000),
    doc: 'An `order=time` query matching more rows than this answers 422 `too_many_matches`.',
  },
  exactScanMaxChunks: {
    env: 'EXACT_SCAN_MAX_CHUNKS',
    default: 50_000,
    parse: int(0, 100_000_000),
    doc: 'An `order=relevance` query whose filters leave at most this many chunks (estimated) is answered by an exact scan instead of the index (`order=time` always scans).',
  },
  pageCacheEntries: {
    env: 'PAGE_CACHE_ENTRIES',
    default: 256,
    parse: int(0, 1_000_000),
    doc: 'Result sets of `order=time` vector queries kept for their following pages (LRU).',
  },
  renderedMemoryMb: {
    env: 'RENDERED_MEMORY_MB',
    default: 512,
    parse: int(0, 1_048_576),
    doc: 'Memory for a copy of the stored articles as match responses show them (about 110 MB a million chunks), so a response reads no LMDB page; what does not fit is read from LMDB. 0: none.',
  },
  indexMinChunks: {
    env: 'INDEX_MIN_CHUNKS',
    default: 65_536,
    parse: int(1, 1_000_000_000),
    doc: 'The relevance index (k-means lists) is trained once the corpus holds this many chunks; below it `order=relevance` scans exactly.',
  },
  indexLists: {
    env: 'INDEX_LISTS',
    default: 0,
    parse: int(0, 65_536),
    doc: 'Lists (k-means centroids) of the relevance index when it is trained; 0: about the square root of the chunk count. It is trained again, with every chunk filed anew, each time the corpus has grown 4× since.',
  },
  indexProbeDelta: {
    env: 'INDEX_PROBE_DELTA',
    default: 0.05,
    parse: num(0, 2),
    doc: 'A relevance query reads every list whose centroid scores within this cosine of the best one (more when those cannot fill the page).',
  },
  indexProbeMaxChunks: {
    env: 'INDEX_PROBE_MAX_CHUNKS',
    default: 0,
    parse: int(0, 1_000_000_000),
    doc: 'Chunks a relevance query may read from the index; past it the query is far from every list and is answered by an exact scan. 0: 3% of the corpus, at least 30,000.',
  },
  indexFarScore: {
    env: 'INDEX_FAR_SCORE',
    default: 0.3,
    parse: num(-1, 1),
    doc: 'A relevance query whose nearest centroid scores below this cosine is far from all data and is answered by an exact scan.',
  },
  searchThreads: {
    env: 'SEARCH_THREADS',
    default: 0,
    parse: int(0, 1024),
    doc: 'Threads a scan pass and an index build split their work over; 0: one per core.',
  },
  modelDir: {
    env: 'BGE_M3_MODEL_DIR',
    default: undefined,
    parse: optionalStr,
    doc: 'Directory holding the bge-m3 ONNX export (`model.onnx`, `model.onnx_data` if any, `tokenizer.json`, `tokenizer_config.json`). Unset: text mode is off.',
  },
  modelHubUrl: {
    env: 'MODEL_HUB_URL',
    default: 'https://huggingface.co',
    parse: urlTemplate(),
    doc: 'The Hugging Face hub (or a mirror of its API) `newsmatch quickstart` and `scripts/fetch-model` download bge-m3 from.',
  },
  modelHubRepo: {
    env: 'MODEL_HUB_REPO',
    default: 'BAAI/bge-m3',
    parse: repoName,
    doc: 'The hub repository of the ONNX export (`owner/name`).',
  },
  modelHubRevision: { env: 'MODEL_HUB_REVISION', default: 'main', parse: pathPart, doc: 'Branch, tag or commit of `MODEL_HUB_REPO`.' },
  modelHubSubdir: {
    env: 'MODEL_HUB_SUBDIR',
    default: 'onnx',
    parse: (raw: string, name: string) => (raw === '' ? '' : pathPart(raw, name)),
    doc: "Folder of the repository holding `model.onnx`; its files win over the root's (empty: the root).",
  },
  modelHubAllowPrivate: {
    env: 'MODEL_HUB_ALLOW_PRIVATE',
    default: 'off',
    parse: oneOf('on', 'off'),
    doc: "`off`: every model download request must reach a public address. `on`: `MODEL_HUB_URL`'s host may be loopback or private (a mirror on the intranet); the hosts it redirects to still may not.",
  },
  modelHubTimeoutMs: {
    env: 'MODEL_HUB_TIMEOUT_MS',
    default: 60_000,
    parse: int(1000, 600_000),
    doc: 'A model download request fails when its headers, or the next bytes of its body, take longer than this (the whole download may take as long as it needs).',
  },
  quickstartOutlets: {
    env: 'QUICKSTART_OUTLETS',
    default: undefined,
    parse: optionalStr,
    doc: 'JSON file of the outlets `newsmatch quickstart` adds (the format of `src/ingest/default-outlets.json`). Unset: that shipped list.',
  },
  embedDevice: {
    env: 'EMBED_DEVICE',
    default: 'auto',
    parse: oneOf('auto', 'cpu', 'cuda'),
    doc: 'ONNX Runtime execution provider: `auto` tries CUDA and falls back to CPU (one log line says which); `cuda` falls back too, with a warning.',
  },
  embedThreads: {
    env: 'EMBED_THREADS',
    default: 2,
    parse: int(1, 64),
    doc: 'Embedding worker threads (one ONNX Runtime session each). With 2 or more, bulk work never takes the last one, so queries never wait behind an import.',
  },
  embedMaxTokens: {
    env: 'EMBED_MAX_TOKENS',
    default: 8192,
    parse: int(8, 8192),
    doc: 'Tokens per text, `<s>` and `</s>` included; longer texts are truncated (the closing token is kept).',
  },
  embedMaxBatchTokens: {
    env: 'EMBED_MAX_BATCH_TOKENS',
    default: 16_384,
    parse: int(64, 1_048_576),
    doc: 'Token budget of one batch (rows × longest row, padding included), like text-embeddings-inference `max_batch_tokens`.',
  },
  embedQueueMax: {
    env: 'EMBED_QUEUE_MAX',
    default: 4096,
    parse: int(1, 10_000_000),
    doc: 'Texts waiting for a worker; past it a text query answers 503 `embed_unavailable` with `Retry-After`, and bulk work waits.',
  },
  embedTimeoutMs: {
    env: 'EMBED_TIMEOUT_MS',
    default: 10_000,
    parse: int(1, 3_600_000),
    doc: 'A text query whose embedding takes longer than this answers 503 `embed_unavailable` with `Retry-After`.',
  },
  chunkMinTokens: {
    env: 'CHUNK_MIN_TOKENS',
    default: 32,
    parse: int(1, 8192),
    doc: 'Sentences are grouped into chunks of at least this many tokens where the text allows.',
  },
  chunkMaxTokens: {
    env: 'CHUNK_MAX_TOKENS',
    default: 128,
    parse: int(8, 8192),
    doc: 'Most tokens in a chunk (the headline chunk excepted); longer sentences are split at word boundaries.',
  },
  ingest: {
    env: 'INGEST',
    default: 'off',
    parse: oneOf('on', 'off'),
    doc: '`on`: `serve` polls every enabled outlet on its interval in the background (`newsmatch sources add`).',
  },
  ingestConcurrency: {
    env: 'INGEST_CONCURRENCY',
    default: 4,
    parse: int(1, 256),
    doc: 'Feed and page requests in flight at once (always one at a time per host).',
  },
  ingestRevisitHours: {
    env: 'INGEST_REVISIT_HOURS',
    default: 48,
    parse: int(0, 24 * 365),
    doc: 'With `--fetch-articles`, pages of items still in the feed and younger than this are fetched again each round (conditional GET), so an edit to the text alone becomes a revision.',
  },
  ingestTimeoutMs: { env: 'INGEST_TIMEOUT_MS', default: 15_000, parse: int(100, 600_000), doc: 'Deadline of one feed or page request.' },
  ingestMaxBytes: {
    env: 'INGEST_MAX_BYTES',
    default: 5 * 1_048_576,
    parse: int(1024, 1024 * 1_048_576),
    doc: 'Largest feed or page body read, in bytes; a larger one fails that fetch.',
  },
  ingestMaxRedirects: { env: 'INGEST_MAX_REDIRECTS', default: 5, parse: int(0, 20), doc: 'Redirects followed per request.' },
  ingestUserAgent: {
    env: 'INGEST_USER_AGENT',
    default: 'newsmatch/0.1 (self-hosted news index; feed poller)',
    parse: str,
    doc: 'User-Agent of feed and page requests (and the name robots.txt rules are matched against).',
  },
  ingestParseThreads: {
    env: 'INGEST_PARSE_THREADS',
    default: 2,
    parse: int(0, 64),
    doc: 'Worker threads the poller parses feeds and extracts article text on (started on first use), so a page (Readability, 70–140 ms) never stalls requests; 0 parses on the event loop.',
  },
  ingestAllowPrivate: {
    env: 'INGEST_ALLOW_PRIVATE',
    default: 'off',
    parse: oneOf('on', 'off'),
    doc: "`off`: every feed, page and redirect the poller fetches must be on a public address. `on`: the hosts of the outlets' own feed URLs may be loopback or private (a feed on this machine or the intranet); item links and redirects to any other host still may not.",
  },
  liveTimeoutMs: {
    env: 'LIVE_TIMEOUT_MS',
    default: 20_000,
    parse: int(100, 120_000),
    doc: 'Deadline of one live scrape (every page it reads); past it 504 `timeout`.',
  },
  liveMaxBytes: {
    env: 'LIVE_MAX_BYTES',
    default: 8 * 1_048_576,
    parse: int(1024, 256 * 1_048_576),
    doc: 'Largest page a live scrape reads, in bytes; a larger one is 502 `scrape_failed`.',
  },
  liveParseThreads: {
    env: 'LIVE_PARSE_THREADS',
    default: 2,
    parse: int(0, 64),
    doc: 'Worker threads live scrapes parse pages on (started on first use), so a large page (a product page parses in ~400 ms) never stalls other requests; 0 parses on the event loop.',
  },
  keywordReadThreads: {
    env: 'KEYWORD_READ_THREADS',
    default: 2,
    parse: int(0, 64),
    doc: 'Worker threads keyword searches (`/v1/news`, `/v1/jobs`) run their SQLite reads on, each with a read-only connection (started on first use), so a BM25 ranking of many matches never stalls other requests; 0 reads on the event loop.',
  },
  liveProxyUrl: {
    env: 'LIVE_PROXY_URL',
    default: undefined,
    parse: optionalUrl,
    doc: 'HTTP(S) proxy every live scrape goes through (`http://user:pass@host:port`); unset: direct.',
  },
  liveUserAgent: {
    env: 'LIVE_USER_AGENT',
    default: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/128.0.0.0 Safari/537.36',
    parse: str,
    doc: 'User-Agent of live scrapes (the public pages are served to browsers).',
  },
  marketplaceBaseUrl: {
    env: 'MARKETPLACE_BASE_URL',
    default: 'https://{domain}',
    parse: baseTemplate,
    doc: 'Where the marketplace engine reads pages: `{domain}` (www.amazon.de) and `{country}` (de) are filled in per call. Point it at a mirror or a test server.',
  },
  webSearchUrl: {
    env: 'WEB_SEARCH_URL',
    default: 'https://html.duckduckgo.com/html/?q={q}&s={start}',
    parse: urlTemplate('q', 'start', 'page'),
    doc: 'Results page `engine=web_search` reads: `{q}`, `{start}` (0-based offset of the page) and `{page}` are filled in. The parser reads the DuckDuckGo html and Google layouts.',
  },
  webNewsSearchUrl: {
    env: 'WEB_NEWS_SEARCH_URL',
    default: 'https://www.google.com/search?q={q}&tbm=nws&hl=en',
    parse: urlTemplate('q'),
    doc: 'News results page `engine=web_news_search` reads (`{q}` filled in).',
  },
  publisherWireUrl: {
    env: 'PUBLISHER_WIRE_URL',
    default: 'https://apnews.com/hub/{section}?p={page}',
    parse: urlTemplate('section', 'page'),
    doc: "The wire publisher's section listing (`engine=wire_listing`, 20 articles a page): `{section}` and `{page}` filled in.",
  },
  launchesBaseUrl: {
    env: 'LAUNCHES_BASE_URL',
    default: 'https://www.producthunt.com',
    parse: urlTemplate(),
    doc: 'The launch listing site: `/leaderboard/daily/Y/M/D` and `/posts/{slug}` are read under it.',
  },
  companyReviewsUrl: {
    env: 'COMPANY_REVIEWS_URL',
    default: 'https://www.trustpilot.com/review/{company}?page={page}',
    parse: urlTemplate('company', 'page'),
    doc: "A company's public review profile page (`{company}`: its domain; `{page}` forwarded).",
  },
  jobBoardUrl: {
    env: 'JOB_BOARD_URL',
    default: 'https://www.indeed.com/jobs?q={q}&l={location}&start={start}',
    parse: urlTemplate('q', 'location', 'start', 'page'),
    doc: "The job board's search results page: `{q}`, `{location}`, `{start}` (0-based offset, 10 a page) and `{page}` filled in.",
  },
  jobBoardLayout: {
    env: 'JOB_BOARD_LAYOUT',
    default: 'indeed',
    parse: oneOf('indeed', 'linkedin'),
    doc: 'How `engine=job_boards` reads the `JOB_BOARD_URL` page: `indeed` (its search page, the embedded job JSON first, the cards second) or `linkedin` (the guest search fragment; set `JOB_BOARD_URL` to e.g. `https://www.linkedin.com/jobs-guest/jobs/api/seeMoreJobPostings/search?keywords={q}&location={location}&start={start}`, else start-up stops). Both give the same fields.',
  },
  contactsBaseUrl: {
    env: 'CONTACTS_BASE_URL',
    default: 'https://{domain}',
    parse: urlTemplate('domain'),
    doc: "Where `GET /v1/contacts` finds a domain's home page (`{domain}` filled in; `http://{domain}` for plain-HTTP sites).",
  },
  contactsMaxPages: {
    env: 'CONTACTS_MAX_PAGES',
    default: 4,
    parse: int(1, 20),
    doc: 'Pages one contacts call reads: the home page and at most this many less one linked contact, imprint, about or team pages.',
  },
  contactsPageBytes: {
    env: 'CONTACTS_PAGE_BYTES',
    default: 2 * 1_048_576,
    parse: int(1024, 64 * 1_048_576),
    doc: 'Bytes of one page a contacts call reads; a longer page is cut there (what was read still counts).',
  },
  liveAllowPrivate: {
    env: 'LIVE_ALLOW_PRIVATE',
    default: 'off',
    parse: oneOf('on', 'off'),
    doc: '`off`: URLs and domains a caller names (contacts, publisher pages) may reach public addresses only, not loopback, private, link-local or reserved ones, directly or through `LIVE_PROXY_URL` (502 `scrape_failed`). `on` for a test site on this machine.',
  },
  monitorPumpMs: {
    env: 'MONITOR_PUMP_MS',
    default: 1000,
    parse: int(10, 600_000),
    doc: 'How often the server looks for revisions written by another process (`newsmatch import` beside it) to index them and match them against the monitors; its own writes are matched at once.',
  },
  monitorYieldMs: {
    env: 'MONITOR_YIELD_MS',
    default: 2000,
    parse: int(0, 600_000),
    doc: "Matching waits while an import of this process is in flight (`newsmatch import` with no server on the data directory, `newsmatch demo`; its keyword indexing included), for at most this long from the first window it holds back, so a burst of imports runs as fast as without monitors and its events come up to that much later. `0`: match beside imports. An import beside a running server is matched by the server's timer (`MONITOR_PUMP_MS`).",
  },
  monitorRetryHours: {
    env: 'MONITOR_RETRY_HOURS',
    default: 24,
    parse: num(0.001, 24 * 30),
    doc: 'A webhook event that no attempt delivered (a 2xx) is retried, with exponential backoff and jitter, for this many hours after its first try; then it is given up, its credits are refunded, and the monitor pauses.',
  },
  monitorWebhookTimeoutMs: {
    env: 'MONITOR_WEBHOOK_TIMEOUT_MS',
    default: 10_000,
    parse: int(100, 120_000),
    doc: 'How long a webhook receiver has to answer one delivery (and the test delivery at creation).',
  },
  monitorStreamHeartbeatMs: {
    env: 'MONITOR_STREAM_HEARTBEAT_MS',
    default: 15_000,
    parse: int(10, 600_000),
    doc: 'An open monitor stream (GET /v1/monitors/{id}/events) gets a comment line this often when no event comes, so proxies keep it open and a dead client is noticed.',
  },
  monitorStreamMaxBufferBytes: {
    env: 'MONITOR_STREAM_MAX_BUFFER_BYTES',
    default: 1_048_576,
    parse: int(1024, 64 * 1_048_576),
    doc: 'A stream whose client reads too slowly is closed once this many bytes wait for it (it resumes with Last-Event-ID); nothing is buffered without bound.',
  },
  bodyLimit: { env: 'BODY_LIMIT_BYTES', default: 1_048_576, parse: int(1024, 64 * 1_048_576), doc: 'Largest accepted request body, in bytes.' },
  shutdownTimeoutMs: {
    env: 'SHUTDOWN_TIMEOUT_MS',
    default: 8000,
    parse: int(100, 600_000),
    doc: 'On SIGTERM/SIGINT the server stops accepting, drains in-flight requests and closes the store; past this many ms it exits anyway (everything acknowledged is already durable; derived indexes resume on the next start).',
  },
  httpHeadersTimeoutMs: {
    env: 'HTTP_HEADERS_TIMEOUT_MS',
    default: 10_000,
    parse: int(100, 600_000),
    doc: "A client's request headers must arrive within this many ms; then 408 and the connection is closed.",
  },
  httpRequestTimeoutMs: {
    env: 'HTTP_REQUEST_TIMEOUT_MS',
    default: 30_000,
    parse: int(100, 600_000),
    doc: 'A whole request (headers and body) must arrive within this many ms; then 408 and the connection is closed (a slow client cannot hold a socket).',
  },
  httpIdleTimeoutMs: {
    env: 'HTTP_IDLE_TIMEOUT_MS',
    default: 120_000,
    parse: int(1000, 3_600_000),
    doc: 'A connection with no bytes either way for this many ms is closed (above every request deadline).',
  },
  httpKeepAliveTimeoutMs: {
    env: 'HTTP_KEEPALIVE_TIMEOUT_MS',
    default: 10_000,
    parse: int(100, 600_000),
    doc: 'An idle keep-alive connection is closed after this many ms.',
  },
  httpMaxConnections: {
    env: 'HTTP_MAX_CONNECTIONS',
    default: 900,
    parse: int(1, 1_000_000),
    doc: 'Open connections at most; one more is answered 503 `too_many_connections` and closed (keep it under the process file-descriptor limit).',
  },
  httpMaxConnectionsPerIp: {
    env: 'HTTP_MAX_CONNECTIONS_PER_IP',
    default: 256,
    parse: int(1, 1_000_000),
    doc: "Open connections at most from one client address (behind a gateway, the gateway's): one more is answered 503 `too_many_connections` and closed.",
  },
  productsDisabled: {
    env: 'PRODUCTS_DISABLED',
    default: [] as Product[],
    parse: productList,
    doc: 'Comma-separated products this service does not offer (e.g. `web_search,contacts`); their calls answer 503 `product_unavailable`.',
  },
  clusterNatsUrls: {
    env: 'CLUSTER_NATS_URLS',
    default: [] as string[],
    parse: natsUrls,
    doc: 'Comma-separated NATS server URLs (`nats://10.0.0.1:4222,nats://10.0.0.2:4222`): set, this node runs in cluster mode on their JetStream (README "Cluster mode"); unset, on the embedded store alone.',
  },
  clusterNodeId: {
    env: 'CLUSTER_NODE_ID',
    default: undefined,
    parse: nodeId,
    doc: "This node's name in the cluster, unique and kept across restarts (letters, digits, `-`, `_`; up to 64); required in cluster mode.",
  },
  clusterShards: {
    env: 'CLUSTER_SHARDS',
    default: 'all',
    parse: shardSpec,
    doc: 'Cluster mode: the shards whose chunk vectors this node holds and answers vector queries for: `all`, or months and ranges of months (`2025-01..2025-12`, `..2024-12`, `2026-01..`; a shard is the month of an article\'s first publication, UTC). Nodes with the same ranges are replicas of one group (README "Cluster mode").',
  },
  ...inflightSettings,
} satisfies Record<string, Setting<unknown>>;

type Settings = typeof settings;
export type Config = { [K in keyof Settings]: ReturnType<Settings[K]['parse']> };

/** `DATA_DIR` → `--data-dir`. */
export const flagName = (env: string): string => `--${env.toLowerCase().replace(/_/g, '-')}`;

/**
 * Reads and validates every setting. `flags` holds CLI flags by env name (`{ PORT: '9000' }`)
 * and wins over `env`. Throws ConfigError on the first malformed value.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env, flags: Record<string, string | undefined> = {}): Config {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(settings) as [string, Setting<unknown>][]) {
    const raw = flags[s.env] ?? env[s.env];
    out[key] = raw === undefined ? s.default : s.parse(raw, s.env);
  }
  const config = out as Config;
  config.dataDir = path.resolve(config.dataDir);
  if (config.modelDir !== undefined) config.modelDir = path.resolve(config.modelDir);
  if (config.quickstartOutlets !== undefined) config.quickstartOutlets = path.resolve(config.quickstartOutlets);
  if (config.chunkMinTokens > config.chunkMaxTokens) {
    throw new ConfigError(`CHUNK_MIN_TOKENS (${config.chunkMinTokens}) must not exceed CHUNK_MAX_TOKENS (${config.chunkMaxTokens})`);
  }
  if (config.smtpUrl !== undefined && config.smtpFrom === undefined) throw new ConfigError('SMTP_URL needs SMTP_FROM, the address its mails come from');
  if (config.jobBoardLayout !== 'indeed' && config.jobBoardUrl === settings.jobBoardUrl.default) {
    throw new ConfigError(`JOB_BOARD_LAYOUT=${config.jobBoardLayout} needs JOB_BOARD_URL set to that board's search page (the default is Indeed's)`);
  }
  if (config.clusterNatsUrls.length > 0 && config.clusterNodeId === undefined) {
    throw new ConfigError('CLUSTER_NATS_URLS needs CLUSTER_NODE_ID, a name unique to this node');
  }
  return config;
}

/** The known env names, so the CLI can map `--data-dir` back to `DATA_DIR` and reject unknown flags. */
export const settingEnvNames = (): string[] => Object.values(settings).map((s) => s.env);

/** Whether stdout is an interactive terminal (progress bars only there). */
export const isInteractive = (): boolean => Boolean(process.stderr.isTTY) && process.env.CI === undefined;

/**
 * Where account holders reach the server: PUBLIC_URL, else this server's own HOST and PORT
 * (a wildcard address is reached as localhost; an IPv6 one in brackets).
 */
export function publicBaseUrl(config: Pick<Config, 'publicUrl' | 'host' | 'port'>): string {
  if (config.publicUrl !== undefined) return config.publicUrl;
  const host =
    config.host === '0.0.0.0' || config.host === '::' || config.host === '' ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}`;
}
