/**
 * A large benchmark corpus, built once and cached: BENCH_CHUNKS chunks (default 300,000) of
 * clustered 1024-d unit vectors, written straight into LMDB (no JSONL), then synced into the
 * native engine, sealed and filed in the relevance index by the shipped maintenance path. The data
 * directory lives in BENCH_DATA_DIR (default /tmp/newsmatch-bench-<chunks>) and is reused
 * when its marker file (written last) says it is complete; delete the folder to rebuild.
 *
 * The vectors follow test/helpers/corpus.ts: a weighted sum of independent random directions,
 * one per level a chunk belongs to (a common anisotropic direction, its section of topics,
 * topic, story, article and chunk), so unrelated chunks score about 0.25, same topic about
 * 0.5, same story 0.65, same article 0.8. Six sources with skewed weights, times spread
 * uniformly over 2025, about 20% of articles edited once or twice (an edit replaces the
 * headline chunk and some others, keeping the rest). Vectors are made one article at a time
 * and never held together.
 *
 * Run alone to build: `BENCH_CHUNKS=100000 npx tsx bench/big-corpus.ts`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { normalise } from '../src/search/index.js';
import { openService, type Service } from '../src/service.js';
import { Store, type RevisionInput } from '../src/store/index.js';
import { DEFAULT_SOURCES, SOURCE_WEIGHTS } from '../test/helpers/corpus.js';
import { Rng } from '../test/helpers/rng.js';
import { envInt } from './corpus.js';

const DIM = 1024;
export const BENCH_SEED = 20250101;
/** 2025-01-01T00:00:00Z: the corpus covers this year. */
export const START_SEC = 1_735_689_600;
export const DAYS = 365;

// The tests' outlets and their skew (Café Économie is the selective one).
const SOURCES = DEFAULT_SOURCES;
const WORDS = ['port', 'rates', 'wildfire', 'chips', 'rail', 'vaccine', 'election', 'housing', 'drought', 'launch', 'tariffs', 'teachers'];

export interface BigCorpusInfo {
  chunks: number;
  revisions: number;
  articles: number;
  seed: number;
  /** Milliseconds for each build phase, as first built. */
  buildMs: { generateAndWrite: number; sync: number; flush: number; total: number };
  builtAt: string;
}

/**
 * 300,000 by default; BENCH_CHUNKS=1000000 is the size (its records take ~90 s to write
 * on 2 cores, the engine ~3 minutes to build from them).
 */
export const benchChunks = (): number => envInt('BENCH_CHUNKS', 300_000);
export const benchDataDir = (chunks = benchChunks()): string => process.env.BENCH_DATA_DIR ?? `/tmp/newsmatch-bench-${chunks}`;
const MARKER = 'bench-corpus.json';
const RECORDS = 'bench-records.json';

/**
 * Gaussian noise from a fixed table indexed by a fast xorshift: 1024 Box-Muller draws per
 * vector for a million vectors would take most of a minute, and the table's values are
 * themselves standard normals, so the sums below keep the corpus' cosine structure.
 */
class Noise {
  readonly table: Float64Array;
  #s: number;
  constructor(rng: Rng, bits = 20) {
    this.table = new Float64Array(1 << bits);
    for (let i = 0; i < this.table.length; i++) this.table[i] = rng.gauss();
    this.#s = (rng.int(2 ** 31) | 1) >>> 0;
  }
  /** A random unit vector (float64). */
  unit(): Float64Array {
    const out = new Float64Array(DIM);
    const mask = this.table.length - 1;
    let s = this.#s;
    let sum = 0;
    for (let i = 0; i < DIM; i++) {
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      const v = this.table[(s >>> 0) & mask];
      out[i] = v;
      sum += v * v;
    }
    this.#s = s;
    const inv = 1 / Math.sqrt(sum);
    for (let i = 0; i < DIM; i++) out[i] *= inv;
    return out;
  }
}

/** base + sqrt(w) * unit, in place on a copy. */
export function add(base: Float64Array, w: number, unit: Float64Array): Float64Array {
  const out = Float64Array.from(base);
  const k = Math.sqrt(w);
  for (let i = 0; i < DIM; i++) out[i] += k * unit[i];
  return out;
}

export function toUnitF32(v: Float64Array): Float32Array {
  let s = 0;
  for (let i = 0; i < DIM; i++) s += v[i] * v[i];
  const inv = 1 / Math.sqrt(s);
  const out = new Float32Array(DIM);
  for (let i = 0; i < DIM; i++) out[i] = v[i] * inv;
  return out;
}

