/**
 * Tells the parts that push events (open streams, the webhook deliverer) of each event once
 * its window is committed to LMDB: a listener that misses one (not yet connected, restarted)
 * reads it back from the store, so this carries wake-ups, never the only copy.
 */
import type { EventRef } from './store.js';

/** Given which event (a listener that writes it reads it: MonitorStore.event). */
type Listener = (e: EventRef) => void;

export class MonitorFeed {
  readonly #byMonitor = new Map<string, Set<Listener>>();
  readonly #any = new Set<Listener>();

  /** Calls `f` with each new event of `monitor`; returns the unsubscribe. */
  on(monitor: string, f: Listener): () => void {
    let set = this.#byMonitor.get(monitor);
    if (!set) this.#byMonitor.set(monitor, (set = new Set()));
    set.add(f);
    return () => {
      set.delete(f);
      if (set.size === 0 && this.#byMonitor.get(monitor) === set) this.#byMonitor.delete(monitor);
    };
  }

  /** Calls `f` with every new event of any monitor. */
  onAny(f: Listener): () => void {
    this.#any.add(f);
    return () => this.#any.delete(f);
  }

  /** Listeners of `monitor` (streams open on it). */
  listeners(monitor: string): number {
    return this.#byMonitor.get(monitor)?.size ?? 0;
  }

  emit(events: readonly EventRef[]): void {
    for (const e of events) {
      for (const f of this.#any) f(e);
      const set = this.#byMonitor.get(e.monitor);
      if (set) for (const f of [...set]) f(e);
    }
  }
}
