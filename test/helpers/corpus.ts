/**
 * A seeded generator of a news corpus whose chunk vectors resemble sentence embeddings:
 * clustered, not uniform. Every vector shares a common direction (real embedding spaces are
 * anisotropic, so unrelated texts still score about 0.2 to 0.3), each of 40 topics has a
 * centroid, each topic a few stories, each article sits near one story, and each chunk near
 * its article. A topic query then scores its own articles about 0.4 to 0.7, a chunk-derived
 * query scores its source chunk above 0.9, and everything else spreads below.
 *
 * Worked example of one JSONL line as written (vectors shortened):
 *   {"url":"https://wireone.example/2025/01/07/rail-strike-12","source":"Wire One",
 *    "source_homepage":"https://wireone.example/","title":"Rail strike: ...","snippet":"...",
 *    "text":"...","published_at":"2025-01-07T09:14:03Z",
 *    "chunks":[{"text":"Rail strike: ...","vector_b64":"AAB..."},{"text":"...","vector":[0.0123,...]}]}
 * A later line with the same url is an edit and carries "revised_at".
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { Rng } from './rng.js';

export const DIM = 1024;

export interface SourceRec {
  name: string;
  homepage: string;
}

/** One chunk as written to the file. `raw` is exactly what the line carries (not normalised). */
export interface ChunkRec {
  text: string;
  raw: Float32Array;
  /** 1 / |raw| in float64, so the oracle scores the normalised vector the service stores. */
  invNorm: number;
  encoding: 'json' | 'b64';
}

export interface RevisionRec {
  /** Position in `corpus.revisions` (file order). */
  idx: number;
  /** 1-based line number in the written file. */
  line: number;
  url: string;
  source: string;
  homepage: string;
  title: string;
  snippet: string;
  text: string;
  publishedAt: string;
  revisedAt: string | null;
  /** The row's event_time as the service must write it. */
  eventTime: string;
  eventSec: number;
  revIndex: number;
  isFirst: boolean;
  article: ArticleRec;
  chunks: ChunkRec[];
}

export interface ArticleRec {
  index: number;
  url: string;
  source: string;
  homepage: string;
  topic: number;
  story: number;
  revisions: RevisionRec[];
}

export interface Corpus {
  seed: number;
  sources: SourceRec[];
  topicCentroids: Float64Array[];
  storyCentroids: Float64Array[][];
  articles: ArticleRec[];
  /** Every revision in file order. */
  revisions: RevisionRec[];
  /** Event times shared by two or more first revisions, with the size of the group. */
  tieGroups: { eventTime: string; size: number }[];
  /** The forced large tie group (several first revisions at one second). */
  bigTie: string;
}

export interface CorpusOptions {
  seed?: number;
  articles?: number;
  topics?: number;
  storiesPerTopic?: number;
  days?: number;
  editRate?: number;
  b64Rate?: number;
  sources?: SourceRec[];
  /** ISO start of the publication window. */
  start?: string;
}

export const DEFAULT_SOURCES: SourceRec[] = [
  { name: 'Daily Ledger', homepage: 'https://www.dailyledger.example/' },
  { name: 'Wire One', homepage: 'https://wireone.example/' },
  { name: 'The Harbor Post', homepage: 'https://harborpost.example/' },
  { name: 'Metro Courier', homepage: 'https://metrocourier.example/' },
  { name: 'Northern Gazette', homepage: 'https://northerngazette.example/' },
  { name: 'Café Économie', homepage: 'https://cafe-economie.example/' },
];
/** Café Économie is the selective one (about 6% of articles). */
export const SOURCE_WEIGHTS = [0.3, 0.24, 0.16, 0.13, 0.11, 0.06];

