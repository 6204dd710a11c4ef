/**
 * LMDB, the source of truth. Every record the service has lives here; the vector index and
 * the in-memory catalog are rebuilt from it.
 *
 * Databases (key → value):
 *   meta        'nextOrd' | 'nextLabel' | 'schema' → number;  'storeId' → string
 *   articles    canonical URL → { ords: number[], sourceId }           (ords[0] is the first revision)
 *   revisions   ord (uint32) → RevisionRecord                            (ord: dense, in store order)
 *   revIds      revision UUID → ord
 *   texts       ord → full article text (stored, never returned)
 *   chunks      label (uint32) → { ord, text }                           (labels: dense, a revision's are contiguous)
 *   vectors     label → 1024 little-endian float32, L2-normalised (binary)
 *   timeAll     [event_time, id] → ord                                   (keyset paging, include_edits=true)
 *   timeFirst   [event_time, id] → ord                                   (first revisions only)
 *   sources     name → SourceRecord
 *   unembedded  ord → true                                               (revisions stored without vectors, to embed)
 *   rendered    ord → the revision as a response shows it, JSON (binary)     (its ArticleFields and chunk texts: `Rendered`;
 *                                                                        the service keeps a copy in memory: rendered-mirror.ts)
 *
 * The folders with records of their own open their databases on `root` themselves (platform/:
 * keys.ts, journal.ts; jobs/, ingest/).
 *
 * A revision stored without vectors (text mode off) has no chunks until `attachChunks` gives
 * it labels past every label so far, so labels stay dense and the engine only ever appends.
 */
import { createHash, randomUUID } from 'node:crypto';
import { MessageChannel } from 'node:worker_threads';
import { open, type Database, type RootDatabase } from 'lmdb';
import { Piscina } from 'piscina';
import { DIMS } from '../dims.js';
import { formatTime } from '../time.js';
import { workerFile } from '../worker-file.js';
import { type FillTask, type MirrorArena, RenderedMirror } from './rendered-mirror.js';

export interface RevisionRecord {
  id: string;
  url: string;
  sourceId: number;
  title: string;
  body: string;
  /** Unix seconds. */
  eventTime: number;
  first: boolean;
  labelStart: number;
  labelCount: number;
  /** sha256 of title, snippet and text: with url and event_time, a revision's identity. */
  hash: string;
}

export interface SourceRecord {
  id: number;
  name: string;
  homepage: string | null;
  articleCount: number;
  /** Unix seconds of the newest revision, or null. */
  lastEventTime: number | null;
}

/** What the API shows of a stored article, wherever it lists one (a match item, a /v1/news result). */
export interface ArticleFields {
  id: string;
  title: string;
  body: string;
  source_name: string;
  source_url: string;
  event_time: string;
}

/** The fields every article row shows, from its revision. */
export function articleFields(rev: RevisionRecord, sourceNames: Map<number, string>): ArticleFields {
  return articleOf(rev, sourceNames.get(rev.sourceId) ?? '');
}

const articleOf = (rev: RevisionRecord, sourceName: string): ArticleFields => ({
  id: rev.id,
  title: rev.title,
  body: rev.body,
  source_name: sourceName,
  source_url: rev.url,
  event_time: formatTime(rev.eventTime),
});

/**
 * A lone surrogate (JSON's `"\ud800"` parses to one) stored as U+FFFD: msgpack would read it
 * back as one U+FFFD or three depending on the string's length, and the rendered JSON as itself.
 */
const wellFormed = (s: string): string => (s as string & { toWellFormed(): string }).toWellFormed();

/**
 * A revision as a response shows it, rendered once when stored: its ArticleFields as a JSON
 * object and each chunk's text as a JSON string, so a match item is one read and no
 * serialisation (match/match.ts splices the pieces). Layout, little-endian u32s: object length,
 * labelStart, chunk count, each chunk string's length; then the object, then the strings.
 */
const articleBytes = (rev: RevisionRecord, sourceName: string): Buffer => Buffer.from(JSON.stringify(articleOf(rev, sourceName)));

