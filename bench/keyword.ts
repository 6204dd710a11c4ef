/**
 * Keyword search (GET /v1/news, SQLite FTS5) at BENCH_ARTICLES articles (default 100,000),
 * against a plain SELECT of the same rows, in one run.
 *
 * The corpus is generated in the server's child process from a seeded PRNG (the same corpus
 * every run) and written to a temporary DATA_DIR (removed afterwards) through
 * `store.writeRevisions`, in batches of 1,000: 8 sources, published over two years in
 * roughly chronological order, 3% of the articles with a later revision (`revisedAt`, a
 * sentence added). A headline is ~8 words, a snippet (body) ~25, a text 80 to 200, drawn
 * Zipf-like (s = 1.05) from a 6,000-word vocabulary: ~200 real news words (function words at
 * the top ranks, content words spread down to the tail) and pronounceable pseudo-words, with
 * a few collocations ("prime minister", "interest rates") so phrases occur; 2% of sentences
 * are German and 2% Japanese. Then `news.catchUp()` builds the keyword index from LMDB,
 * timed (articles/s and the size of keyword.sqlite are printed).
 *
 * A fixed mix of 40 queries (built in the child, printed at the end with each query's hits,
 * matches and time): common, mid and rare words, two words, phrases, `a OR b`, prefixes
 * (`wor*` is served by FTS5's 3-character prefix index, `elect*` is not), exclusions, German
 * (with ß folding) and Japanese (2-character bigram) words, sort=relevance variants, a
 * since/until window, sources and exclude_sources filters, include_edits, limit=100.
 *
 * Rows (alternating over BENCH_ROUNDS rounds, default 2, each round's order reversed from
 * the last; the best run of each row counts, this machine's neighbours are noisy):
 * a. HTTP: autocannon against GET /v1/news on 127.0.0.1 (gateway key), each request the next
 *    query of the mix, BENCH_CONNECTIONS connections (default 16), pipelining 1, for
 *    BENCH_DURATION seconds (default 5) after a 1 s warm-up. The server runs in a child
 *    process (bench/child.ts) sharing the machine's cores with autocannon. Any non-2xx is
 *    printed as a warning (it must be 0).
 * b. SQL: `NewsIndex.search` in the child, no HTTP, on the filter each query of the mix
 *    parses to (parsed once, before timing), with its sort and limit + 1 rows, as
 *    `searchNews` asks for (the extra row says whether there is a next page). Whole passes
 *    over the mix for BENCH_CORE_SECONDS (default 3) after one warm-up pass.
 * c. baseline: the plain SELECT of the same rows, in the child: for each query of the mix the
 *    rids (b) returned, fetched in one prepared statement
 *    `SELECT rid, ord, event_time, source_id, first FROM news_rows WHERE rid IN (SELECT value
 *    FROM json_each(?))` (the JSON array built before timing): one statement a query, as (b)
 *    is, so the ratio is what FTS5 matching and ranking cost over reading the rows.
 * d. core: `searchNews(service, params)` in the child, the route's handler without
 *    HTTP: parameter parsing, the search, the LMDB revision reads and the highlights.
 * In-process rows report p50 / p99 of single calls (the mix's spread); the HTTP row's are
 * autocannon's, under BENCH_CONNECTIONS concurrent requests.
 *
 * Prints the build figures, a table (queries/s, p50, p99, non-2xx and the ratio to the
 * SELECT row), the mean hits a query and how many of the mix find nothing, the mix with each
 * query's figures, and one line `keyword: ...` (http_qps row a, sql_qps b, select_qps c,
 * core_qps d; sql_vs_select, core_vs_select, http_vs_select each ÷ c). It asserts nothing
 * about timings; it fails only when the HTTP answers disagree with searchNews's (status or
 * count). BENCH_CPU_PROF=<dir> writes the server's V8 CPU profile there.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { loadConfig } from '../src/config.js';
import { AppError } from '../src/errors.js';
import { buildApp } from '../src/http/app.js';
import type { NewsFilter } from '../src/keyword/news.js';
import { newsQuery, querystring as newsQuerystring, type NewsQueryString } from '../src/http/routes/news.js';
import { parseQuery } from '../src/keyword/query.js';
import { searchNews, type NewsQuery } from '../src/keyword/search-news.js';
import { resolveSources } from '../src/store/index.js';
import { openService } from '../src/service.js';
import type { RevisionInput } from '../src/store/index.js';
import { Rng } from '../test/helpers/rng.js';
import { forkServer } from './child.js';
import { envInt } from './corpus.js';

const GATEWAY_HOST = 'bench.local';
const SEED = 20260101;
const BATCH = 1_000;
const PROGRESS = 10_000;
const SOURCES = ['Daily Ledger', 'Wire One', 'Harbour Post', 'Morning Star', 'City Desk', 'Valley Times', 'North Courier', 'Evening Standard'];
/** Two years of publications, from 2024-07-01 UTC. */
const START = Date.UTC(2024, 6, 1) / 1000;
const SPAN = 2 * 365 * 86_400;

