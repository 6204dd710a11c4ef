/**
 * Polls outlets: each feed is fetched (conditional GET), parsed, and every item compared with
 * the article's latest stored revision; a new article, or a changed headline, snippet or text
 * at a known URL, becomes a revision (an edit carries the time it was observed). With
 * `fetchArticles`, new items' pages are fetched and their text extracted, and pages of items
 * still listed and younger than `revisitHours` are fetched again (conditionally) each round.
 *
 * Durability: a feed's new revisions are committed in one LMDB transaction, with their chunks
 * when text mode is on; the feed's and pages' validators are stored only after that, so a
 * crash at any point makes the next round fetch again and find exactly what is missing.
 * A failing item or feed is logged with its outlet and URL and never stops the round; an
 * outlet whose feeds all fail backs off exponentially.
 */
import type { Logger } from 'pino';
import { textOf } from '../embed/index.js';
import { FetchError, type HttpClient } from '../net/index.js';
import { contentHash, type RevisionChunk, type RevisionInput, type RevisionWriter, type Store } from '../store/index.js';
import type { FeedItem } from './feed.js';
import type { OutletRecord, Outlets, Validators } from './outlets.js';
import { IngestParsePool } from './parse-pool.js';

export interface PollerOptions {
  store: Store;
  outlets: Outlets;
  /** The one HTTP client, under the polite polling policy. */
  fetcher: HttpClient;
  log: Logger;
  revisitHours: number;
  /** Chunks and embeds new revisions (text mode on); absent: they are stored without vectors. */
  embed?: (docs: { title: string; text: string }[]) => Promise<RevisionChunk[][]>;
  /** Where new revisions go (cluster mode: the revision log); the store's `writeRevisions` when absent. */
  write?: RevisionWriter;
  /** Called after revisions are committed (the service catches its index up). */
  onWritten?: () => void;
  /** Worker threads feeds are parsed and pages extracted on (INGEST_PARSE_THREADS, started on first use); 0 or absent: on the event loop. */
  parseThreads?: number;
  /** Called after each outlet's poll: `ok` unless every feed of it failed (metrics count these). */
  onPolled?: (outlet: string, ok: boolean) => void;
  /** Unix seconds (tests move time). */
  now?: () => number;
  /**
   * Cluster mode: the outlets' schedule shared by every node (src/cluster), so each outlet is
   * polled by one node a time. `claim` before a poll (refused: skip it; `next`: when it is due
   * cluster-wide), `done` after with the next poll time. Absent: this process polls alone.
   */
  schedule?: {
    claim(outlet: string, now: number): Promise<{ ok: true } | { ok: false; next?: number }>;
    done(outlet: string, next: number): Promise<void>;
  };
}

export interface OutletReport {
  outlet: string;
  feeds: number;
  /** Feeds answered 304 Not Modified. */
  notModified: number;
  items: number;
  newArticles: number;
  newRevisions: number;
  unchanged: number;
  pagesFetched: number;
  errors: string[];
}

interface FeedState extends Validators {
  /** The items last listed: a 304 round still revisits their pages. */
  items: { url: string; publishedAt: number }[];
}

/** Longest backoff of a failing outlet. */
const MAX_BACKOFF_SEC = 6 * 3600;

export class Poller {
  readonly #now: () => number;
  readonly #parsers: IngestParsePool;
  readonly #busy = new Set<string>();
  #timer: NodeJS.Timeout | null = null;
  #loop: Promise<unknown> = Promise.resolve();
  #stopped = false;

  constructor(readonly o: PollerOptions) {
    this.#now = o.now ?? (() => Math.floor(Date.now() / 1000));
    this.#parsers = new IngestParsePool(o.parseThreads ?? 0);
  }