/**
 * The corpus' directions, drawn first from its seed: a common direction every text shares,
 * sections, and per topic its own sum and four story sums. Articles are drawn after these from
 * the same generators, so generate() and the benchmark queries see the same model.
 */
function corpusModel(seed: number) {
  const rng = new Rng(seed);
  const noise = new Noise(rng);
  const W = { common: 0.25, section: 0.12, topic: 0.15, story: 0.13 };
  const nTopics = 40;
  const nStories = 4;
  const nSections = 8;
  const common = noise.unit();
  const sections = Array.from({ length: nSections }, () => noise.unit());
  const topicSums: Float64Array[] = [];
  const storySums: Float64Array[][] = [];
  for (let t = 0; t < nTopics; t++) {
    const c = Float64Array.from(common, (x) => x * Math.sqrt(W.common));
    const tsum = add(add(c, W.section, sections[t % nSections]), W.topic, noise.unit());
    topicSums.push(tsum);
    storySums.push(Array.from({ length: nStories }, () => add(tsum, W.story, noise.unit())));
  }
  return { rng, noise, W, nTopics, nStories, common, topicSums, storySums };
}

/**
 * Yields batches of revisions (first revision of each article followed by its edits, so an
 * edit always finds its article stored) until about `target` chunks have been made.
 */
function* generate(target: number, seed: number, batchRevisions = 256): Generator<{ batch: RevisionInput[]; chunks: number; articles: number }> {
  const { rng, noise, nTopics, nStories, storySums } = corpusModel(seed);
  let chunks = 0;
  let articles = 0;
  let batch: RevisionInput[] = [];
  while (chunks < target) {
    const a = articles++;
    const topic = rng.int(nTopics);
    const story = rng.int(nStories);
    const src = SOURCES[rng.weighted(SOURCE_WEIGHTS)];
    const artSum = add(storySums[topic][story], rng.uniform(0.1, 0.2), noise.unit());
    const chunkW = rng.uniform(0.12, 0.3);
    const chunkVec = () => toUnitF32(add(artSum, chunkW, noise.unit()));
    const published = START_SEC + rng.int(DAYS * 86400);
    const word = WORDS[topic % WORDS.length];
    const url = `${src.homepage}${a}/${word}-${topic}-${story}`;
    const n = rng.range(3, 6);
    let texts = Array.from({ length: n }, (_, i) => `${word} ${topic}.${story} article ${a} part ${i}`);
    let vectors = Array.from({ length: n }, chunkVec);
    const title = `${word} story ${story}: article ${a}`;
    batch.push({
      url,
      source: src.name,
      sourceHomepage: src.homepage,
      title,
      body: `${title}. A short generated snippet about ${word}.`,
      text: texts.join(' '),
      publishedAt: published,
      chunks: texts.map((text, i) => ({ text, vector: vectors[i] })),
    });
    chunks += n;
    if (rng.chance(0.2)) {
      const edits = rng.chance(0.3) ? 2 : 1;
      let t = published;
      for (let e = 1; e <= edits && chunks < target; e++) {
        t += rng.range(600, 3 * 86400);
        texts = texts.slice();
        vectors = vectors.slice();
        for (let i = 0; i < n; i++) {
          if (i === 0 || rng.chance(0.4)) {
            texts[i] = `${texts[i]} (update ${e})`;
            vectors[i] = chunkVec();
          }
        }
        batch.push({
          url,
          source: src.name,
          sourceHomepage: src.homepage,
          title: `${title} (update ${e})`,
          body: `Updated ${e}: ${title}.`,
          text: texts.join(' '),
          publishedAt: published,
          revisedAt: t,
          chunks: texts.map((text, i) => ({ text, vector: vectors[i] })),
        });
        chunks += n;
      }
    }
    if (batch.length >= batchRevisions || chunks >= target) {
      yield { batch, chunks, articles };
      batch = [];
    }
  }
}

export function benchConfig(dir: string, env: Record<string, string> = {}) {
  return loadConfig({ DATA_DIR: dir, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', ...env });
}

/** Reads the marker of a complete corpus, or null. */
export function readMarker(dir: string): BigCorpusInfo | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, MARKER), 'utf8')) as BigCorpusInfo;
  } catch {
    return null;
  }
}