/** One query of the mix: its name in the tables, the query string of /v1/news, and what searchNews is given for it. */
interface MixQuery {
  label: string;
  params: MixParams;
  query: NewsQuery;
}
/** /v1/news parameters as the schema types them; unsent ones take the schema's defaults. */
type MixParams = Partial<NewsQueryString> & { q: string };
interface Ready {
  port: number;
  gatewaySecret: string;
  articles: number;
  revisions: number;
  generateMs: number;
  writeMs: number;
  indexMs: number;
  sqliteBytes: number;
  walBytes: number;
  mix: MixQuery[];
  /** Per query of the mix: rows searchNews answers (one page) and matches of all pages. */
  hits: number[];
  matches: number[];
}
/** One timed in-process row. */
interface Loop {
  qps: number;
  calls: number;
  p50: number;
  p99: number;
  /** Mean ms a call, per query of the mix. */
  perQuery: number[];
}

// ---------------------------------------------------------------------------------------
// The corpus
// ---------------------------------------------------------------------------------------

/** Function words: the top ranks, in order. */
const FUNCTION_WORDS = 'the of and to in a is that for on said with as at by from it was be has have will are an not its after but this were'.split(' ');
/** Content words, most common first; spread from rank 30 down to the vocabulary's tail. */
const CONTENT_WORDS = (
  'government people year new police president election minister market world state city officials ' +
  'report week public company party country court health million percent workers prime interest rates ' +
  'economy budget war security national international policy local business news united nations team ' +
  'energy climate change law support plan school water money bank central stock house white home price ' +
  'power leaders vote service military foreign trade deal talks billion campaign community children ' +
  'investigation crisis program hospital families women research industry growth inflation supreme ' +
  'human rights technology data agency council project oil gas record opposition federal region ' +
  'military protest strike union parliament senate congress judge ruling case charges prison attack ' +
  'troops border migrants refugees aid summit agreement sanctions exports imports tariffs housing rent ' +
  'transport rail airport flights weather storm flood drought heat fire forest wildlife species ' +
  'scientists study vaccine disease patients doctors universities students teachers museum festival ' +
  'film music football cup league championship players coach transfer stadium olympic athletes ' +
  'earthquake hurricane wildfire cyberattack ransomware merger acquisition bankruptcy layoffs ' +
  'referendum impeachment ceasefire coalition whistleblower biodiversity cryptocurrency semiconductor'
)
  .split(' ')
  .filter((w, i, all) => all.indexOf(w) === i);
/** After the first word, the second follows with probability 0.7 (so phrases occur). */
const COLLOCATIONS: Record<string, string> = {
  prime: 'minister',
  interest: 'rates',
  climate: 'change',
  supreme: 'court',
  central: 'bank',
  stock: 'market',
  white: 'house',
  united: 'nations',
  human: 'rights',
  world: 'cup',
};
const GERMAN =
  'der die das und ist nicht mit von für auf den dem ein eine im zu über nach bei wird wurde hat sich Regierung Bundestag Wirtschaft Kanzler Koalition Haushalt Straße Polizei Stadt Gericht Wahl Bürger Minister Unternehmen Preise Energie Klimaschutz Verhandlungen Gesetz Bericht Millionen Prozent Jahr heute Mittwoch Berlin München Grenze Schule Gesundheit Krankenhaus Märkte Zinsen Kommission Streik Bahn'.split(
    ' ',
  );
