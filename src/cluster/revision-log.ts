/**
 * The writer's side of the revision log. The n-th revision of an article goes to the subject
 * `nm.rev.<shard>.<article key>.<n>`, the shard being the month of the article's first
 * publication (pinned in the `nm-articles` KV bucket when the article is first written, so
 * later revisions find it whatever their own dates). A write finds the article's last
 * revision, decides as a single node does (`decideRevision`), and appends to the next slot
 * only if that slot is empty (last subject sequence 0 expected): two nodes writing one
 * article at once cannot both fill a slot, and the loser decides again against the winner's
 * record. A write is acknowledged once the stream's replicas acknowledged it.
 *
 * Why a slot per revision, not one subject per article appended with its last sequence
 * expected: nats-server 2.9 checks a non-zero expected sequence of a replicated stream against
 * what its leader has stored, not what it is storing, and lets two such appends through at
 * once (test/cluster.test.ts measures it); an empty subject expected is checked in order.
 */
import { createHash, randomUUID } from 'node:crypto';
import { type JetStreamClient, JetStreamApiCodes, JetStreamApiError, type JetStreamManager, type JsMsg, type StoredMsg } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { contentHash, decideRevision, type RevisionInput, type Store, type Written } from '../store/index.js';
import type { Feed } from './applier.js';
import { decided, decodeHistory, decodeRevision, encodeRevision, type LoggedRevision } from './codec.js';
import { serves, type ShardSet } from './shards.js';

export const REVISION_STREAM = 'NM_REVISIONS';
export const REVISION_SUBJECTS = 'nm.rev.>';

/** A create (an empty subject or an absent key expected) refused: another writer made it first. */
/**
 * The revision log as a node applies it: into its store, with the position, in one transaction
 * (`Store.applyDecided`). A revision of a shard the node does not serve is stored without its
 * chunks: its text and metadata are here, its vectors on the nodes that serve it (shards.ts).
 */
export function revisionFeed(store: Store, shards: ShardSet): Feed {
  const key = `clusterApplied:${REVISION_STREAM}`;
  return {
    stream: REVISION_STREAM,
    subjects: REVISION_SUBJECTS,
    what: 'revision',
    position: () => store.appliedPosition(key),
    apply: (batch: JsMsg[]) =>
      void store.applyDecided(
        batch.map((m) => {
          const d = decided(decodeRevision(m.data));
          // nm.rev.<shard>.<article>.<n>
          if (!serves(shards, m.subject.split('.')[2])) d.input.chunks = [];
          return d;
        }),
        { key, seq: batch[batch.length - 1].seq },
      ),
  };
}

export const takenAlready = (e: unknown): boolean => e instanceof JetStreamApiError && e.code === JetStreamApiCodes.StreamWrongLastSequence;

/** The shard of an article first published at `unixSeconds`: its month, UTC (`2026-11`). */
export const shardOf = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString().slice(0, 7);

/** A URL as a subject token: 128 bits of its sha256, hex (subjects cannot hold `.`, `*` or `>`). */
export const articleKey = (url: string): string => createHash('sha256').update(url).digest('hex').slice(0, 32);

/**
 * Articles written at once by one `write` call (each article's revisions in order): an import's
 * whole batch. A write waits on two or three round trips, so throughput is what is in flight:
 * 4,375 revisions through three local servers took 5.1 s at 64 at once, 4.4 s at 256.
 */
const PARALLEL_ARTICLES = 256;
/** Articles remembered, at most (the hint saves two or three reads a write). */
const ARTICLES_KEPT = 100_000;

interface Article {
  /** `nm.rev.<shard>.<key>`: its n-th revision is `<subject>.<n>`. */
  subject: string;
  /** Revisions in the log, as last seen. */
  count: number;
  /** The last of them (undefined: none). */
  head: Pick<LoggedRevision, 'id' | 'source' | 'history'> | undefined;
}
/** How long a write keeps trying through lost servers and leader elections before it fails. */
const RETRY_MS = 120_000;

export class RevisionLog {
  /** The highest stream sequence this log appended: what a caller waits for its node to apply. */
  lastSeq = 0;
  /** Articles this writer has seen, by key (a hint: a write looks on from it). */
  readonly #articles = new Map<string, Article>();

  /** Shards this writer has seen listed in `shards`. */
  readonly #listed = new Set<string>();

  constructor(
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    readonly articles: KV,
    /** Every shard the log holds, a key each (what a query's shards are found among). */
    readonly shards: KV,
  ) {}

