/**
 * The keyword index: one SQLite file (FTS5) beside LMDB, a secondary index of it. It holds no
 * record LMDB lacks: each indexed corpus remembers how far into LMDB it has read (in the same
 * transaction as the rows), so a crash loses at most work that the next catch-up redoes, and
 * `newsmatch reindex --keyword` rebuilds it from nothing.
 *
 * FTS5 tables are contentless: the text lives in LMDB only, and highlights are cut from it.
 * Every table indexes the tokenizer's output (text.ts), already folded and split, so FTS5's
 * own tokenizer only splits on the spaces.
 *
 * In the server (`workers` given) nothing of the index runs on the event loop: searches go to
 * the reader threads (read-pool.ts), catch-ups to the writer thread (write-pool.ts); the
 * connection here does the small things (where a corpus is, a reset) and the market reads.
 */
import Database from 'better-sqlite3';
import { KeywordReads } from './read-pool.js';
import { Readers } from './reads.js';
import { KeywordWriter, type Corpus } from './write-pool.js';

export type { Corpus };

/** Bump to rebuild every index built by an older layout. */
const SCHEMA = 2;

const TABLES = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
-- rid orders rows newest-first without a sort: (event_time - 1900) << 20 | a slot within that second.
CREATE TABLE IF NOT EXISTS news_rows (
  rid INTEGER PRIMARY KEY, ord INTEGER NOT NULL UNIQUE, event_time INTEGER NOT NULL,
  source_id INTEGER NOT NULL, first INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS news_fts USING fts5(
  title, body, text, content='', contentless_delete=1, prefix='2 3', tokenize="unicode61 remove_diacritics 0");
CREATE TABLE IF NOT EXISTS job_rows (
  rid INTEGER PRIMARY KEY, ord INTEGER NOT NULL UNIQUE, posted_at INTEGER NOT NULL, remote INTEGER);
CREATE TABLE IF NOT EXISTS job_skills (skill TEXT NOT NULL, rid INTEGER NOT NULL, PRIMARY KEY (skill, rid)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS job_skills_rid ON job_skills (rid);
CREATE VIRTUAL TABLE IF NOT EXISTS job_fts USING fts5(
  title, company, location, skills, description, content='', contentless_delete=1, prefix='2 3', tokenize="unicode61 remove_diacritics 0");
`;

export interface KeywordWorkers {
  /** Reader threads (KEYWORD_READ_THREADS); 0 reads on the event loop. */
  readThreads: number;
  /** The store's directory (Store.path), which the writer thread opens. */
  store: string;
}

export class KeywordDb {
  readonly db: Database.Database;
  /** Where searches run: the reader threads, or this connection. */
  readonly reads: KeywordReads;
  /** The writer thread, or null: catch-ups run on this connection. */
  readonly writer: KeywordWriter | null;
  #readers: Readers | null = null;

  constructor(
    readonly file: string,
    /** LMDB's identity: an index built from another store is rebuilt. */
    storeId: string,
    workers?: KeywordWorkers,
  ) {
    this.db = new Database(file);
    // A secondary index: NORMAL is safe in WAL (a power cut may drop the last commits, which
    // the next catch-up redoes from LMDB). Another process (the CLI) may write meanwhile.
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 10000');
    this.db.exec(TABLES);
    const meta = (k: string) => (this.db.prepare('SELECT value FROM meta WHERE key = ?').get(k) as { value: unknown } | undefined)?.value;
    if (meta('schema') !== SCHEMA || meta('store') !== storeId) {
      this.reset('news');
      this.reset('jobs');
      this.#setMeta('schema', SCHEMA);
      this.#setMeta('store', storeId);
    }
    this.reads = new KeywordReads(file, workers?.readThreads ?? 0, () => this.readers);
    this.writer = workers ? new KeywordWriter(workers.store, file) : null;
  }

  /** The read statements on this connection (prepared on first use). */
  get readers(): Readers {
    return (this.#readers ??= new Readers(this.db));
  }

  #setMeta(key: string, value: unknown): void {
    this.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, value);
  }

  /** How many LMDB records of a corpus are indexed (they are read in order). */
  indexed(corpus: Corpus): number {
    const row = this.db.prepare('SELECT value FROM meta WHERE key = ?').get(`${corpus}_next`) as { value: number } | undefined;
    return row?.value ?? 0;
  }

  setIndexed(corpus: Corpus, next: number): void {
    this.#setMeta(`${corpus}_next`, next);
  }

  /** Empties a corpus's tables: the next catch-up rebuilds it from LMDB. */
  reset(corpus: Corpus): void {
    this.db
      .transaction(() => {
        if (corpus === 'news') {
          this.db.exec(`DELETE FROM news_rows; INSERT INTO news_fts (news_fts) VALUES ('delete-all');`);
        } else {
          this.db.exec(`DELETE FROM job_rows; DELETE FROM job_skills; INSERT INTO job_fts (job_fts) VALUES ('delete-all');`);
        }
        this.setIndexed(corpus, 0);
      })
      .immediate();
  }

  /** Stops the reader threads, lets the writer's task in flight finish, and closes the connection. */
  async close(): Promise<void> {
    await Promise.all([this.reads.close(), this.writer?.close()]);
    if (this.db.open) this.db.close();
  }
}
