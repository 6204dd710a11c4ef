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
import { type JetStreamClient, JetStreamApiCodes, JetStreamApiError, type JetStreamManager, type StoredMsg } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { contentHash, decideRevision, type RevisionInput, type Written } from '../store/index.js';
import { decodeHistory, encodeRevision, type LoggedRevision } from './codec.js';

export const REVISION_STREAM = 'NM_REVISIONS';
export const REVISION_SUBJECTS = 'nm.rev.>';

/** The shard of an article first published at `unixSeconds`: its month, UTC (`2026-11`). */
export const shardOf = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString().slice(0, 7);

/** A URL as a subject token: 128 bits of its sha256, hex (subjects cannot hold `.`, `*` or `>`). */
export const articleKey = (url: string): string => createHash('sha256').update(url).digest('hex').slice(0, 32);

/** Articles written at once by one `write` call (each article's revisions in order). */
const PARALLEL_ARTICLES = 32;
/** Articles whose revision count is remembered, at most (the hint saves a read or two a write). */
const COUNTS_KEPT = 100_000;
/** How long a write keeps trying through lost servers and leader elections before it fails. */
const RETRY_MS = 30_000;

export class RevisionLog {
  /** The highest stream sequence this log appended: what a caller waits for its node to apply. */
  lastSeq = 0;
  /** Revisions per article seen in the log (a hint: a write looks on from it). */
  readonly #counts = new Map<string, number>();

  constructor(
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    readonly articles: KV,
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
        const article = `nm.rev.${await this.#shard(key, input.publishedAt)}.${key}`;
        const done = await this.#attempt(input, id, hash, article, maxBytes);
        if (done) return done;
      } catch (e) {
        // A server lost or a stream leader being elected: try again, against the head as it is then.
        if (Date.now() > deadline) throw e;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  /** One read, decide and append; null when another writer filled the slot first (decide again). */
  async #attempt(input: RevisionInput, id: string, hash: string, article: string, maxBytes: number): Promise<Written | null> {
    const { count, head } = await this.#head(article);
    const prior = head ? decodeHistory(head.data) : undefined;
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
      const ack = await this.js.publish(`${article}.${count + 1}`, bytes, { msgID: id, expect: { lastSubjectSequence: 0 } });
      this.lastSeq = Math.max(this.lastSeq, ack.seq);
      this.#counts.set(article, count + 1);
      return { status: 'new', ord: null, first: decided.first };
    } catch (e) {
      // Another writer filled the slot first.
      if (e instanceof JetStreamApiError && e.code === JetStreamApiCodes.StreamWrongLastSequence) return null;
      throw e;
    }
  }

  /** How many revisions the article has in the log, and the last of them. */
  async #head(article: string): Promise<{ count: number; head: StoredMsg | null }> {
    // Slots are never emptied, so a count seen before is where to look on from.
    let count = this.#counts.get(article) ?? 0;
    let head: StoredMsg | null = null;
    for (;;) {
      const next = await this.jsm.streams.getMessage(REVISION_STREAM, { last_by_subj: `${article}.${count + 1}` });
      if (!next) break;
      head = next;
      count++;
    }
    if (!head && count > 0) head = await this.jsm.streams.getMessage(REVISION_STREAM, { last_by_subj: `${article}.${count}` });
    if (this.#counts.size >= COUNTS_KEPT) this.#counts.clear();
    this.#counts.set(article, count);
    return { count, head };
  }

  /** The article's shard: pinned by its first writer, whoever wins a race to pin it. */
  async #shard(key: string, publishedAt: number): Promise<string> {
    for (;;) {
      const pinned = await this.articles.get(key);
      if (pinned && pinned.operation === 'PUT') return pinned.string();
      try {
        await this.articles.create(key, shardOf(publishedAt));
        return shardOf(publishedAt);
      } catch (e) {
        // Pinned by another writer between the read and the create: read it.
        if (e instanceof JetStreamApiError && e.code === JetStreamApiCodes.StreamWrongLastSequence) continue;
        throw e;
      }
    }
  }
}
