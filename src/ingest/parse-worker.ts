/**
 * A Piscina worker that parses what the poller fetches, off the event loop: a feed (feedsmith,
 * a few ms to tens of ms for a large one) and an article page (linkedom + Readability, 70–140
 * ms a page). A FeedError comes back as data: an Error loses its class on the way between threads.
 */
import { extractPage, type ExtractedArticle } from './extract.js';
import { FeedError, parseFeed, type ParsedFeed } from './feed.js';

export type IngestParseTask =
  | { kind: 'page'; body: Uint8Array; contentType: string | null; url: string }
  | { kind: 'feed'; body: Uint8Array; contentType: string | null; url: string; now: number };

export type IngestParseOutcome = { ok: true; value: ExtractedArticle | ParsedFeed } | { ok: false; feedError: boolean; message: string };

export default function parse(task: IngestParseTask): IngestParseOutcome {
  try {
    if (task.kind === 'page') return { ok: true, value: extractPage(task.body, task.contentType, task.url) };
    return { ok: true, value: parseFeed(task.body, { url: task.url, contentType: task.contentType, now: task.now }) };
  } catch (e) {
    return { ok: false, feedError: e instanceof FeedError, message: String((e as Error)?.message ?? e) };
  }
}