  /** Polls every enabled outlet that is due (every enabled one with `force`), concurrently. */
  async round(opts: { force?: boolean } = {}): Promise<OutletReport[]> {
    const now = this.#now();
    const due = this.o.outlets.list().filter((o) => o.enabled && !this.#busy.has(o.name) && (opts.force || o.nextPollAt <= now));
    const schedule = opts.force ? undefined : this.o.schedule;
    if (!schedule) return Promise.all(due.map((o) => this.pollOutlet(o)));
    const reports = await Promise.all(
      due.map(async (o) => {
        const claim = await schedule.claim(o.name, now);
        if (!claim.ok) {
          // Polled by another node: due again when the cluster's schedule says.
          const next = claim.next;
          if (next !== undefined) this.o.outlets.update(o.name, (x) => ({ ...x, nextPollAt: next }));
          return null;
        }
        try {
          return await this.pollOutlet(o);
        } finally {
          await schedule.done(o.name, this.o.outlets.get(o.name)?.nextPollAt ?? now);
        }
      }),
    );
    return reports.filter((r) => r !== null);
  }

  /** `serve` with INGEST=on: a round every `tickMs` for the outlets then due. */
  start(tickMs = 5000): void {
    const tick = () => {
      if (this.#stopped) return;
      this.#loop = this.round()
        .catch((e) => this.o.log.error({ err: e }, 'ingest round failed'))
        .finally(() => {
          if (!this.#stopped) this.#timer = setTimeout(tick, tickMs);
        });
    };
    tick();
  }

  /** Stops the loop, waits for a round in progress, and closes the HTTP client and the parse threads. */
  async stop(): Promise<void> {
    if (this.#stopped) return this.#loop.then(() => undefined);
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#loop;
    await this.o.fetcher.close();
    await this.#parsers.close();
  }

  async pollOutlet(outlet: OutletRecord): Promise<OutletReport> {
    this.#busy.add(outlet.name);
    const report: OutletReport = {
      outlet: outlet.name,
      feeds: outlet.feeds.length,
      notModified: 0,
      items: 0,
      newArticles: 0,
      newRevisions: 0,
      unchanged: 0,
      pagesFetched: 0,
      errors: [],
    };
    let failedFeeds = 0;
    try {
      for (const feedUrl of outlet.feeds) {
        try {
          await this.#pollFeed(outlet, feedUrl, report);
        } catch (e) {
          failedFeeds++;
          this.#fail(report, outlet, feedUrl, e);
        }
      }
    } finally {
      this.#busy.delete(outlet.name);
    }
    const now = this.#now();
    const allFailed = failedFeeds === outlet.feeds.length;
    const jitter = 0.9 + Math.random() * 0.2;
    this.o.outlets.update(outlet.name, (o) => {
      const failures = allFailed ? o.failures + 1 : 0;
      const wait = allFailed ? Math.min(o.intervalSec * 2 ** failures, MAX_BACKOFF_SEC) : o.intervalSec;
      return {
        ...o,
        failures,
        nextPollAt: now + Math.round(wait * jitter),
        lastSuccessAt: allFailed ? o.lastSuccessAt : now,
        lastError: report.errors.length > 0 ? { at: now, message: report.errors[report.errors.length - 1] } : o.lastError,
      };
    });
    this.o.onPolled?.(outlet.name, !allFailed);
    return report;
  }

  async #pollFeed(outlet: OutletRecord, feedUrl: string, report: OutletReport): Promise<void> {
    const { store, outlets, fetcher } = this.o;
    const now = this.#now();
    const state = outlets.validators.get(feedUrl) as FeedState | undefined;
    const res = await fetcher.get(feedUrl, { validators: state });
    let items: { url: string; title?: string; snippet?: string; publishedAt: number }[];
    let listed: FeedItem[] | null = null;
    if (res.status === 304) {
      report.notModified++;
      // Unchanged feed: nothing new to list, but young pages may still have been edited.
      items = outlet.fetchArticles ? (state?.items ?? []) : [];
    } else {
      listed = (await this.#parsers.feed(res.body, { url: res.url, contentType: res.contentType, now })).items;
      items = listed;
    }
    report.items += listed?.length ?? 0;

    const pending: { input: RevisionInput; validators: [string, Validators][] }[] = [];
    const keepValidators: [string, Validators][] = [];
    const seen = new Set<string>();
    const errorsBefore = report.errors.length;
    for (const item of items) {
      if (seen.has(item.url)) continue;
      seen.add(item.url);
      try {
        const change = await this.#itemChange(outlet, item, now, report);
        if (change.kind === 'unchanged') {
          report.unchanged++;
          keepValidators.push(...change.validators);
        } else pending.push(change);
      } catch (e) {
        this.#fail(report, outlet, item.url, e);
      }
    }

    if (pending.length > 0) {
      const chunks = this.o.embed ? await this.o.embed(pending.map((p) => ({ title: p.input.title, text: textOf(p.input.body, p.input.text) }))) : null;
      const inputs = pending.map((p, i) => ({ ...p.input, chunks: chunks?.[i] ?? [] }));
      const outcomes = this.o.write ? await this.o.write(inputs) : store.writeRevisions(inputs);
      outcomes.forEach((out, i) => {
        if (out.status === 'new') {
          report.newRevisions++;
          if (out.first) report.newArticles++;
          keepValidators.push(...pending[i].validators);
        } else if (out.status === 'unchanged') report.unchanged++;
        else this.#fail(report, outlet, inputs[i].url, new Error(out.reason));
      });
      this.o.onWritten?.();
    }
    // Validators last: had we crashed before the commit, the next round fetches again. A feed
    // with a failed item keeps its old validators, so the next round reads it whole again.
    const itemFailed = report.errors.length > errorsBefore;
    store.root.transactionSync(() => {
      for (const [url, v] of keepValidators) outlets.validators.putSync(url, v);
      if (res.status === 200 && !itemFailed) {
        const feedState: FeedState = { ...res.validators, items: (listed ?? []).map((i) => ({ url: i.url, publishedAt: i.publishedAt })) };
        outlets.validators.putSync(feedUrl, feedState);
      }
    });
  }

  /** What an item changes: nothing, or a revision to store (a new article or an edit). */
  async #itemChange(
    outlet: OutletRecord,
    item: { url: string; title?: string; snippet?: string; publishedAt: number },
    now: number,
    report: OutletReport,
  ): Promise<{ kind: 'unchanged'; validators: [string, Validators][] } | { kind: 'revision'; input: RevisionInput; validators: [string, Validators][] }> {
    const { store, outlets, fetcher } = this.o;
    const article = store.articles.get(item.url);
    const latestOrd = article?.ords[article.ords.length - 1];
    const latest = latestOrd === undefined ? undefined : store.revisions.get(latestOrd);
    let title = item.title ?? latest?.title;
    const body = item.snippet ?? latest?.body ?? '';
    let text = latestOrd === undefined ? '' : (store.texts.get(latestOrd) ?? '');
    const validators: [string, Validators][] = [];
    const young = now - item.publishedAt < this.o.revisitHours * 3600;
    if (outlet.fetchArticles && (!latest || young)) {
      const page = await fetcher.get(item.url, { validators: latest ? outlets.validators.get(item.url) : null });
      report.pagesFetched++;
      if (page.status === 200) {
        const extracted = await this.#parsers.page(page.body, page.contentType, page.url);
        if (extracted.text) text = extracted.text;
        title ??= extracted.title ?? undefined;
        validators.push([item.url, page.validators]);
      }
    }
    if (!title) throw new Error('no headline in the feed item or the page');
    if (latest && contentHash(title, body, text) === latest.hash) return { kind: 'unchanged', validators };
    const input: RevisionInput = {
      url: item.url,
      source: outlet.name,
      sourceHomepage: outlet.homepage,
      title,
      body,
      text,
      publishedAt: latest ? store.revisions.get(article!.ords[0])!.eventTime : item.publishedAt,
      // An edit is a revision with the time it was observed.
      revisedAt: latest ? Math.max(now, latest.eventTime) : undefined,
      chunks: [],
    };
    return { kind: 'revision', input, validators };
  }

  #fail(report: OutletReport, outlet: OutletRecord, url: string, e: unknown): void {
    const message = e instanceof FetchError ? e.message : `${url}: ${(e as Error).message ?? e}`;
    report.errors.push(message);
    this.o.log.warn({ outlet: outlet.name, url, err: e instanceof FetchError ? undefined : e }, `ingest: ${message}`);
  }
}
