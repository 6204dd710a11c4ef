/**
 * A stream monitor's events as Server-Sent Events (GET /v1/monitors/{id}/events). LMDB is the
 * source (store.ts): a stream first replays the stored events after the client's Last-Event-ID
 * (every event without one: nothing is missed since the monitor's creation), then goes live on
 * the feed. Each event's `id:` is its seq, so a client that reconnects resumes where it was.
 *
 * No gap and no duplicate between replay and live: the feed is joined before the replay starts,
 * and the replay reads pages until one comes back empty. An event committed while it runs is in
 * LMDB before the feed announces it (feed.ts), so the next page holds it; the listener ignores
 * events until the replay's last, empty read, and the switch to live happens in the same
 * synchronous step as that read, so no announcement falls between them. Only seq > the last
 * sent is ever written.
 *
 * Memory stays bounded: the replay writes a page at a time and waits for 'drain' (the rest
 * stays in LMDB, nothing is queued meanwhile); live events are written as they come, and a
 * client that lets more than `maxBufferedBytes` wait unread is disconnected (it resumes with
 * Last-Event-ID), which releases the listener and the timer.
 */
import { once } from 'node:events';
import type http from 'node:http';
import type { Logger } from 'pino';
import type { MonitorFeed } from './feed.js';
import type { MonitorEvent, MonitorStore } from './store.js';
import { webhookBody } from './webhooks.js';

/** The client's reconnection delay, sent first (the `retry:` field). */
export const STREAM_RETRY_MS = 3000;
/** Events read from LMDB at a time during the replay. */
const PAGE = 25;

export interface StreamOptions {
  store: MonitorStore;
  feed: MonitorFeed;
  monitor: string;
  /** The Last-Event-ID (a seq): events with a greater seq are sent; null sends every stored event. */
  after: number | null;
  /** A `: heartbeat` comment goes out after this long without a write (MONITOR_STREAM_HEARTBEAT_MS). */
  heartbeatMs: number;
  /** Bytes that may wait for a live client before it is disconnected (MONITOR_STREAM_MAX_BUFFER_BYTES). */
  maxBufferedBytes: number;
  log?: Logger;
  /** Aborted: nothing more is written and the response ends (server shutdown). */
  signal?: AbortSignal;
  /** Called once, when the stream has released its listener and timer (client gone, cut, aborted). */
  onClose?: () => void;
}

/**
 * Last-Event-ID as a seq: null when absent (or empty, which SSE treats as no id), 'invalid'
 * when it is not digits within Number.MAX_SAFE_INTEGER or is repeated (Node joins repeats
 * with ", "; an array from headersDistinct has more than one).
 */
export function parseLastEventId(value: string | string[] | undefined): number | null | 'invalid' {
  if (Array.isArray(value)) {
    if (value.length > 1) return 'invalid';
    value = value[0];
  }
  if (value === undefined) return null;
  const v = value.trim();
  if (v === '') return null;
  if (!/^\d+$/.test(v)) return 'invalid';
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : 'invalid';
}

/** The event as the stream's `data:`: the webhook's body (JSON.stringify escapes newlines, so it is one line). */
const frame = (e: MonitorEvent): string => `id: ${e.seq}\nevent: matches\ndata: ${webhookBody(e)}\n\n`;

/**
 * Streams `monitor`'s events on `res` until the client goes, reads too slowly, or `signal`
 * aborts. Writes the 200 and its headers itself; the caller must not touch `res` afterwards.
 */
export function streamEvents(res: http.ServerResponse, opts: StreamOptions): void {
  const { store, feed, monitor, heartbeatMs, maxBufferedBytes, log, signal, onClose } = opts;
  /** The seq of the last event written (-1: none yet, and after === null sends all). */
  let last = opts.after ?? -1;
  let live = false;
  let done = false;
  /** Aborted on release: ends a replay waiting for 'drain'. */
  const stop = new AbortController();

  const release = (): void => {
    if (done) return;
    done = true;
    off();
    clearTimeout(heartbeat);
    stop.abort();
    signal?.removeEventListener('abort', onAbort);
    res.off('close', release);
    onClose?.();
  };
  const onAbort = (): void => {
    if (done) return;
    release();
    res.end();
  };
  /** Disconnects a client that lets too much wait unread; the socket goes with what it held. */
  const cut = (): void => {
    log?.info({ monitor, bufferedBytes: res.writableLength, maxBufferedBytes, lastSeq: last }, 'monitor stream closed: the client reads too slowly');
    release();
    res.destroy();
  };
  const write = (text: string): boolean => {
    heartbeat.refresh();
    return res.write(text);
  };

  const beat = (): void => {
    if (done) return;
    if (live && res.writableLength > maxBufferedBytes) return cut();
    // Bytes already waiting for the client keep the connection busy; a comment adds nothing.
    if (!res.writableNeedDrain) write(': heartbeat\n\n');
    else heartbeat.refresh();
  };
  const heartbeat = setTimeout(beat, heartbeatMs);
  // The timer alone must not keep the process alive (the socket does while it is open).
  heartbeat.unref();

  const off = feed.on(monitor, (e) => {
    if (!live || done || e.seq <= last) return;
    // Checked before the write: a single event larger than the cap still reaches a reading client.
    if (res.writableLength > maxBufferedBytes) return cut();
    const event = store.event(e.monitor, e.seq);
    if (!event) return;
    write(frame(event));
    last = e.seq;
  });

  // The caller may have awaited (auth, lookups) while the client went away: no 'close' is to come.
  if (res.destroyed) return release();
  res.on('close', release);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
    connection: 'keep-alive',
  });
  write(`retry: ${STREAM_RETRY_MS}\n\n`);
  if (signal?.aborted) return onAbort();
  signal?.addEventListener('abort', onAbort);

  const replay = async (): Promise<void> => {
    for (;;) {
      const page = store.eventsAfter(monitor, last, PAGE);
      if (page.length === 0) break;
      for (const e of page) {
        const more = write(frame(e));
        last = e.seq;
        if (!more) await once(res, 'drain', { signal: stop.signal });
        if (done) return;
      }
    }
    live = true;
  };
  replay().catch((err: unknown) => {
    if (done) return; // released while waiting for 'drain'
    log?.warn({ err, monitor }, 'monitor stream replay failed');
    release();
    res.destroy();
  });
}