const JAPANESE_WORDS =
  '政府 経済 東京 選挙 市場 株価 大臣 会議 発表 企業 首相 国会 円安 物価 地震 台風 警察 事件 日本 米国 中国 関係 予算 輸出 首脳 会談 情報 技術 開発 大阪'.split(
    ' ',
  );
const PARTICLES = ['は', 'が', 'を', 'に', 'の', 'で', 'と', 'も'];
const ENDINGS = ['した。', 'する。', 'です。', 'された。', 'と発表した。'];
const VOCABULARY = 6_000;
const ZIPF_S = 1.05;

/** The deterministic corpus: vocabulary, Zipf sampler, articles and their revisions. */
class CorpusGen {
  readonly rng = new Rng(SEED);
  readonly words: string[];
  /** A pseudo-word of mid frequency and one from the tail (for the mix). */
  readonly midWord: string;
  readonly rareWord: string;
  readonly #cumulative: Float64Array;
  readonly #germanCumulative: Float64Array;

  constructor() {
    const real = new Set([...FUNCTION_WORDS, ...CONTENT_WORDS]);
    const words: (string | null)[] = new Array<string | null>(VOCABULARY).fill(null);
    FUNCTION_WORDS.forEach((w, i) => (words[i] = w));
    const step = (VOCABULARY - 1 - FUNCTION_WORDS.length) / (CONTENT_WORDS.length - 1);
    CONTENT_WORDS.forEach((w, i) => (words[FUNCTION_WORDS.length + Math.floor(i * step)] = w));
    const onsets = [
      'b',
      'br',
      'c',
      'ch',
      'd',
      'dr',
      'f',
      'g',
      'gr',
      'h',
      'j',
      'k',
      'l',
      'm',
      'n',
      'p',
      'pl',
      'r',
      's',
      'sh',
      'st',
      't',
      'th',
      'tr',
      'v',
      'w',
      'z',
    ];
    const vowels = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'ou', 'io'];
    const codas = ['', '', 'n', 'r', 's', 't', 'l', 'nd', 'st', 'ck', 'm'];
    const seen = new Set(real);
    for (let i = 0; i < VOCABULARY; i++) {
      if (words[i] !== null) continue;
      let w: string;
      do {
        w = '';
        const syllables = 1 + this.rng.int(3);
        for (let k = 0; k < syllables; k++) w += this.rng.pick(onsets) + this.rng.pick(vowels) + (k === syllables - 1 ? this.rng.pick(codas) : '');
      } while (w.length < 3 || seen.has(w));
      seen.add(w);
      words[i] = w;
    }
    this.words = words as string[];
    const pseudo = (from: number) => this.words.slice(from).find((w) => !real.has(w))!;
    this.midWord = pseudo(300);
    this.rareWord = pseudo(VOCABULARY - 40);
    this.#cumulative = cumulative(VOCABULARY, ZIPF_S);
    this.#germanCumulative = cumulative(GERMAN.length, 1);
  }

  #zipf(cum: Float64Array): number {
    const u = this.rng.next() * cum[cum.length - 1];
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid] > u) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** `n` words (or a few more, to finish a collocation). */
  #words(n: number): string[] {
    const out: string[] = [];
    while (out.length < n) {
      const w = this.words[this.#zipf(this.#cumulative)];
      out.push(w);
      const next = COLLOCATIONS[w];
      if (next && this.rng.chance(0.7)) out.push(next);
    }
    return out;
  }

  #sentence(n: number): string {
    const r = this.rng.next();
    if (r < 0.02) {
      const ws = Array.from({ length: n }, () => GERMAN[this.#zipf(this.#germanCumulative)]);
      return `${capital(ws.join(' '))}.`;
    }
    if (r < 0.04) {
      let s = '';
      for (let k = 2 + this.rng.int(4); k > 0; k--) s += this.rng.pick(JAPANESE_WORDS) + this.rng.pick(PARTICLES);
      return s + this.rng.pick(JAPANESE_WORDS) + this.rng.pick(ENDINGS);
    }
    return `${capital(this.#words(n).join(' '))}.`;
  }

  /** Sentences of 6 to 20 words until `words` words. */
  #paragraph(words: number): string {
    const out: string[] = [];
    let left = words;
    while (left > 0) {
      const n = Math.min(left, 6 + this.rng.int(15));
      out.push(this.#sentence(Math.max(n, 3)));
      left -= n;
    }
    return out.join(' ');
  }

  article(i: number, total: number): RevisionInput {
    const s = this.rng.int(SOURCES.length);
    return {
      url: `https://source-${s}.bench.example/news/${i}`,
      source: SOURCES[s],
      sourceHomepage: `https://source-${s}.bench.example/`,
      title: this.#words(6 + this.rng.int(5))
        .map(capital)
        .join(' '),
      body: this.#paragraph(20 + this.rng.int(11)),
      text: this.#paragraph(80 + this.rng.int(121)),
      // In order of publication, give or take six hours.
      publishedAt: Math.round(START + (i / total) * SPAN + this.rng.uniform(-6, 6) * 3600),
      chunks: [],
    };
  }

  /** A later revision: a sentence added, published 1 to 48 hours after. */
  revision(a: RevisionInput): RevisionInput {
    return { ...a, text: `${a.text} ${this.#sentence(12)}`, revisedAt: a.publishedAt + 3600 * (1 + this.rng.int(48)) };
  }
}