function render(rev: RevisionRecord, sourceName: string, chunkTexts: string[]): Buffer {
  const article = articleBytes(rev, sourceName);
  const chunks = chunkTexts.map((t) => Buffer.from(JSON.stringify(t)));
  const head = Buffer.alloc(12 + 4 * chunks.length);
  head.writeUInt32LE(article.length, 0);
  head.writeUInt32LE(rev.labelStart, 4);
  head.writeUInt32LE(chunks.length, 8);
  chunks.forEach((c, i) => head.writeUInt32LE(c.length, 12 + 4 * i));
  return Buffer.concat([head, article, ...chunks]);
}

/** A rendered revision's pieces (views into one buffer): the article object, and one chunk's string. */
export interface Rendered {
  /** `{"id":…,"event_time":…}`: its last byte is the closing brace. */
  article: Buffer;
  /** The asked label's text as a JSON string; null when no label was asked. */
  chunk: Buffer | null;
}

function piecesOf(b: Buffer, label: number | null): Rendered | undefined {
  const count = b.readUInt32LE(8);
  let pos = 12 + 4 * count;
  const article = b.subarray(pos, pos + b.readUInt32LE(0));
  if (label === null) return { article, chunk: null };
  const i = label - b.readUInt32LE(4);
  // A label of another revision: the caller falls back to reading the chunk record.
  if (i < 0 || i >= count) return undefined;
  pos += article.length;
  for (let j = 0; j < i; j++) pos += b.readUInt32LE(12 + 4 * j);
  return { article, chunk: b.subarray(pos, pos + b.readUInt32LE(12 + 4 * i)) };
}

/**
 * Fewer revisions than this are not copied into the mirror by a thread, only as they are read:
 * a small store's pages stay in the CPU's caches anyway, and the thread's start costs more.
 */
const FILL_MIN_REVISIONS = 20_000;

/** Meta key set once every revision is `rendered` (stores written before it existed are filled at open). */
const RENDERED_DONE = 'renderedDone';

interface ArticleRecord {
  ords: number[];
  sourceId: number;
}

/** One chunk of a revision: its text and its L2-normalised bge-m3 vector. */
export interface RevisionChunk {
  text: string;
  vector: Float32Array;
}

/** One revision to store, already validated and normalised by the caller. */
export interface RevisionInput {
  url: string;
  source: string;
  sourceHomepage?: string;
  title: string;
  body: string;
  text: string;
  publishedAt: number;
  revisedAt?: number;
  /** Empty: stored without vectors (text mode off), to be embedded later. */
  chunks: RevisionChunk[];
}

export type WriteOutcome = { status: 'new'; ord: number; first: boolean } | { status: 'unchanged' } | { status: 'rejected'; reason: string };

/** A write path's outcome: the store's, or the cluster's (`ord` null: appended to the revision log, stored once a node applies it; src/cluster). */
export type Written = WriteOutcome | { status: 'new'; ord: null; first: boolean };

/** Where import and the poller write revisions: this store, or the cluster's revision log. */
export type RevisionWriter = (inputs: RevisionInput[]) => Promise<Written[]>;

export const contentHash = (title: string, body: string, text: string): string =>
  createHash('sha256').update(title).update('\0').update(body).update('\0').update(text).digest('hex');

/** A revision whose outcome is decided: what `Store.applyDecided` stores as it is. */
export interface DecidedRevision {
  input: RevisionInput;
  id: string;
  eventTime: number;
  first: boolean;
  hash: string;
}

/** What `decideRevision` needs of a stored article: its source's name and its revisions, first first. */
export interface ArticleHistory {
  source: string;
  revisions: { hash: string; eventTime: number }[];
}

/**
 * Whether `input` is a new revision of its article (and its event time), an unchanged one, or
 * one to reject: the one rule for every write path, the store's own and the cluster's log
 * (src/cluster), so both decide alike.
 */