const TOPICS = [
  'port expansion',
  'central bank rates',
  'wildfire season',
  'chip exports',
  'rail strike',
  'vaccine rollout',
  'election count',
  'housing market',
  'river drought',
  'satellite launch',
  'steel tariffs',
  'teacher shortage',
  'flood defences',
  'wind farm auction',
  'hospital waiting lists',
  'grain harvest',
  'airline mergers',
  'data privacy law',
  'coral bleaching',
  'pension reform',
  'bridge collapse inquiry',
  'lithium mining',
  'football transfer window',
  'museum reopening',
  'heatwave warnings',
  'bank outage',
  'fishing quotas',
  'border checks',
  'film festival',
  'tram extension',
  'cyber attack',
  'oil price slump',
  'minimum wage',
  'bird flu outbreak',
  'election debate',
  'startup funding',
  'water bills',
  'space telescope',
  'refugee arrivals',
  'court ruling on tolls',
];
const PLACES = [
  'Northbridge',
  'Lakeside',
  'Port Aster',
  'Greyfield',
  'Carden',
  'Eastmoor',
  'Wellham',
  'Ostrava Bay',
  'Kingsreach',
  'Millbrook',
  'Saltmarsh',
  'Highcombe',
];
const ACTORS = [
  'officials',
  'analysts',
  'residents',
  'union leaders',
  'regulators',
  'investors',
  'ministry staff',
  'local councillors',
  'engineers',
  'doctors',
  'campaigners',
  'economists',
];
const VERBS = ['warned', 'said', 'confirmed', 'denied', 'estimated', 'reported', 'questioned', 'welcomed', 'predicted', 'acknowledged'];
const OUTCOMES = ['rise', 'fall', 'stall', 'double', 'shrink', 'recover', 'slow', 'accelerate'];
const WHEN = [
  'this quarter',
  'next year',
  'before the summer',
  'within weeks',
  'by the end of the month',
  'over the winter',
  'after the vote',
  'once talks resume',
];
const HEADLINE_VERBS = ['weighs', 'faces', 'braces for', 'debates', 'rejects', 'backs', 'delays', 'probes'];
const HEADLINE_TAILS = [
  'new limits',
  'a costly delay',
  'fresh protests',
  'an uncertain vote',
  'a surprise review',
  'tighter rules',
  'a record year',
  'mounting pressure',
];

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export function isoSecond(sec: number): string {
  return new Date(sec * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function parseSec(iso: string): number {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`bad date ${iso}`);
  return Math.floor(ms / 1000);
}

// ---- vector helpers (float64) ----

export function randUnit(rng: Rng): Float64Array {
  const v = new Float64Array(DIM);
  for (let i = 0; i < DIM; i++) v[i] = rng.gauss();
  return normalize(v);
}

export function normalize(v: ArrayLike<number>): Float64Array {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] * v[i];
  const inv = 1 / Math.sqrt(s);
  const out = new Float64Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i] * inv;
  return out;
}

/** normalize(base + scale * randomUnit) */
export function perturb(rng: Rng, base: Float64Array, scale: number): Float64Array {
  const n = randUnit(rng);
  const out = new Float64Array(DIM);
  for (let i = 0; i < DIM; i++) out[i] = base[i] + scale * n[i];
  return normalize(out);
}

/** base + sum of sqrt(w) * unit, not normalised. */
function combine(parts: [number, Float64Array][], base?: Float64Array): Float64Array {
  const out = base ? Float64Array.from(base) : new Float64Array(DIM);
  for (const [w, u] of parts) {
    const k = Math.sqrt(w);
    for (let i = 0; i < DIM; i++) out[i] += k * u[i];
  }
  return out;
}

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

function makeChunk(rng: Rng, text: string, unit: Float64Array, b64Rate: number): ChunkRec {
  // Some vectors are written un-normalised: the service must normalise them on import.
  const scale = rng.chance(0.3) ? rng.uniform(0.3, 3) : 1;
  const encoding: 'json' | 'b64' = rng.chance(b64Rate) ? 'b64' : 'json';
  const raw = new Float32Array(DIM);
  // A JSON line carries 7 significant digits of this float32: a relative change under 1e-7.
  for (let i = 0; i < DIM; i++) raw[i] = unit[i] * scale;
  let s = 0;
  for (let i = 0; i < DIM; i++) s += raw[i] * raw[i];
  return { text, raw, invNorm: 1 / Math.sqrt(s), encoding };
}

function sentence(rng: Rng, topic: string): string {
  const fig = (rng.range(1, 199) / 10).toFixed(1);
  return `${cap(rng.pick(ACTORS))} in ${rng.pick(PLACES)} ${rng.pick(VERBS)} that the ${topic} could ${rng.pick(
    OUTCOMES,
  )} by ${fig} percent ${rng.pick(WHEN)}.`;
}

function headline(rng: Rng, topic: string): string {
  return `${cap(topic)}: ${rng.pick(PLACES)} ${rng.pick(HEADLINE_VERBS)} ${rng.pick(HEADLINE_TAILS)}`;
}

function snippetOf(sentences: string[], prefix = ''): string {
  let s = prefix;
  for (const x of sentences) {
    if (s.length >= 120) break;
    s += (s && !s.endsWith(' ') ? ' ' : '') + x;
  }
  while (s.length < 100) s += ' More details are expected later today.';
  if (s.length > 300) s = `${s.slice(0, 297).trimEnd()}...`;
  return s;
}

function slug(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 40);
}

