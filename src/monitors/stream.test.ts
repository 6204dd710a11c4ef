/**
 * Monitor streams (stream.ts) end to end: a real node:http server on loopback calls
 * streamEvents over a real LMDB store; events are committed with commitWindow, paid with settle, and announced on
 * the feed as the matcher does; a real node:http client reads the text and parses it as SSE.
 * Shows: the headers and frames; live events in order; resume with Last-Event-ID (events
 * committed while away included) with no gap and no duplicate; an event committed during the
 * replay sent once; heartbeats; a client that stops reading cut once its buffer passes the cap,
 * everything released, and its resume getting the rest; client close and abort release too.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Store } from '../store/index.js';
import { MonitorFeed } from './feed.js';
import { commitPaid } from '../../test/helpers/monitors.js';
import { MonitorStore, type NewEvent } from './store.js';
import { parseLastEventId, STREAM_RETRY_MS, streamEvents } from './stream.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-stream-'));
// A store a test: windows are numbered by one ingest sequence, and each test starts its own.
let store: Store;
let monitors: MonitorStore;
let stores = 0;
const feed = new MonitorFeed();
beforeEach(() => {
  store = new Store(path.join(dir, `lmdb-${stores++}`));
  monitors = new MonitorStore(store);
  refs.clear();
});
afterEach(async () => {
  await store.close();
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 4, 1, 9, 30, 15, 250);
let monitorCount = 0;

/** A new stream monitor (every field filled), as POST /v1/monitors would store it. */
async function createMonitor(): Promise<string> {
  const id = `mon_${(++monitorCount).toString(16).padStart(20, '0')}`;
  await monitors.add({
    id,
    account: 'acct_stream',
    keyId: 'key_stream',
    created: T0,
    query: { text: 'chip export controls' },
    vectors: new Uint8Array(1024 * 4),
    minScore: 0.5,
    sources: null,
    excludeSources: null,
    includeEdits: false,
    excludeUrl: null,
    webhookUrl: null,
    secret: null,
    status: 'active',
    pausedReason: null,
    pausedSeq: null,
    startSeq: 0,
    failures: 0,
  });
  return id;
}

/** Real revisions the events refer to (an event holds references; the stream writes them out). */
const refs = new Map<string, { ord: number; label: number }>();
const UNIT = new Float32Array(1024).fill(1 / 32);
function revision(seq: number, i: number, bodyBytes: number): { ord: number; label: number } {
  const key = `${seq}.${i}.${bodyBytes}`;
  let r = refs.get(key);
  if (!r) {
    const [out] = store.writeRevisions([
      {
        url: `https://example.com/${seq}/${i}/${bodyBytes}`,
        source: 'reuters',
        title: `Article ${seq}.${i}\nwith a newline`,
        body: 'x'.repeat(bodyBytes),
        text: 't',
        publishedAt: Date.UTC(2026, 4, 1, 9) / 1000,
        chunks: [{ text: `chunk ${seq}.${i}`, vector: UNIT }],
      },
    ]);
    if (out.status !== 'new') throw new Error(`revision ${key}: ${out.status}`);
    r = { ord: out.ord, label: store.revisions.get(out.ord)!.labelStart };
    refs.set(key, r);
  }
  return r;
}

function makeEvent(monitor: string, seq: number, bodyBytes = 40): NewEvent {
  const rs = [0, 1].map((i) => revision(seq, i, bodyBytes));
  return { monitor, ords: rs.map((r) => r.ord), labels: rs.map((r) => r.label), scores: [0.9, 0.8] };
}

/** Commits each seq as its own window, pays it and announces it: what the pump does. */
async function publish(monitor: string, seqs: number[], bodyBytes?: number): Promise<void> {
  for (const seq of seqs) {
    await commitPaid(monitors, seq, seq - 5, T0 + seq, [makeEvent(monitor, seq, bodyBytes)], T0);
    feed.emit([{ monitor, seq }]);
  }
}

const range = (from: number, to: number, step = 1): number[] => Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);

/** Waits for a condition (never for a time): fails with `what` if it does not come. */
async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

// --- the server under test ---

interface Served {
  res: http.ServerResponse;
  closed: boolean;
}
interface Settings {
  heartbeatMs?: number;
  maxBufferedBytes?: number;
  signal?: AbortSignal;
}