function cumulative(n: number, s: number): Float64Array {
  const c = new Float64Array(n);
  let sum = 0;
  for (let r = 0; r < n; r++) c[r] = sum += 1 / (r + 1) ** s;
  return c;
}

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** The query mix (~40 queries); `rare` and `mid` are pseudo-words of the vocabulary. */
function queryMix(g: CorpusGen): MixQuery[] {
  const day = (t: number) => new Date(t * 1000).toISOString().slice(0, 10);
  const month = { since: day(START + 0.5 * SPAN), until: day(START + 0.5 * SPAN + 30 * 86_400) };
  const week = { since: day(START + 0.8 * SPAN), until: day(START + 0.8 * SPAN + 7 * 86_400) };
  const two = `${SOURCES[1]},${SOURCES[2]}`;
  const rel = { sort: 'relevance' } as const;
  const list: MixParams[] = [
    { q: 'the' },
    { q: 'government' },
    { q: 'police' },
    { q: 'market' },
    { q: g.midWord },
    { q: 'whistleblower' },
    { q: 'referendum' },
    { q: g.rareWord },
    { q: 'government budget' },
    { q: 'police investigation' },
    { q: '"prime minister"' },
    { q: '"interest rates"' },
    { q: '"climate change"' },
    { q: 'wildfire OR earthquake' },
    { q: 'tariffs OR sanctions' },
    { q: 'wor*' },
    { q: 'elect*' },
    { q: 'election -president' },
    { q: 'market -stock' },
    { q: 'Regierung' },
    { q: 'Straße' },
    { q: '経済' },
    { q: '東京' },
    { q: 'election', ...month },
    { q: 'government', ...week },
    { q: 'police', sources: two },
    { q: 'market', exclude_sources: SOURCES[0] },
    { q: 'market', limit: 100 },
    { q: 'government', include_edits: true },
    { q: 'government', ...rel },
    { q: 'climate change', ...rel },
    { q: 'whistleblower', ...rel },
    { q: g.rareWord, ...rel },
    { q: '"interest rates"', ...rel },
    { q: 'wildfire OR earthquake', ...rel },
    { q: 'elect*', ...rel },
    { q: '経済', ...rel },
    { q: 'election', ...month, ...rel },
    { q: 'police', sources: two, ...rel },
    { q: 'budget', limit: 100, ...rel },
  ];
  // The defaults the route's schema fills in (Ajv, at the door) for what a query leaves out.
  const given = (name: string) => (newsQuerystring.properties[name] as { default?: unknown }).default;
  const defaults = { sort: given('sort') as NewsQueryString['sort'], include_edits: given('include_edits') as boolean, limit: given('limit') as number };
  return list.map((params) => ({
    label: [
      params.q,
      ...Object.entries(params)
        .filter(([k]) => k !== 'q')
        .map(([k, v]) => `${k}=${v}`),
    ].join(' '),
    params,
    query: newsQuery({ ...defaults, ...params }),
  }));
}