export function decideRevision(
  input: RevisionInput,
  hash: string,
  article: ArticleHistory | undefined,
): { status: 'new'; eventTime: number; first: boolean } | { status: 'unchanged' } | { status: 'rejected'; reason: string } {
  if (!article) return { status: 'new', eventTime: input.publishedAt, first: true };
  const first = article.revisions[0];
  if (first.hash === hash && first.eventTime === input.publishedAt) return { status: 'unchanged' };
  if (input.revisedAt !== undefined && article.revisions.some((r) => r.hash === hash && r.eventTime === input.revisedAt)) {
    return { status: 'unchanged' };
  }
  if (input.source !== article.source) {
    return { status: 'rejected', reason: `source "${input.source}" differs from the stored article's source` };
  }
  if (input.revisedAt === undefined) {
    return { status: 'rejected', reason: 'revised_at is required for a later revision of an article already stored' };
  }
  if (input.revisedAt < first.eventTime) {
    return { status: 'rejected', reason: "revised_at is before the article's first publication" };
  }
  return { status: 'new', eventTime: input.revisedAt, first: false };
}

export class Store {
  readonly root: RootDatabase;
  readonly meta: Database<number, string>;
  readonly articles: Database<ArticleRecord, string>;
  readonly revisions: Database<RevisionRecord, number>;
  readonly revIds: Database<number, string>;
  readonly texts: Database<string, number>;
  readonly chunks: Database<{ ord: number; text: string }, number>;
  readonly vectors: Database<Buffer, number>;
  readonly timeAll: Database<number, [number, string]>;
  readonly timeFirst: Database<number, [number, string]>;
  readonly sources: Database<SourceRecord, string>;
  readonly unembedded: Database<true, number>;
  readonly #rendered: Database<Buffer, number>;
  #mirror: RenderedMirror | null = null;
  #fill: { stop: Int32Array; done: Promise<unknown> } | null = null;

  constructor(readonly path: string) {
    this.root = open({ path, maxDbs: 64, mapSize: 2 ** 34 });
    const uint = { keyEncoding: 'uint32' as const };
    this.meta = this.root.openDB({ name: 'meta' });
    this.articles = this.root.openDB({ name: 'articles' });
    this.revisions = this.root.openDB({ name: 'revisions', ...uint });
    this.revIds = this.root.openDB({ name: 'revIds' });
    this.texts = this.root.openDB({ name: 'texts', ...uint });
    this.chunks = this.root.openDB({ name: 'chunks', ...uint });
    this.vectors = this.root.openDB({ name: 'vectors', encoding: 'binary', ...uint });
    this.timeAll = this.root.openDB({ name: 'timeAll' });
    this.timeFirst = this.root.openDB({ name: 'timeFirst' });
    this.sources = this.root.openDB({ name: 'sources' });
    this.unembedded = this.root.openDB({ name: 'unembedded', ...uint });
    this.#rendered = this.root.openDB({ name: 'rendered', encoding: 'binary', ...uint });
  }