export function generateCorpus(opts: CorpusOptions = {}): Corpus {
  const seed = opts.seed ?? 20250101;
  const nArticles = opts.articles ?? 1800;
  const nTopics = opts.topics ?? 40;
  const nStories = opts.storiesPerTopic ?? 4;
  const days = opts.days ?? 60;
  const editRate = opts.editRate ?? 0.2;
  const b64Rate = opts.b64Rate ?? 0.65;
  const sources = opts.sources ?? DEFAULT_SOURCES;
  const weights = sources === DEFAULT_SOURCES ? SOURCE_WEIGHTS : sources.map(() => 1);
  const startSec = parseSec(opts.start ?? '2025-01-01T00:00:00Z');
  const rng = new Rng(seed);

  // Every vector is a weighted sum of independent random directions, one per level it belongs
  // to: a common one (anisotropy), its section (8 groups of topics), topic, story, article and
  // chunk. Two chunks share the squared weights of their common levels as cosine: about 0.25
  // unrelated, 0.37 same section, 0.52 same topic, 0.65 same story, 0.8 same article.
  const W = { common: 0.25, section: 0.12, topic: 0.15, story: 0.13 };
  const common = randUnit(rng);
  const nSections = 8;
  const sectionDirs = Array.from({ length: nSections }, () => randUnit(rng));
  const topicSums: Float64Array[] = [];
  const storySums: Float64Array[][] = [];
  const topicCentroids: Float64Array[] = [];
  const storyCentroids: Float64Array[][] = [];
  for (let t = 0; t < nTopics; t++) {
    const tsum = combine([
      [W.common, common],
      [W.section, sectionDirs[t % nSections]],
      [W.topic, randUnit(rng)],
    ]);
    topicSums.push(tsum);
    topicCentroids.push(normalize(tsum));
    const sums: Float64Array[] = [];
    for (let s = 0; s < nStories; s++) sums.push(combine([[W.story, randUnit(rng)]], tsum));
    storySums.push(sums);
    storyCentroids.push(sums.map((x) => normalize(x)));
  }

  const articles: ArticleRec[] = [];
  const firstLines: RevisionRec[] = [];
  const editLines: RevisionRec[] = [];
  const firstTimes: number[] = [];
  const bigTieSec = startSec + Math.floor(days * 86400 * 0.37);
  const bigTieMembers = new Set<number>();
  while (bigTieMembers.size < Math.min(7, Math.floor(nArticles / 10))) bigTieMembers.add(rng.int(nArticles));

  for (let a = 0; a < nArticles; a++) {
    const topic = rng.int(nTopics);
    const story = rng.int(nStories);
    const srcIdx = rng.weighted(weights);
    const src = sources[srcIdx];
    const topicName = TOPICS[topic % TOPICS.length] + (topic >= TOPICS.length ? ` ${Math.floor(topic / TOPICS.length) + 1}` : '');
    const artSum = combine([[rng.uniform(0.1, 0.2), randUnit(rng)]], storySums[topic][story]);
    const chunkW = rng.uniform(0.12, 0.3);
    const chunkVec = (): Float64Array => normalize(combine([[chunkW, randUnit(rng)]], artSum));

    let published: number;
    if (bigTieMembers.has(a)) published = bigTieSec;
    else if (firstTimes.length > 0 && rng.chance(0.08)) published = rng.pick(firstTimes);
    else published = startSec + rng.int(days * 86400);
    firstTimes.push(published);

    const title = headline(rng, topicName);
    const nChunks = rng.range(3, 6);
    const sentences: string[] = [];
    for (let i = 1; i < nChunks; i++) sentences.push(sentence(rng, topicName));
    const chunks: ChunkRec[] = [makeChunk(rng, title, chunkVec(), b64Rate)];
    for (const s of sentences) chunks.push(makeChunk(rng, s, chunkVec(), b64Rate));

    const d = new Date(published * 1000);
    const path = `${d.getUTCFullYear()}/${String(d.getUTCMonth() + 1).padStart(2, '0')}/${String(d.getUTCDate()).padStart(2, '0')}`;
    const url = `${src.homepage}${path}/${slug(title)}-${a}`;
    const article: ArticleRec = { index: a, url, source: src.name, homepage: src.homepage, topic, story, revisions: [] };
    articles.push(article);

    const first: RevisionRec = {
      idx: -1,
      line: -1,
      url,
      source: src.name,
      homepage: src.homepage,
      title,
      snippet: snippetOf(sentences),
      text: sentences.join(' '),
      publishedAt: isoSecond(published),
      revisedAt: null,
      eventTime: isoSecond(published),
      eventSec: published,
      revIndex: 0,
      isFirst: true,
      article,
      chunks,
    };
    article.revisions.push(first);
    firstLines.push(first);

    if (rng.chance(editRate)) {
      const nEdits = rng.chance(0.3) ? 2 : 1;
      let prev = first;
      let prevSentences = sentences;
      let t = published;
      for (let e = 1; e <= nEdits; e++) {
        t += rng.range(600, 3 * 86400);
        // An edit rewrites the headline and some sentences; unchanged chunks keep text and vector.
        const newSentences = prevSentences.slice();
        const newChunks: ChunkRec[] = [];
        const newTitle = `${headline(rng, topicName)} (update ${e})`;
        newChunks.push(makeChunk(rng, newTitle, chunkVec(), b64Rate));
        for (let i = 0; i < newSentences.length; i++) {
          if (i === 0 || rng.chance(0.4)) {
            newSentences[i] = `${sentence(rng, topicName).slice(0, -1)}, according to revision ${e}.`;
            newChunks.push(makeChunk(rng, newSentences[i], chunkVec(), b64Rate));
          } else {
            newChunks.push(prev.chunks[i + 1]);
          }
        }
        const rev: RevisionRec = {
          idx: -1,
          line: -1,
          url,
          source: src.name,
          homepage: src.homepage,
          title: newTitle,
          snippet: snippetOf(newSentences, `Updated ${e}: `),
          text: newSentences.join(' '),
          publishedAt: isoSecond(published),
          revisedAt: isoSecond(t),
          eventTime: isoSecond(t),
          eventSec: t,
          revIndex: e,
          isFirst: false,
          article,
          chunks: newChunks,
        };
        article.revisions.push(rev);
        editLines.push(rev);
        prev = rev;
        prevSentences = newSentences;
      }
    }
  }

  // File order: first versions shuffled, each edit inserted somewhere after its predecessor.
  const order: RevisionRec[] = rng.shuffle(firstLines.slice());
  for (const ed of editLines) {
    const prev = ed.article.revisions[ed.revIndex - 1];
    const at = order.indexOf(prev);
    const pos = at + 1 + rng.int(order.length - at);
    order.splice(pos, 0, ed);
  }
  order.forEach((r, i) => {
    r.idx = i;
    r.line = i + 1;
  });

  const counts = new Map<number, number>();
  for (const r of firstLines) counts.set(r.eventSec, (counts.get(r.eventSec) ?? 0) + 1);
  const tieGroups = [...counts.entries()]
    .filter(([, n]) => n > 1)
    .map(([sec, size]) => ({ eventTime: isoSecond(sec), size }))
    .sort((a, b) => (a.eventTime < b.eventTime ? -1 : 1));

  return {
    seed,
    sources: sources.filter((s) => articles.some((a) => a.source === s.name)),
    topicCentroids,
    storyCentroids,
    articles,
    revisions: order,
    tieGroups,
    bigTie: isoSecond(bigTieSec),
  };
}