const logLines: Record<string, unknown>[] = [];
const log = pino(
  { level: 'info' },
  new Writable({
    write(chunk, _enc, cb) {
      logLines.push(JSON.parse(String(chunk)));
      cb();
    },
  }),
);

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A server whose every request streams the monitor named by its path. */
async function serve(settings: Settings = {}): Promise<{ port: number; streams: Served[] }> {
  const streams: Served[] = [];
  const server = http.createServer((req, res) => {
    const after = parseLastEventId(req.headers['last-event-id']);
    if (after === 'invalid') {
      res.writeHead(400).end('invalid Last-Event-ID');
      return;
    }
    const s: Served = { res, closed: false };
    streams.push(s);
    streamEvents(res, {
      store: monitors,
      feed,
      monitor: req.url!.slice(1),
      after,
      heartbeatMs: settings.heartbeatMs ?? 60_000,
      maxBufferedBytes: settings.maxBufferedBytes ?? 1_048_576,
      log,
      signal: settings.signal,
      onClose: () => {
        expect(s.closed, 'onClose is called once').toBe(false);
        s.closed = true;
      },
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, streams };
}

// --- the client: node:http and a small SSE parser ---

interface Frame {
  id: string | null;
  event: string | null;
  data: string;
}

class SseClient {
  readonly frames: Frame[] = [];
  readonly comments: string[] = [];
  retry: number | null = null;
  ended = false;
  closed = false;
  #buf = '';

  constructor(
    readonly req: http.ClientRequest,
    readonly res: http.IncomingMessage,
  ) {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => this.#take(chunk));
    res.on('end', () => (this.ended = true));
    res.on('close', () => (this.closed = true));
    res.on('error', () => {}); // a cut connection: `closed` says so
  }

  get seqs(): number[] {
    return this.frames.map((f) => Number(f.id));
  }

  /** Complete blocks only: an event cut off by a closed connection is dropped, as EventSource does. */
  #take(chunk: string): void {
    this.#buf += chunk.replace(/\r\n?/g, '\n');
    for (let i = this.#buf.indexOf('\n\n'); i >= 0; i = this.#buf.indexOf('\n\n')) {
      const block = this.#buf.slice(0, i);
      this.#buf = this.#buf.slice(i + 2);
      const frame: Frame = { id: null, event: null, data: '' };
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments.push(line.slice(1).trim());
          continue;
        }
        const colon = line.indexOf(':');
        const name = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (name === 'data') data.push(value);
        else if (name === 'id') frame.id = value;
        else if (name === 'event') frame.event = value;
        else if (name === 'retry') this.retry = Number(value);
      }
      if (data.length > 0) this.frames.push({ ...frame, data: data.join('\n') });
    }
  }

  close(): void {
    this.req.destroy();
  }
}

/** Opens a stream; `paused`: the client reads nothing after the headers until its socket is resumed. */
function connect(port: number, monitor: string, opts: { lastEventId?: string | string[]; paused?: boolean } = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = { accept: 'text/event-stream' };
    if (opts.lastEventId !== undefined) headers['last-event-id'] = opts.lastEventId;
    const req = http.get({ host: '127.0.0.1', port, path: `/${monitor}`, headers, agent: false }, (res) => {
      const c = new SseClient(req, res);
      // Paused, the response stops taking data from its socket once its own buffer is full.
      if (opts.paused) res.pause();
      resolve(c);
    });
    req.on('error', reject);
  });
}

// --- the tests ---