  /**
   * Revision `ord` as a response shows it, with `label`'s text as its best chunk (null: none),
   * as rendered when stored. A revision a store of an older version wrote, before
   * `renderArticles` filled it in, is rendered here from its records. The pieces may view
   * lmdb-js's read buffer, valid until this store's next read: copy them before another (a
   * response's 50 reads then allocate nothing, which kept the garbage collector busy). With a
   * mirror (`mirrorRendered`) they are read from memory where it has them.
   */
  rendered(ord: number, label: number | null): Rendered | undefined {
    const mirror = this.#mirror;
    if (mirror) {
      const mirrored = mirror.get(ord);
      const pieces = mirrored && piecesOf(mirrored, label);
      if (pieces) return pieces;
      // Copied before the revision had chunks (attached since by another process): read it again.
      if (mirrored && mirrored.readUInt32LE(8) === 0) mirror.drop(ord);
    }
    const stored = this.#rendered.getBinaryFast(ord);
    const pieces = stored && piecesOf(stored, label);
    if (pieces) {
      mirror?.put(ord, stored);
      return pieces;
    }
    const rev = this.revisions.get(ord);
    if (!rev) return undefined;
    const article = articleBytes(rev, this.#sourceName(rev.sourceId));
    return { article, chunk: label === null ? null : Buffer.from(JSON.stringify(this.chunks.get(label)?.text ?? null)) };
  }

  /** What the in-memory copy of the rendered revisions holds; null without one (`mirrorRendered`). */
  mirrored(): { count: number; bytes: number } | null {
    return this.#mirror && { count: this.#mirror.count, bytes: this.#mirror.bytes };
  }

  /** The rendered revisions, newest first (rendered-fill-worker.ts). */
  *renderedNewestFirst(): Iterable<{ key: number; value: Buffer }> {
    let last = -1;
    for (const entry of this.#rendered.getRange({ reverse: true })) {
      last = entry.key;
      yield entry;
    }
    // lmdb-js's reverse range over uint32 keys ends above key 0 (its open end reads as 0, exclusive).
    const first = last === 0 ? undefined : this.#rendered.getBinary(0);
    if (first) yield { key: 0, value: first };
  }

  /**
   * Keeps the rendered revisions in memory as well, up to `capBytes` (rendered-mirror.ts): a
   * revision is copied in as it is read, and where the store holds `minToFill` revisions or
   * more a thread copies them all in, newest first. Resolves when that thread is done (at
   * once without one), with what the mirror holds.
   */
  mirrorRendered(capBytes: number, minToFill = FILL_MIN_REVISIONS): Promise<{ count: number; bytes: number }> {
    if (this.#mirror) throw new Error('the rendered revisions are mirrored already');
    const mirror = new RenderedMirror(capBytes);
    this.#mirror = mirror;
    if (this.nextOrd() < minToFill) return Promise.resolve({ count: 0, bytes: 0 });
    const stop = new Int32Array(new SharedArrayBuffer(4));
    const { port1, port2 } = new MessageChannel();
    const arrived = new Promise<void>((resolve) => {
      port1.on('message', (arena: MirrorArena | null) => {
        if (arena) mirror.adopt(arena);
        else resolve();
      });
    });
    const pool = new Piscina({ ...workerFile(import.meta.url, 'rendered-fill-worker'), minThreads: 0, maxThreads: 1 });
    const task: FillTask = { path: this.path, capBytes, stop, port: port2 };
    // The arenas travel on their own port: the task's end can overtake them, the null cannot.
    const done = Promise.all([pool.run(task, { transferList: [port2] }), arrived])
      .then(() => ({ count: mirror.count, bytes: mirror.bytes }))
      .finally(async () => {
        port1.close();
        await pool.destroy();
      });
    this.#fill = { stop, done };
    return done;
  }

  /**
   * Renders every revision stored before `rendered` existed, a batch of revisions a
   * transaction; once done, a marker makes later opens skip the walk. Returns how many it
   * rendered; `progress` hears after each batch.
   */
  renderArticles(progress?: (done: number, total: number) => void): number {
    if (this.meta.get(RENDERED_DONE)) return 0;
    const total = this.nextOrd();
    const names = this.sourceNames();
    const BATCH = 10_000;
    let count = 0;
    for (let from = 0; from < total; from += BATCH) {
      count += this.root.transactionSync(() => {
        let n = 0;
        for (const { key, value } of this.revisions.getRange({ start: from, end: Math.min(from + BATCH, total) })) {
          if (this.#rendered.doesExist(key)) continue;
          this.#rendered.putSync(key, render(value, names.get(value.sourceId) ?? '', this.#chunkTexts(value)));
          n++;
        }
        return n;
      });
      progress?.(Math.min(from + BATCH, total), total);
    }
    this.meta.putSync(RENDERED_DONE, 1);
    return count;
  }

  #chunkTexts(rev: RevisionRecord): string[] {
    return Array.from({ length: rev.labelCount }, (_, i) => this.chunks.get(rev.labelStart + i)!.text);
  }

  /**
   * Renews the read snapshot, so writes by other processes (an import, `keys create`) become
   * visible; lmdb-js otherwise keeps reading from the snapshot it has.
   */
  refresh(): void {
    this.root.resetReadTxn();
  }

  /** This store's identity, made at its first open: what caches built from it are checked against. */
  storeId(): string {
    let id = this.meta.get('storeId') as unknown as string | undefined;
    if (id === undefined) {
      id = randomUUID();
      this.meta.putSync('storeId', id as unknown as number);
    }
    return id;
  }

  /** Revisions stored so far (ords are 0 … nextOrd-1). */
  nextOrd(): number {
    return this.meta.get('nextOrd') ?? 0;
  }

  /** Chunk labels assigned so far (labels are 0 … nextLabel-1). */
  nextLabel(): number {
    return this.meta.get('nextLabel') ?? 0;
  }

  /**
   * Stores a batch of revisions in one durable transaction, in order. A revision equal to a
   * stored one (same URL, content and event_time) changes nothing. Returns one outcome per input.
   */
  writeRevisions(inputs: RevisionInput[]): WriteOutcome[] {
    return this.root.transactionSync(() => {
      let nextOrd = this.nextOrd();
      let nextLabel = this.nextLabel();
      const outcomes = inputs.map((input) => {
        const outcome = this.#writeOne(input, nextOrd, nextLabel);
        if (outcome.status === 'new') {
          nextOrd += 1;
          nextLabel += input.chunks.length;
        }
        return outcome;
      });
      this.meta.putSync('nextOrd', nextOrd);
      this.meta.putSync('nextLabel', nextLabel);
      return outcomes;
    });
  }

  #writeOne(input: RevisionInput, ord: number, labelStart: number): WriteOutcome {
    const hash = contentHash(input.title, input.body, input.text);
    const article = this.articles.get(input.url);
    const decided = decideRevision(
      input,
      hash,
      article && { source: this.#sourceName(article.sourceId), revisions: article.ords.map((o) => this.revisions.get(o)!) },
    );
    if (decided.status !== 'new') return decided;
    this.#put(input, { id: randomUUID(), eventTime: decided.eventTime, first: decided.first, hash }, ord, labelStart);
    return { status: 'new', ord, first: decided.first };
  }

  /** Stores one decided revision as `ord`, its chunks from `labelStart`, and files it under its article and source. */
  #put(input: RevisionInput, decided: { id: string; eventTime: number; first: boolean; hash: string }, ord: number, labelStart: number): void {
    const { id, eventTime, first: isFirst, hash } = decided;
    const article = this.articles.get(input.url);
    let source = this.sources.get(input.source);
    if (!source) {
      const sourceId = this.meta.get('nextSourceId') ?? 0;
      this.meta.putSync('nextSourceId', sourceId + 1);
      source = { id: sourceId, name: input.source, homepage: null, articleCount: 0, lastEventTime: null };
    }
    source = {
      ...source,
      homepage: input.sourceHomepage ?? source.homepage,
      articleCount: source.articleCount + (article ? 0 : 1),
      lastEventTime: Math.max(source.lastEventTime ?? eventTime, eventTime),
    };
    this.sources.putSync(input.source, source);
    const record: RevisionRecord = {
      id,
      url: wellFormed(input.url),
      sourceId: source.id,
      title: wellFormed(input.title),
      body: wellFormed(input.body),
      eventTime,
      first: isFirst,
      labelStart,
      labelCount: input.chunks.length,
      hash,
    };
    this.revisions.putSync(ord, record);
    this.#rendered.putSync(ord, render(record, input.source, this.#putChunks(ord, labelStart, input.chunks)));
    this.revIds.putSync(id, ord);
    this.texts.putSync(ord, input.text);
    if (input.chunks.length === 0) this.unembedded.putSync(ord, true);
    this.timeAll.putSync([eventTime, id], ord);
    if (isFirst) this.timeFirst.putSync([eventTime, id], ord);
    this.articles.putSync(input.url, { ords: [...(article?.ords ?? []), ord], sourceId: source.id });
  }

  /**
   * Stores revisions decided elsewhere (cluster mode: read from the revision log, src/cluster),
   * keeping their ids, event times and first flags, in one durable transaction that also records
   * `position` (the log sequence applied up to). A revision whose id is stored already is skipped,
   * so a log replayed after a crash changes nothing twice. Returns how many were stored.
   */
  applyDecided(revisions: DecidedRevision[], position: { key: string; seq: number }): number {
    return this.root.transactionSync(() => {
      let nextOrd = this.nextOrd();
      let nextLabel = this.nextLabel();
      let stored = 0;
      for (const r of revisions) {
        if (this.revIds.doesExist(r.id)) continue;
        this.#put(r.input, r, nextOrd, nextLabel);
        nextOrd += 1;
        nextLabel += r.input.chunks.length;
        stored++;
      }
      this.meta.putSync('nextOrd', nextOrd);
      this.meta.putSync('nextLabel', nextLabel);
      this.meta.putSync(position.key, position.seq);
      return stored;
    });
  }

  /** A log position `applyDecided` recorded (0: none). */
  appliedPosition(key: string): number {
    return this.meta.get(key) ?? 0;
  }

  /** Ords of revisions stored without vectors, ascending, from `after` (exclusive). */
  unembeddedOrds(limit: number, after = -1): number[] {
    const out: number[] = [];
    for (const ord of this.unembedded.getKeys({ start: after + 1, limit })) out.push(ord);
    return out;
  }

  unembeddedCount(): number {
    return this.unembedded.getCount();
  }

  /**
   * Gives revisions stored without vectors their chunks, in one durable transaction: each gets
   * labels after every label so far. A revision that has chunks already is left as it is (a
   * second `embed` run racing the first changes nothing). Returns the ords given chunks.
   */
  attachChunks(items: { ord: number; chunks: RevisionChunk[] }[]): number[] {
    return this.root.transactionSync(() => {
      let nextLabel = this.nextLabel();
      const done: number[] = [];
      for (const { ord, chunks } of items) {
        const rev = this.revisions.get(ord);
        if (!rev || rev.labelCount > 0 || chunks.length === 0) continue;
        const texts = this.#putChunks(ord, nextLabel, chunks);
        const attached = { ...rev, labelStart: nextLabel, labelCount: chunks.length };
        this.revisions.putSync(ord, attached);
        this.#rendered.putSync(ord, render(attached, this.#sourceName(rev.sourceId), texts));
        this.#mirror?.drop(ord);
        this.unembedded.removeSync(ord);
        nextLabel += chunks.length;
        done.push(ord);
      }
      this.meta.putSync('nextLabel', nextLabel);
      return done;
    });
  }

  /** Stores a revision's chunks from `labelStart`; returns their texts as stored (what `render` takes). */
  #putChunks(ord: number, labelStart: number, chunks: RevisionChunk[]): string[] {
    return chunks.map((chunk, i) => {
      const text = wellFormed(chunk.text);
      this.chunks.putSync(labelStart + i, { ord, text });
      this.vectors.putSync(labelStart + i, Buffer.from(chunk.vector.buffer, chunk.vector.byteOffset, chunk.vector.byteLength));
      return text;
    });
  }