function vectorJson(raw: Float32Array): string {
  const parts = new Array<string>(raw.length);
  for (let i = 0; i < raw.length; i++) parts[i] = raw[i].toPrecision(7);
  return `[${parts.join(',')}]`;
}

/** base64 of the vector as little-endian float32. */
export function vectorB64(raw: ArrayLike<number>): string {
  const buf = Buffer.alloc(raw.length * 4);
  for (let i = 0; i < raw.length; i++) buf.writeFloatLE(raw[i], i * 4);
  return buf.toString('base64');
}

/** The JSONL line of one revision, exactly as written. */
export function revisionLine(r: RevisionRec): string {
  const head: Record<string, unknown> = {
    url: r.url,
    source: r.source,
    source_homepage: r.homepage,
    title: r.title,
    snippet: r.snippet,
    text: r.text,
    published_at: r.publishedAt,
  };
  if (r.revisedAt) head.revised_at = r.revisedAt;
  const chunks = r.chunks
    .map((c) =>
      c.encoding === 'b64'
        ? `{"text":${JSON.stringify(c.text)},"vector_b64":"${vectorB64(c.raw)}"}`
        : `{"text":${JSON.stringify(c.text)},"vector":${vectorJson(c.raw)}}`,
    )
    .join(',');
  const h = JSON.stringify(head);
  return `${h.slice(0, -1)},"chunks":[${chunks}]}`;
}

/** Writes the corpus as JSONL (one revision a line, file order, trailing newline). */
export function writeCorpusJsonl(corpus: Corpus, path: string): void {
  const fd = openSync(path, 'w');
  try {
    let buf = '';
    for (const r of corpus.revisions) {
      buf += `${revisionLine(r)}\n`;
      if (buf.length > 4_000_000) {
        writeSync(fd, buf);
        buf = '';
      }
    }
    if (buf) writeSync(fd, buf);
  } finally {
    closeSync(fd);
  }
}

/** Writes arbitrary lines (strings or objects) as a JSONL file. */
export function writeLines(path: string, lines: (string | object)[]): void {
  const fd = openSync(path, 'w');
  try {
    for (const l of lines) writeSync(fd, `${typeof l === 'string' ? l : JSON.stringify(l)}\n`);
  } finally {
    closeSync(fd);
  }
}

/** A plain unit vector as a JSON-ready number array. */
export function toArray(v: ArrayLike<number>): number[] {
  return Array.from(v);
}