interface RecordsInfo {
  chunks: number;
  revisions: number;
  articles: number;
  seed: number;
  ms: number;
}

/**
 * Phase one: the records in LMDB (`dir/lmdb`), written once; its marker is written last. The
 * engine (phase two) is derived from them and can be deleted and rebuilt on its own.
 */
async function ensureRecords(chunks: number, dir: string): Promise<RecordsInfo> {
  const file = path.join(dir, RECORDS);
  try {
    const have = JSON.parse(fs.readFileSync(file, 'utf8')) as RecordsInfo;
    if (have.chunks >= chunks) return have;
  } catch {
    // absent or unreadable: build
  }
  if (fs.existsSync(dir)) {
    console.log(`${dir} is incomplete: removing it and rebuilding`);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`writing a corpus of ${chunks} chunks to ${dir}/lmdb…`);
  const t0 = performance.now();
  const store = new Store(path.join(dir, 'lmdb'));
  let revisions = 0;
  let articles = 0;
  let written = 0;
  let lastPrint = 0;
  for (const step of generate(chunks, BENCH_SEED)) {
    const out = store.writeRevisions(step.batch);
    const bad = out.find((o) => o.status !== 'new');
    if (bad) throw new Error(`generated revision not stored: ${JSON.stringify(bad)}`);
    revisions += step.batch.length;
    articles = step.articles;
    written = step.chunks;
    const now = performance.now();
    if (now - lastPrint > 5000 || step.chunks >= chunks) {
      lastPrint = now;
      const s = (now - t0) / 1000;
      console.log(`  written ${step.chunks} chunks, ${revisions} revisions (${s.toFixed(0)} s, ${(step.chunks / s).toFixed(0)} chunks/s)`);
    }
  }
  await store.close();
  const info: RecordsInfo = { chunks: written, revisions, articles, seed: BENCH_SEED, ms: performance.now() - t0 };
  fs.writeFileSync(file, JSON.stringify(info, null, 2));
  return info;
}

/**
 * Builds the corpus in `dir` unless a complete one is there: the records (phase one), then the
 * engine from them by the shipped path (sync, index, seal, save). Returns its marker.
 */