describe('parseLastEventId', () => {
  it('reads a seq, no header as null, and anything else as invalid', () => {
    expect(parseLastEventId(undefined)).toBe(null);
    expect(parseLastEventId('')).toBe(null);
    expect(parseLastEventId([])).toBe(null);
    expect(parseLastEventId('0')).toBe(0);
    expect(parseLastEventId('42')).toBe(42);
    expect(parseLastEventId(['42'])).toBe(42);
    expect(parseLastEventId('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER);
    for (const bad of ['9007199254740992', '1e3', '-1', '1.5', '+4', '0x10', 'evt_1', '5, 6', '٣'])
      expect(parseLastEventId(bad), JSON.stringify(bad)).toBe('invalid');
    expect(parseLastEventId(['5', '6'])).toBe('invalid');
  });

  it('a Last-Event-ID header sent twice reaches the server as invalid', async () => {
    const { port } = await serve();
    const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http.get({ host: '127.0.0.1', port, path: '/mon_x', headers: { 'last-event-id': ['5', '6'] }, agent: false }, resolve).on('error', reject),
    );
    res.resume();
    expect(res.statusCode).toBe(400);
  });
});

describe('streamEvents', () => {
  it('sends the SSE headers, the retry delay, and each event as id, event and one-line JSON data', async () => {
    const monitor = await createMonitor();
    await publish(monitor, [10]);
    const { port } = await serve();
    const c = await connect(port, monitor);
    await until(() => c.frames.length === 1, 'the stored event');
    expect(c.res.statusCode).toBe(200);
    expect(c.res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(c.res.headers['cache-control']).toBe('no-cache');
    expect(c.res.headers['x-accel-buffering']).toBe('no');
    expect(c.res.headers.connection).toBe('keep-alive');
    expect(c.retry).toBe(STREAM_RETRY_MS);
    const e = monitors.event(monitor, 10)!;
    expect(c.frames[0]).toEqual({
      id: '10',
      event: 'matches',
      data: JSON.stringify({
        id: `evt_${monitor.slice(4)}_10`,
        type: 'monitor.matches',
        created: '2026-05-01T09:30:15Z',
        monitor,
        from_seq: 5,
        seq: 10,
        count: 2,
        items: e.items,
      }),
    });
    c.close();
  });

  it('sends live events in order, and a resume with Last-Event-ID gets exactly the events after it, those committed while away included', async () => {
    const monitor = await createMonitor();
    await publish(monitor, [10, 20, 30]);
    const { port, streams } = await serve();

    const a = await connect(port, monitor);
    await until(() => a.frames.length === 3, 'the replay');
    await publish(monitor, range(40, 200, 10));
    await until(() => a.frames.length === 20, 'the live events');
    expect(a.seqs).toEqual(range(10, 200, 10));
    expect(feed.listeners(monitor)).toBe(1);
    a.close();
    await until(() => streams[0].closed && feed.listeners(monitor) === 0, 'the server to release the closed stream');

    // Committed while no client is connected: only LMDB has them.
    await publish(monitor, range(210, 250, 10));
    // A Last-Event-ID between two seqs works too (seqs are window ends, not counts).
    const b = await connect(port, monitor, { lastEventId: '185' });
    await until(() => b.frames.length === 7, 'the resume');
    await publish(monitor, [260, 270]);
    await until(() => b.frames.length === 9, 'live after the resume');
    expect(b.seqs).toEqual(range(190, 270, 10));
    // Every event exactly once across both connections.
    expect([...new Set([...a.seqs, ...b.seqs])].sort((x, y) => x - y)).toEqual(range(10, 270, 10));

    // No header: every stored event, over several pages of the replay.
    await publish(monitor, range(271, 520));
    const all = await connect(port, monitor);
    await until(() => all.frames.length === 277, 'the full replay');
    expect(all.seqs).toEqual([...range(10, 270, 10), ...range(271, 520)]);
    b.close();
    all.close();
  });

  it('an event committed while the replay waits for the client is sent once, in order', async () => {
    const monitor = await createMonitor();
    // 128 KiB an event, 7.5 MiB in all: more than loopback's socket buffers take.
    await publish(monitor, range(1, 60), 64 * 1024);
    const { port, streams } = await serve();
    const c = await connect(port, monitor, { paused: true });
    // The replay fills the socket and waits for 'drain': it is mid-replay.
    await until(() => streams[0]?.res.writableNeedDrain === true, 'the replay to wait for drain');
    // Paced by 'drain': what waits in memory is a socket's high-water mark and one event, not the rest.
    expect(streams[0].res.writableLength).toBeLessThan(256 * 1024);
    await publish(monitor, [61], 64 * 1024);
    c.res.resume();
    await until(() => c.frames.length >= 61, 'the replay and the event committed during it');
    // Announced again (a listener must not trust the feed to say each once): not sent twice.
    feed.emit([{ monitor, seq: 61 }]);
    await publish(monitor, [62]);
    await until(() => c.frames.length >= 62, 'the next live event');
    expect(c.seqs).toEqual(range(1, 62));
    c.close();
  });

  it('sends a heartbeat comment when nothing else is written', async () => {
    const monitor = await createMonitor();
    const { port } = await serve({ heartbeatMs: 50 });
    const c = await connect(port, monitor);
    await until(() => c.comments.filter((x) => x === 'heartbeat').length >= 3, 'heartbeats');
    expect(c.frames).toEqual([]);
    await publish(monitor, [5]);
    await until(() => c.frames.length === 1, 'an event between heartbeats');
    await until(() => c.comments.length >= 5, 'heartbeats after it');
    expect(c.seqs).toEqual([5]);
    c.close();
  });

  it('cuts a client that stops reading once its buffer passes the cap, releases everything, and its resume gets the rest', async () => {
    const monitor = await createMonitor();
    const cap = 64 * 1024;
    const bodyBytes = 50 * 1024;
    const { port, streams } = await serve({ heartbeatMs: 60_000, maxBufferedBytes: cap });
    const c = await connect(port, monitor, { paused: true });
    await until(() => streams.length === 1 && feed.listeners(monitor) === 1, 'the stream');
    const logged = logLines.length;
    let seq = 0;
    // Large events until the server gives up on the client (the kernel's socket buffers fill first).
    while (!streams[0].closed) {
      expect(seq, 'the client is cut before 40 MB were sent to it').toBeLessThan(400);
      await publish(monitor, [++seq], bodyBytes);
      await new Promise((r) => setImmediate(r));
    }
    expect(feed.listeners(monitor)).toBe(0);
    expect(streams[0].res.destroyed).toBe(true);
    const lines = logLines.slice(logged).filter((l) => l.msg === 'monitor stream closed: the client reads too slowly');
    expect(lines).toHaveLength(1);
    const line = lines[0] as { level: number; monitor: string; bufferedBytes: number; maxBufferedBytes: number };
    expect(line.level).toBe(30); // info
    expect(line.monitor).toBe(monitor);
    // Checked before each write: the buffer never held more than the cap and one event.
    expect(line.bufferedBytes).toBeGreaterThan(cap);
    expect(line.bufferedBytes).toBeLessThanOrEqual(cap + 2 * bodyBytes + 2048);
    // Later events find no listener and cost the closed stream nothing.
    await publish(monitor, [++seq, ++seq]);

    // The client reads what reached it (an event cut mid-way is dropped), then sees the end.
    c.res.resume();
    await until(() => c.closed, 'the client to see the connection end');
    expect(c.frames.length).toBeGreaterThan(0);
    expect(c.seqs).toEqual(range(1, c.frames.length));
    const r = await connect(port, monitor, { lastEventId: String(c.seqs.at(-1)) });
    await until(() => r.frames.length === seq - c.frames.length, 'the resume');
    expect([...c.seqs, ...r.seqs]).toEqual(range(1, seq));
    r.close();
  });

  it('releases the listener and timer when the client closes', async () => {
    const monitor = await createMonitor();
    const { port, streams } = await serve({ heartbeatMs: 20 });
    const c = await connect(port, monitor);
    await until(() => c.comments.length > 0, 'a heartbeat');
    expect(feed.listeners(monitor)).toBe(1);
    c.close();
    await until(() => streams[0].closed, 'the server to see the close');
    expect(feed.listeners(monitor)).toBe(0);
  });

  it('an abort ends the response, writing nothing more, and releases everything', async () => {
    const monitor = await createMonitor();
    const shutdown = new AbortController();
    const { port, streams } = await serve({ signal: shutdown.signal });
    const c = await connect(port, monitor);
    await publish(monitor, [1, 2]);
    await until(() => c.frames.length === 2, 'two events');
    shutdown.abort();
    await until(() => c.ended, 'the response to end');
    expect(streams[0].closed).toBe(true);
    expect(feed.listeners(monitor)).toBe(0);
    await publish(monitor, [3]);
    expect(c.seqs).toEqual([1, 2]);

    // Already aborted (shutdown began while the request was on its way): headers, retry, end.
    const d = await connect(port, monitor);
    await until(() => d.ended, 'the second response to end');
    expect(d.res.statusCode).toBe(200);
    expect(d.frames).toEqual([]);
    expect(streams[1].closed).toBe(true);
    expect(feed.listeners(monitor)).toBe(0);
  });
});
