/**
 * Writes monitor events as the pump does (monitors/monitors.ts): a window from per-monitor
 * matches, a bill per account, committed, then paid; for tests of what reads events back
 * (streams, webhooks, recovery).
 */
import { type MonitorStore, type NewEvent, windowOf } from '../../src/monitors/index.js';
import { vectorB64, writeLines } from './corpus.js';

interface Bill {
  seq: number;
  from: number;
  created: number;
  account: string;
  monitors: NonNullable<ReturnType<MonitorStore['get']>>[];
  units: number;
}

/** Commits window `seq` ([from, seq)) with `events`; returns its bills, unpaid. */
export async function commitEvents(store: MonitorStore, seq: number, from: number, created: number, events: NewEvent[]): Promise<Bill[]> {
  const bills = new Map<string, Bill>();
  for (const e of events) {
    const m = store.get(e.monitor)!;
    let b = bills.get(m.account);
    if (!b) bills.set(m.account, (b = { seq, from, created, account: m.account, monitors: [], units: 0 }));
    b.monitors.push(m);
    b.units += e.ords.length;
  }
  await store.commitWindow(
    seq,
    windowOf(from, created, events, (id) => store.get(id)!.num),
    bills.keys(),
  );
  return [...bills.values()];
}

/** Commits and pays window `seq`, as a pump whose charges all land. */
export async function commitPaid(store: MonitorStore, seq: number, from: number, created: number, events: NewEvent[], now: number): Promise<void> {
  const bills = await commitEvents(store, seq, from, created, events);
  await store.settle(
    bills.map((bill) => ({ bill, refused: null })),
    now,
  );
}

/** Writes a JSONL import of one-chunk articles at `urls`, each chunk's vector from `vector()` (near a monitor's query: each a match). */
export function writeArrivals(file: string, urls: string[], published: string, vector: () => Float64Array): void {
  writeLines(
    file,
    urls.map((url) => ({
      url,
      source: 'Wire One',
      title: url,
      snippet: 's',
      text: 't',
      published_at: published,
      chunks: [{ text: url, vector_b64: vectorB64(vector()) }],
    })),
  );
}
