/**
 * The demo corpus: articles on a few topics (topics.ts) whose texts and vectors agree, so a
 * newcomer without the bge-m3 model sees every query mode answer sensibly.
 *
 * A chunk's vector is the normalised sum of four independent random unit directions, weighted
 * by the share of the cosine two chunks get from each level they share: a common direction
 * (embedding spaces are anisotropic: unrelated texts score above 0), the topic's, the
 * article's, and the chunk's own. Two chunks of one article score about 0.75, of one topic
 * about 0.55, of different topics about 0.15 (each ± 0.03, the noise of 1024 dimensions), so
 * a query made from one article's chunk finds its topic first and `min_score` 0.45 keeps
 * exactly its topic.
 *
 * One JSONL line as written (`newsmatch import` format, vectors shortened):
 *   {"url":"https://wireone.example/2026/05/03/strike-at-port-aster-hits-supermarket-supplies-17",
 *    "source":"Wire One","source_homepage":"https://wireone.example/",
 *    "title":"Strike at Port Aster hits supermarket supplies","snippet":"Dock workers at …",
 *    "text":"Dock workers at … Retailers warned …","published_at":"2026-05-03T09:14:03Z",
 *    "chunks":[{"text":"Strike at Port Aster hits supermarket supplies","vector_b64":"AAB…"},…]}
 * An edit is a second line with the same url, a new headline, one more sentence and
 * "revised_at".
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { Rng } from './rng.js';
import { DEMO_SOURCES, DEMO_TOPICS, SHARED_POOLS, type DemoSource, type DemoTopic } from './topics.js';

const DIM = 1024;
/** Squared weights of the levels a chunk vector is made of (they sum to 1: see the header). */
const LEVELS = { common: 0.15, topic: 0.4, article: 0.2, chunk: 0.25 };
/** The share of articles with an edit (a second revision). */
const EDIT_RATE = 0.15;
const DAY = 86_400;

export const DEMO_SEED = 24;
export const DEMO_ARTICLES = 3000;
/** The order=time floor the demo's query uses: between its topic (~0.55) and the rest (~0.15). */
export const DEMO_MIN_SCORE = 0.45;

export interface DemoChunk {
  text: string;
  /** Unit length. */
  vector: Float32Array;
}

export interface DemoRevision {
  title: string;
  snippet: string;
  text: string;
  /** Unix seconds. */
  publishedAt: number;
  revisedAt?: number;
  chunks: DemoChunk[];
}

export interface DemoArticle {
  index: number;
  url: string;
  topic: DemoTopic;
  source: DemoSource;
  /** The first publication, then its edit if any. */
  revisions: DemoRevision[];
}

export interface DemoCorpus {
  seed: number;
  /** Unix seconds: the start of the UTC day the corpus was made for; every time is before it. */
  anchor: number;
  articles: DemoArticle[];
  revisions: number;
  chunks: number;
}

export interface DemoOptions {
  seed?: number;
  articles?: number;
  /** Unix ms; the corpus spans the 60 days before this one's UTC day. Default: now. */
  now?: number;
}

/**
 * Generates the corpus. The same seed, size and UTC day give the same corpus, so a second
 * `newsmatch demo --force` on the same day changes nothing (every line is unchanged).
 */
export function generateDemoCorpus(opts: DemoOptions = {}): DemoCorpus {
  const seed = opts.seed ?? DEMO_SEED;
  const n = opts.articles ?? DEMO_ARTICLES;
  const anchor = Math.floor((opts.now ?? Date.now()) / 1000 / DAY) * DAY;
  const rng = new Rng(seed);
  const common = randomUnit(rng);
  const topicDirs = DEMO_TOPICS.map(() => randomUnit(rng));
  const sourceWeights = DEMO_SOURCES.map((s) => s.weight);
  const articles: DemoArticle[] = [];
  let revisions = 0;
  let chunks = 0;
  for (let index = 0; index < n; index++) {
    const t = Math.floor(rng.next() * DEMO_TOPICS.length);
    const topic = DEMO_TOPICS[t];
    const source = DEMO_SOURCES[rng.weighted(sourceWeights)];
    const base = new Float64Array(DIM);
    addScaled(base, common, LEVELS.common);
    addScaled(base, topicDirs[t], LEVELS.topic);
    addScaled(base, randomUnit(rng), LEVELS.article);
    const chunk = (text: string): DemoChunk => {
      const v = Float64Array.from(base);
      addScaled(v, randomUnit(rng), LEVELS.chunk);
      return { text, vector: unitF32(v) };
    };

    const vars = draw(rng, topic);
    const write = (template: string) => fill(rng, template, vars);
    // Published within the topic's window, at least an hour before the anchor (room for an edit).
    const [older, newer] = topic.days;
    const publishedAt = anchor - 3600 - Math.floor((newer + rng.next() * (older - newer)) * DAY);
    const headlineAt = Math.floor(rng.next() * topic.headlines.length);
    const title = write(topic.headlines[headlineAt]);
    const sentences = [write(rng.pick(topic.leads)), ...rng.sample(topic.sentences, rng.range(2, 4)).map(write)];
    const first: DemoRevision = {
      title,
      snippet: sentences[0],
      text: sentences.join(' '),
      publishedAt,
      chunks: [chunk(title), ...sentences.map(chunk)],
    };
    const d = new Date(publishedAt * 1000).toISOString();
    const url = `${source.homepage}${d.slice(0, 4)}/${d.slice(5, 7)}/${d.slice(8, 10)}/${slug(title)}-${index}`;
    const article: DemoArticle = { index, url, topic, source, revisions: [first] };
    if (rng.chance(EDIT_RATE)) {
      // An edit: another headline and one more sentence; the unchanged sentences keep their vectors.
      const editTitle = write(topic.headlines[(headlineAt + rng.range(1, topic.headlines.length - 1)) % topic.headlines.length]);
      const update = write(rng.pick(topic.updates));
      const revisedAt = publishedAt + rng.range(600, Math.min(30 * 3600, anchor - 60 - publishedAt));
      article.revisions.push({
        title: editTitle,
        snippet: first.snippet,
        text: `${first.text} ${update}`,
        publishedAt,
        revisedAt,
        chunks: [chunk(editTitle), ...first.chunks.slice(1), chunk(update)],
      });
    }
    for (const r of article.revisions) {
      revisions++;
      chunks += r.chunks.length;
    }
    articles.push(article);
  }
  return { seed, anchor, articles, revisions, chunks };
}