/** What `searchNews` hands `NewsIndex.search` for this query. */
function newsFilter(service: Awaited<ReturnType<typeof openService>>, q: NewsQuery): { filter: NewsFilter; sort: 'time' | 'relevance'; limit: number } {
  const sources = resolveSources(
    service.store.listSources(),
    q.sources,
    q.exclude_sources,
    () => new Set(),
    (m) => new AppError('unknown_source', m),
  );
  return { filter: { match: parseQuery(q.q).match, since: q.since, until: q.until, includeEdits: q.include_edits, sources }, sort: q.sort, limit: q.limit };
}

/** Whole passes over `calls` (after one warm-up pass) until `seconds` have gone. */
/** timeLoop for calls that answer a promise (searchNews reads on the keyword threads): each awaited in turn. */
async function timeLoopAsync(seconds: number, calls: (() => Promise<unknown>)[]): Promise<Loop> {
  for (const c of calls) await c();
  const t = new Timing(calls.length);
  const end = performance.now() + seconds * 1000;
  do {
    for (let k = 0; k < calls.length; k++) {
      const s = performance.now();
      await calls[k]();
      t.add(k, performance.now() - s);
    }
    t.passes++;
  } while (performance.now() < end);
  return t.loop();
}

/** Latencies of a timed loop, per call and per query of the mix. */
class Timing {
  readonly perQuery: Float64Array;
  readonly lat: number[] = [];
  passes = 0;
  readonly t0 = performance.now();
  constructor(queries: number) {
    this.perQuery = new Float64Array(queries);
  }
  add(k: number, ms: number): void {
    this.lat.push(ms);
    this.perQuery[k] += ms;
  }
  loop(): Loop {
    const ms = performance.now() - this.t0;
    const sorted = Float64Array.from(this.lat).sort();
    const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
    return {
      qps: this.lat.length / (ms / 1000),
      calls: this.lat.length,
      p50: pct(50),
      p99: pct(99),
      perQuery: Array.from(this.perQuery, (v) => v / this.passes),
    };
  }
}

function timeLoop(seconds: number, calls: (() => unknown)[]): Loop {
  for (const c of calls) c();
  const t = new Timing(calls.length);
  const end = performance.now() + seconds * 1000;
  do {
    for (let k = 0; k < calls.length; k++) {
      const s = performance.now();
      calls[k]();
      t.add(k, performance.now() - s);
    }
    t.passes++;
  } while (performance.now() < end);
  return t.loop();
}

/** Pads to a terminal width: CJK and full-width characters take two columns. */
function pad(s: string, width: number): string {
  let out = '';
  let w = 0;
  for (const ch of s) {
    const cw = /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/u.test(ch) ? 2 : 1;
    if (w + cw > width) break;
    out += ch;
    w += cw;
  }
  return out + ' '.repeat(width - w);
}

/** Milliseconds: three decimals below 10, one above. */
const ms = (v: number) => v.toFixed(v < 10 ? 3 : 1);

const fileSize = (f: string) => (fs.existsSync(f) ? fs.statSync(f).size : 0);
const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;