  /**
   * Appends each input that is a new revision; one outcome per input, in order (`ord` null:
   * the node applies it to its store from the log). Revisions without chunks are refused (the
   * log carries vectors, so a node never embeds what another already did), and so are those
   * larger than `maxBytes`, the servers' max_payload.
   */
  async write(inputs: RevisionInput[], maxBytes: number): Promise<Written[]> {
    const outcomes: Written[] = new Array(inputs.length);
    const byArticle = new Map<string, number[]>();
    inputs.forEach((input, i) => {
      const list = byArticle.get(input.url);
      if (list) list.push(i);
      else byArticle.set(input.url, [i]);
    });
    const queue = [...byArticle.values()];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        for (const i of next) outcomes[i] = await this.#writeOne(inputs[i], maxBytes);
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_ARTICLES, queue.length) }, worker));
    return outcomes;
  }

  async #writeOne(input: RevisionInput, maxBytes: number): Promise<Written> {
    if (input.chunks.length === 0) {
      return {
        status: 'rejected',
        reason: 'cluster mode stores revisions with their vectors: give the line `chunks`, or turn text mode on (BGE_M3_MODEL_DIR)',
      };
    }
    const key = articleKey(input.url);
    const hash = contentHash(input.title, input.body, input.text);
    // One id for every attempt: an append whose answer was lost is known by it when found as the head.
    const id = randomUUID();
    const deadline = Date.now() + RETRY_MS;
    for (;;) {
      try {
        const done = await this.#attempt(input, key, id, hash, maxBytes);
        if (done) return done;
      } catch (e) {
        // A server lost or a stream leader being elected: try again, against the head as it is then.
        if (Date.now() > deadline) throw e;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  /** One read, decide and append; null when another writer filled the slot first (decide again). */
  async #attempt(input: RevisionInput, key: string, id: string, hash: string, maxBytes: number): Promise<Written | null> {
    const article = await this.#article(key, input.publishedAt);
    const prior = article.head;
    if (prior?.id === id) return { status: 'new', ord: null, first: prior.history.length === 1 };
    const decided = decideRevision(input, hash, prior && { source: prior.source, revisions: prior.history });
    if (decided.status !== 'new') return decided;
    const record: LoggedRevision = {
      id,
      url: input.url,
      source: input.source,
      homepage: input.sourceHomepage,
      title: input.title,
      body: input.body,
      text: input.text,
      eventTime: decided.eventTime,
      first: decided.first,
      hash,
      history: [...(prior?.history ?? []), { hash, eventTime: decided.eventTime }],
      chunks: input.chunks,
    };
    const bytes = encodeRevision(record);
    if (bytes.length > maxBytes) {
      return {
        status: 'rejected',
        reason: `the revision with its ${record.chunks.length} chunk vectors is ${bytes.length} bytes, over the NATS servers' max_payload (${maxBytes}): raise max_payload`,
      };
    }
    try {
      // msgID: an append resent within the stream's duplicate window lands once.
      const ack = await this.js.publish(`${article.subject}.${article.count + 1}`, bytes, { msgID: id, expect: { lastSubjectSequence: 0 } });
      this.lastSeq = Math.max(this.lastSeq, ack.seq);
      this.#remember({ subject: article.subject, count: article.count + 1, head: { id, source: record.source, history: record.history } });
      return { status: 'new', ord: null, first: decided.first };
    } catch (e) {
      // Another writer filled the slot first.
      if (takenAlready(e)) return null;
      throw e;
    }
  }

  /**
   * The article's subject, how many revisions it has in the log and the last one's history.
   * What this writer saw before is where it looks on from (slots are never emptied, so a
   * count seen is a floor): a known article costs one read of its next slot, found empty.
   */
  async #article(key: string, publishedAt: number): Promise<Article> {
    const known = this.#articles.get(key);
    let article: Article;
    if (known) article = known;
    else {
      const pinned = await this.#pin(key, publishedAt);
      // Pinned by this call: nothing can have been appended to an article before its pin.
      if (pinned.created) {
        article = { subject: pinned.subject, count: 0, head: undefined };
        this.#remember(article);
        return article;
      }
      article = { subject: pinned.subject, count: 0, head: undefined };
    }
    let { count } = article;
    let head: StoredMsg | null = null;
    for (;;) {
      const next = await this.jsm.streams.getMessage(REVISION_STREAM, { last_by_subj: `${article.subject}.${count + 1}` });
      if (!next) break;
      head = next;
      count++;
    }
    if (head) article = { subject: article.subject, count, head: decodeHistory(head.data) };
    else if (count > 0 && !article.head) {
      const last = await this.jsm.streams.getMessage(REVISION_STREAM, { last_by_subj: `${article.subject}.${count}` });
      article = { subject: article.subject, count, head: last ? decodeHistory(last.data) : undefined };
    }
    this.#remember(article);
    return article;
  }

  #remember(article: Article): void {
    if (this.#articles.size >= ARTICLES_KEPT) this.#articles.clear();
    this.#articles.set(article.subject.slice(article.subject.lastIndexOf('.') + 1), article);
  }

  /** The article's subject: its shard pinned by its first writer, whoever wins a race to pin it (`created`: this call did). */
  async #pin(key: string, publishedAt: number): Promise<{ subject: string; created: boolean }> {
    const shard = shardOf(publishedAt);
    if (!this.#listed.has(shard)) {
      // Listed before the article is pinned to it: a shard with an article is always listed.
      await this.shards.create(shard, '').catch((e) => {
        if (!takenAlready(e)) throw e;
      });
      this.#listed.add(shard);
    }
    try {
      await this.articles.create(key, shard);
      return { subject: `nm.rev.${shard}.${key}`, created: true };
    } catch (e) {
      if (!takenAlready(e)) throw e;
    }
    // Pinned before: read it.
    const pinned = await this.articles.get(key);
    if (pinned?.operation !== 'PUT') throw new Error(`article ${key}: its shard pin could not be read`);
    return { subject: `nm.rev.${pinned.string()}.${key}`, created: false };
  }
}