  /**
   * A chunk's vector. Zero-copy: the view is valid only until the next `vector()` call, so
   * use it at once (a copy is made when LMDB's buffer is not 4-byte aligned).
   */
  vector(label: number): Float32Array {
    const buf = this.vectors.getBinaryFast(label)!;
    if (buf.byteOffset % 4 === 0) return new Float32Array(buf.buffer, buf.byteOffset, DIMS);
    return new Float32Array(new Uint8Array(buf).buffer, 0, DIMS);
  }

  /** Every source, sorted by name. */
  listSources(): SourceRecord[] {
    return [...this.sources.getRange()].map((e) => e.value);
  }

  /**
   * Source names by id, as of this read's snapshot: read again only when a source was added
   * (sources are never renamed or removed), so a response that reads its revisions right after
   * names every source they name. The map is shared: callers only read it.
   */
  sourceNames(): Map<number, string> {
    const count = this.meta.get('nextSourceId') ?? 0;
    if (count !== this.#names.count) this.#names = { count, byId: new Map(this.listSources().map((x) => [x.id, x.name])) };
    return this.#names.byId;
  }
  #names: { count: number; byId: Map<number, string> } = { count: -1, byId: new Map() };

  /** A source's name as an article shows it ('' for an id no source has). */
  #sourceName(id: number): string {
    return this.sourceNames().get(id) ?? '';
  }

  async close(): Promise<void> {
    if (this.#fill) {
      Atomics.store(this.#fill.stop, 0, 1);
      await this.#fill.done.catch(() => {});
    }
    await this.root.flushed;
    await this.root.close();
  }
}