if (process.argv[2] === 'serve') {
  // The child: generate, store and index the corpus, serve it; answers `sql`, `select`,
  // `core` (an in-process row each) and `close`.
  const dir = process.argv[3];
  const articles = Number(process.argv[4]);
  const coreSeconds = envInt('BENCH_CORE_SECONDS', 3);
  const service = await openService(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', GATEWAY_HOST }));
  const gen = new CorpusGen();

  let generateMs = 0;
  let writeMs = 0;
  let revisions = 0;
  let pending: RevisionInput[] = [];
  const write = (batch: RevisionInput[]) => {
    const t = performance.now();
    const outcomes = service.store.writeRevisions(batch);
    writeMs += performance.now() - t;
    const bad = outcomes.find((o) => o.status !== 'new');
    if (bad) throw new Error(`writeRevisions: ${JSON.stringify(bad)}`);
    revisions += batch.length;
  };
  for (let i = 0; i < articles; i += BATCH) {
    const t = performance.now();
    // The revisions of the last batch's articles come first: an article is stored before its edit.
    const batch = pending;
    pending = [];
    for (let k = i; k < Math.min(articles, i + BATCH); k++) {
      const a = gen.article(k, articles);
      batch.push(a);
      if (gen.rng.chance(0.03)) pending.push(gen.revision(a));
    }
    generateMs += performance.now() - t;
    write(batch);
    const done = Math.min(articles, i + BATCH);
    if (done % PROGRESS === 0) console.error(`  written ${done} of ${articles} articles (${revisions} revisions)`);
  }
  if (pending.length > 0) write(pending);

  const t1 = performance.now();
  let indexed = 0;
  for (;;) {
    const n = service.news.catchUp(PROGRESS);
    if (n === 0) break;
    indexed += n;
    console.error(`  indexed ${indexed} of ${revisions} revisions`);
  }
  const indexMs = performance.now() - t1;
  if (indexed !== revisions || service.news.behind() !== 0) throw new Error(`indexed ${indexed} of ${revisions} revisions`);
  const sqlite = path.join(dir, 'keyword.sqlite');

  const mix = queryMix(gen);
  const filters = mix.map((m) => newsFilter(service, m.query));
  const first = await Promise.all(mix.map((m) => searchNews(service, m.query)));
  const matches = filters.map((f) => service.news.volume(f.filter).reduce((n, v) => n + v.n, 0));
  // The rids NewsIndex.search returns for each query: what the baseline SELECT reads.
  const ridLists = filters.map((f) => JSON.stringify(service.news.search(f.filter, f.sort, f.limit + 1).map((h) => h.rid)));
  const select = service.keyword.db.prepare('SELECT rid, ord, event_time, source_id, first FROM news_rows WHERE rid IN (SELECT value FROM json_each(?))');

  const app = await buildApp(service);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;
  const gatewaySecret = service.keys.create({ scheme: 'gateway', name: 'bench' }).secret;

  process.on('message', (m: string) => {
    if (m === 'sql')
      process.send!(
        timeLoop(
          coreSeconds,
          filters.map((f) => () => service.news.search(f.filter, f.sort, f.limit + 1)),
        ),
      );
    else if (m === 'select')
      process.send!(
        timeLoop(
          coreSeconds,
          ridLists.map((rids) => () => select.all(rids)),
        ),
      );
    else if (m === 'core')
      void timeLoopAsync(
        coreSeconds,
        mix.map((m) => () => searchNews(service, m.query)),
      ).then((r) => process.send!(r));
    else if (m === 'close') {
      void app
        .close()
        .then(() => service.close())
        .then(() => process.exit(0));
    }
  });
  const ready: Ready = {
    port,
    gatewaySecret,
    articles,
    revisions,
    generateMs,
    writeMs,
    indexMs,
    sqliteBytes: fileSize(sqlite),
    walBytes: fileSize(`${sqlite}-wal`),
    mix,
    hits: first.map((r) => r.count),
    matches,
  };
  process.send!(ready);
} else {
  const t0 = performance.now();
  const articles = envInt('BENCH_ARTICLES', 100_000);
  const connections = envInt('BENCH_CONNECTIONS', 16);
  const duration = envInt('BENCH_DURATION', 5);
  const rounds = envInt('BENCH_ROUNDS', 2);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-bench-keyword-'));
  const { child, ask } = forkServer(fileURLToPath(import.meta.url), ['serve', dir, String(articles)]);
  try {
    const ready = await ask<Ready>(null);
    const { mix } = ready;
    const base = `http://127.0.0.1:${ready.port}`;
    const headers = { 'x-gateway-key': ready.gatewaySecret, 'x-gateway-host': GATEWAY_HOST };
    const paths = mix.map((m) => `/v1/news?${new URLSearchParams(Object.entries(m.params).map(([k, v]) => [k, String(v)]))}`);
    const sec = (t: number) => (t / 1000).toFixed(1);
    console.log(
      `corpus: ${ready.articles} articles, ${ready.revisions} revisions (${ready.revisions - ready.articles} later edits), ${SOURCES.length} sources; ` +
        `generated in ${sec(ready.generateMs)} s, stored in LMDB in ${sec(ready.writeMs)} s (${(ready.revisions / (ready.writeMs / 1000)).toFixed(0)} revisions/s)`,
    );
    console.log(
      `keyword index: ${ready.revisions} revisions indexed in ${sec(ready.indexMs)} s (${(ready.revisions / (ready.indexMs / 1000)).toFixed(0)} revisions/s); ` +
        `keyword.sqlite ${mb(ready.sqliteBytes)} (+ ${mb(ready.walBytes)} WAL)`,
    );
    console.log(`server on 127.0.0.1:${ready.port}; ${os.availableParallelism()} cores shared with autocannon; a mix of ${mix.length} queries`);

    // Every query of the mix answers 200 over HTTP, with the count searchNews gave in the child.
    for (const [k, p] of paths.entries()) {
      const res = await fetch(base + p, { headers });
      const body = (await res.json()) as { count?: number };
      if (res.status !== 200 || body.count !== ready.hits[k]) {
        throw new Error(`GET ${p}: ${res.status} ${JSON.stringify(body).slice(0, 300)}; searchNews answered ${ready.hits[k]} rows`);
      }
    }

    type Result = Awaited<ReturnType<typeof autocannon>>;
    /** One autocannon run; each request is the next query of the mix, over all connections. */
    const cannon = async (seconds: number): Promise<Result> => {
      let i = 0;
      return autocannon({
        url: base,
        connections,
        pipelining: 1,
        duration: seconds,
        requests: [{ method: 'GET', headers, setupRequest: (req: autocannon.Request) => ({ ...req, path: paths[i++ % paths.length] }) }],
      });
    };
    const failed = (r: Result) => r.non2xx + r.errors + r.timeouts;

    interface Row {
      name: string;
      run: () => Promise<{ qps: number; p50: number; p99: number; failed: number; loop?: Loop }>;
      runs: { qps: number; p50: number; p99: number; failed: number; loop?: Loop }[];
    }
    const inProcess = (msg: string) => async () => {
      const loop = await ask<Loop>(msg);
      return { qps: loop.qps, p50: loop.p50, p99: loop.p99, failed: 0, loop };
    };
    const http: Row = {
      name: `HTTP GET /v1/news (${connections} connections)`,
      run: async () => {
        const r = await cannon(duration);
        if (failed(r) > 0) console.warn(`  WARNING: ${failed(r)} failed requests (non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts})`);
        return { qps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, failed: failed(r) };
      },
      runs: [],
    };
    const sql: Row = { name: 'SQL NewsIndex.search (in-process)', run: inProcess('sql'), runs: [] };
    const core: Row = { name: 'core searchNews (in-process)', run: inProcess('core'), runs: [] };
    const select: Row = { name: 'plain SELECT of the rows (baseline)', run: inProcess('select'), runs: [] };
    const rows = [http, core, sql, select];

    await cannon(1); // warm-up: JIT, SQLite and LMDB pages, sockets
    for (let k = 0; k < rounds; k++) {
      for (const row of k % 2 === 0 ? rows : [...rows].reverse()) {
        const r = await row.run();
        row.runs.push(r);
        console.log(`  round ${k + 1}/${rounds} ${row.name}: ${r.qps.toFixed(0)} queries/s, p50 ${ms(r.p50)} ms, p99 ${ms(r.p99)} ms`);
      }
    }
    await ask('close').catch(() => undefined);

    const best = (row: Row) => row.runs.reduce((a, r) => (r.qps > a.qps ? r : a));
    const baseline = best(select).qps;
    console.log(
      `\n/v1/news at ${ready.articles} articles (best of ${rounds} alternating runs; HTTP ${duration} s a run, pipelining 1; in-process rows ${envInt('BENCH_CORE_SECONDS', 3)} s of whole passes over the mix)`,
    );
    console.log(
      `${'row'.padEnd(42)} ${'queries/s'.padStart(10)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)} ${'non-2xx'.padStart(8)}  ${'÷ SELECT'.padStart(9)}`,
    );
    for (const row of rows) {
      const r = best(row);
      const fails = row === http ? String(r.failed) : '-';
      console.log(
        `${row.name.padEnd(42)} ${r.qps.toFixed(0).padStart(10)} ${ms(r.p50).padStart(9)} ${ms(r.p99).padStart(9)} ${fails.padStart(8)}  ${`${(r.qps / baseline).toFixed(4)}x`.padStart(9)}`,
      );
    }
    const meanHits = ready.hits.reduce((a, b) => a + b, 0) / mix.length;
    const zero = ready.hits.filter((h) => h === 0).length;
    console.log(`mean hits a query ${meanHits.toFixed(1)} (one page); ${zero} of ${mix.length} queries find nothing`);
    if (best(http).failed > 0) console.warn(`WARNING: the best HTTP run had ${best(http).failed} failed requests; it must be 0`);

    // The mix, with what each query finds and costs in the best in-process runs.
    const sqlLoop = best(sql).loop!;
    const coreLoop = best(core).loop!;
    const selectLoop = best(select).loop!;
    console.log(`\nthe mix (hits: rows of one page; matches: all pages; ms: a call in the best in-process runs)`);
    console.log(
      `${'query'.padEnd(64)} ${'hits'.padStart(5)} ${'matches'.padStart(8)} ${'SQL ms'.padStart(9)} ${'core ms'.padStart(10)} ${'SELECT ms'.padStart(10)}`,
    );
    mix.forEach((m, k) => {
      console.log(
        `${pad(m.label, 64)} ${String(ready.hits[k]).padStart(5)} ${String(ready.matches[k]).padStart(8)} ${sqlLoop.perQuery[k].toFixed(3).padStart(9)} ${coreLoop.perQuery[k].toFixed(3).padStart(10)} ${selectLoop.perQuery[k].toFixed(3).padStart(10)}`,
      );
    });

    const q = (row: Row) => best(row).qps;
    console.log(
      `keyword: articles=${ready.articles} revisions=${ready.revisions} index_s=${(ready.indexMs / 1000).toFixed(1)} index_per_s=${(ready.revisions / (ready.indexMs / 1000)).toFixed(0)} ` +
        `sqlite_mb=${((ready.sqliteBytes + ready.walBytes) / 1_048_576).toFixed(1)} http_qps=${q(http).toFixed(0)} core_qps=${q(core).toFixed(0)} ` +
        `sql_qps=${q(sql).toFixed(0)} select_qps=${baseline.toFixed(0)} sql_vs_select=${(q(sql) / baseline).toFixed(4)} ` +
        `core_vs_select=${(q(core) / baseline).toFixed(4)} http_vs_select=${(q(http) / baseline).toFixed(4)} http_p99_ms=${best(http).p99} ` +
        `http_non2xx=${best(http).failed} mean_hits=${meanHits.toFixed(1)} zero_hit_queries=${zero} wall_s=${((performance.now() - t0) / 1000).toFixed(0)}`,
    );
  } finally {
    if (child.exitCode === null) child.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