export async function ensureBigCorpus(chunks = benchChunks(), dir = benchDataDir(chunks)): Promise<BigCorpusInfo> {
  const have = readMarker(dir);
  if (have && have.chunks >= chunks) {
    console.log(`using cached corpus in ${dir}: ${have.chunks} chunks, ${have.revisions} revisions (built in ${(have.buildMs.total / 1000).toFixed(0)} s)`);
    return have;
  }
  const t0 = performance.now();
  const records = await ensureRecords(chunks, dir);
  const tWritten = performance.now();
  // A partial engine from an interrupted build is rebuilt whole.
  fs.rmSync(path.join(dir, 'engine'), { recursive: true, force: true });
  console.log(`building the search engine over ${records.chunks} chunks…`);
  // The build logs at info so the index's training, save and recall check show.
  const service = await openService(loadConfig({ DATA_DIR: dir, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' }));
  const tSynced = performance.now();
  console.log(`  engine caught up with LMDB in ${((tSynced - tWritten) / 1000).toFixed(1)} s; filing in the index…`);
  // The open already queued a background round that indexes everything, so flush()'s own
  // progress callback may never fire: poll the engine instead.
  const timer = setInterval(() => {
    const st = service.engine.stats();
    const s = (performance.now() - tSynced) / 1000;
    const done = st.indexRows;
    const phase = st.indexPending > 0 || st.indexLists === 0 ? 'filing' : 'seal + save';
    console.log(`  ${done}/${st.nextLabel} chunks filed in ${st.indexLists} lists (${s.toFixed(0)} s, ${(done / s).toFixed(0)} chunks/s; ${phase})`);
  }, 15_000);
  await service.maintenance.flush();
  clearInterval(timer);
  const tFlushed = performance.now();
  const stats = service.engine.stats();
  await service.close();
  const info: BigCorpusInfo = {
    chunks: stats.nextLabel,
    revisions: records.revisions,
    articles: records.articles,
    seed: BENCH_SEED,
    buildMs: { generateAndWrite: records.ms, sync: tSynced - tWritten, flush: tFlushed - tSynced, total: records.ms + (tFlushed - tWritten) },
    builtAt: new Date().toISOString(),
  };
  console.log(`  engine: ${JSON.stringify(stats)}`);
  fs.writeFileSync(path.join(dir, MARKER), JSON.stringify(info, null, 2));
  console.log(
    `built in ${(info.buildMs.total / 1000).toFixed(0)} s (generate + LMDB ${(info.buildMs.generateAndWrite / 1000).toFixed(0)} s, ` +
      `engine sync ${(info.buildMs.sync / 1000).toFixed(0)} s, index + seal + save ${(info.buildMs.flush / 1000).toFixed(0)} s; ` +
      `this run ${((performance.now() - t0) / 1000).toFixed(0)} s)`,
  );
  return info;
}

/**
 * Query vectors near real chunks, as a paraphrase would be: a stored chunk vector (read from
 * LMDB) plus uniform noise of about 0.18 in norm, so the source chunk scores about 0.98.
 * Deterministic from `seed`.
 */
export function benchQueries(service: Service, n: number, seed = 99, noise = 0.02): { label: number; query: Float32Array }[] {
  const rng = new Rng(seed);
  const labels = service.store.nextLabel();
  const out: { label: number; query: Float32Array }[] = [];
  for (let i = 0; i < n; i++) {
    const label = rng.int(labels);
    const base = service.store.vector(label);
    out.push({ label, query: normalise(Array.from(base, (v) => v + (rng.next() - 0.5) * noise))! });
  }
  return out;
}

/**
 * Classes of queries as users send them: none is a stored chunk.
 * - story: an unseen article's sentence about one story (the story's direction, an article's
 *   own direction and a sentence's, as the corpus draws them): its story's chunks score ~0.65.
 * - paraphrase: a stored chunk rewritten (noise of norm 0.62): the chunk scores ~0.85.
 * - topic: a broad query about a topic (its direction with noise, no story).
 * - mixed: a sentence about two stories of two topics at once.
 * - off-topic: a text about nothing in the corpus, sharing only the common direction every text
 *   has (it scores ~0.25-0.35 against everything, as unrelated texts do).
 * - random: a uniform random unit vector (a vector from another model, or garbage).
 */
export const QUERY_CLASSES = ['story', 'paraphrase', 'topic', 'mixed', 'off-topic', 'random'] as const;
export type QueryClass = (typeof QUERY_CLASSES)[number];
/** The classes whose queries are about the corpus (the others are far from it by design). */
export const NEAR_CLASSES: readonly QueryClass[] = ['story', 'paraphrase', 'topic', 'mixed'];

export function benchQueryClasses(
  service: Service,
  perClass: number,
  seed = 4242,
  classes: readonly QueryClass[] = QUERY_CLASSES,
): { cls: QueryClass; query: Float32Array }[] {
  const m = corpusModel(BENCH_SEED);
  const rng = new Rng(seed);
  const noise = new Noise(rng);
  const labels = service.store.nextLabel();
  const story = () => m.storySums[rng.int(m.nTopics)][rng.int(m.nStories)];
  const make: Record<QueryClass, () => Float64Array> = {
    story: () => add(add(story(), rng.uniform(0.1, 0.2), noise.unit()), rng.uniform(0.12, 0.3), noise.unit()),
    paraphrase: () => add(Float64Array.from(service.store.vector(rng.int(labels))), 0.62 * 0.62, noise.unit()),
    topic: () => add(m.topicSums[rng.int(m.nTopics)], 0.25, noise.unit()),
    mixed: () => {
      const t1 = rng.int(m.nTopics);
      const t2 = (t1 + 1 + rng.int(m.nTopics - 1)) % m.nTopics;
      const a = m.storySums[t1][rng.int(m.nStories)];
      const b = m.storySums[t2][rng.int(m.nStories)];
      return add(
        Float64Array.from(a, (x, i) => x + b[i]),
        0.3,
        noise.unit(),
      );
    },
    'off-topic': () =>
      add(
        Float64Array.from(m.common, (x) => x * Math.sqrt(m.W.common)),
        0.75,
        noise.unit(),
      ),
    random: () => noise.unit(),
  };
  const out: { cls: QueryClass; query: Float32Array }[] = [];
  for (const cls of classes) for (let i = 0; i < perClass; i++) out.push({ cls, query: toUnitF32(make[cls]()) });
  return out;
}

export const sourceNames = SOURCES.map((s) => s.name);

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv[2] === 'records') await ensureRecords(benchChunks(), benchDataDir());
  else await ensureBigCorpus();
}