/** The newest article of a topic: the demo's vector query is its headline chunk. */
export function newestOfTopic(corpus: DemoCorpus, key: string): DemoArticle {
  let best: DemoArticle | undefined;
  for (const a of corpus.articles) {
    if (a.topic.key === key && (!best || a.revisions[0].publishedAt > best.revisions[0].publishedAt)) best = a;
  }
  if (!best) throw new Error(`the demo corpus has no article on ${key}`);
  return best;
}

/** One revision as a `newsmatch import` line, vectors as base64 float32 (a third of the JSON numbers' size). */
export function demoLine(article: DemoArticle, r: DemoRevision): string {
  return JSON.stringify({
    url: article.url,
    source: article.source.name,
    source_homepage: article.source.homepage,
    title: r.title,
    snippet: r.snippet,
    text: r.text,
    published_at: isoSecond(r.publishedAt),
    ...(r.revisedAt === undefined ? {} : { revised_at: isoSecond(r.revisedAt) }),
    chunks: r.chunks.map((c) => ({ text: c.text, vector_b64: vectorB64(c.vector) })),
  });
}

/** Writes the corpus as an import file: each article's revisions in order, an article after another. */
export function writeDemoJsonl(corpus: DemoCorpus, file: string): void {
  const fd = openSync(file, 'w');
  try {
    let buf = '';
    for (const a of corpus.articles) {
      for (const r of a.revisions) buf += `${demoLine(a, r)}\n`;
      if (buf.length > 4_000_000) {
        writeSync(fd, buf);
        buf = '';
      }
    }
    writeSync(fd, buf);
  } finally {
    closeSync(fd);
  }
}

/** One value a pool for the article (`name2`: a second, different one), so its sentences tell one story. */
function draw(rng: Rng, topic: DemoTopic): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const [name, pool] of Object.entries({ ...SHARED_POOLS, ...topic.pools })) {
    const [a, b] = rng.sample(pool, 2);
    vars[name] = a;
    vars[`${name}2`] = b ?? a;
  }
  return vars;
}

function fill(rng: Rng, template: string, vars: Record<string, string>): string {
  const s = template.replace(/\{(\w+)(?::([\d.]+)-([\d.]+))?\}/g, (_, name: string, lo?: string, hi?: string) => {
    if (name === 'n') return String(rng.range(Number(lo), Number(hi)));
    if (name === 'd') return (Number(lo) + rng.next() * (Number(hi) - Number(lo))).toFixed(1);
    const v = vars[name];
    if (v === undefined) throw new Error(`demo template ${JSON.stringify(template)}: no pool "${name}"`);
    return v;
  });
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function randomUnit(rng: Rng): Float64Array {
  const v = new Float64Array(DIM);
  let s = 0;
  for (let i = 0; i < DIM; i++) {
    v[i] = rng.gauss();
    s += v[i] * v[i];
  }
  const inv = 1 / Math.sqrt(s);
  for (let i = 0; i < DIM; i++) v[i] *= inv;
  return v;
}

/** out += sqrt(weight) * unit: the level then contributes `weight` to a cosine. */
function addScaled(out: Float64Array, unit: Float64Array, weight: number): void {
  const k = Math.sqrt(weight);
  for (let i = 0; i < DIM; i++) out[i] += k * unit[i];
}

function unitF32(v: Float64Array): Float32Array {
  let s = 0;
  for (let i = 0; i < DIM; i++) s += v[i] * v[i];
  const inv = 1 / Math.sqrt(s);
  const out = new Float32Array(DIM);
  for (let i = 0; i < DIM; i++) out[i] = v[i] * inv;
  return out;
}

function vectorB64(v: Float32Array): string {
  const buf = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) buf.writeFloatLE(v[i], i * 4);
  return buf.toString('base64');
}

const isoSecond = (sec: number): string => new Date(sec * 1000).toISOString().replace('.000Z', 'Z');

function slug(s: string): string {
  return s
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 60)
    .replace(/-$/, '');
}
