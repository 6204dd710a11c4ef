/**
 * Requests by route, method and status, and their latency, counted on the request path with
 * plain numbers and turned into Prometheus samples only when scraped.
 *
 * prom-client's own `inc(labels)` / `observe(labels, v)` build a label-hash string on every
 * call; here a request costs one Map lookup by its route's config object (one per route
 * pattern, so a raw URL or query string never becomes a label), a status count and a bucket
 * increment.
 */
import type { Metric } from 'prom-client';

/** One sample as prom-client's Registry formats it (its own type is not exported). */
interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/** Latency buckets in seconds: 1 ms (a keyword page) up to 30 s (past the live-scrape deadline). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The route label of a request no route matched (a route pattern always starts with `/`). */
const UNMATCHED = 'unmatched';

/** What Fastify keeps per route (`req.routeOptions.config`): its pattern, absent for no route. */
export interface RouteConfig {
  url?: string;
}

interface Slot {
  labels: { method: string; route: string };
  /** Responses by status code. */
  statuses: Map<number, number>;
  /** Per-bucket (not cumulative) counts; the last one is +Inf. */
  buckets: Float64Array;
  sum: number;
  count: number;
}

export class RequestMetrics {
  /** Route config object → method → slot. The config is Fastify's, one per route (and one for all unmatched). */
  readonly #slots = new Map<object, Record<string, Slot>>();

  /** Counts one response: the hot path (see the file comment). */
  observe(config: RouteConfig, method: string, status: number, ms: number): void {
    const slot = this.#slots.get(config)?.[method] ?? this.#add(config, method);
    slot.statuses.set(status, (slot.statuses.get(status) ?? 0) + 1);
    const s = ms / 1000;
    let i = 0;
    while (i < LATENCY_BUCKETS.length && s > LATENCY_BUCKETS[i]) i++;
    slot.buckets[i]++;
    slot.sum += s;
    slot.count++;
  }

  #add(config: RouteConfig, method: string): Slot {
    let byMethod = this.#slots.get(config);
    if (!byMethod) this.#slots.set(config, (byMethod = Object.create(null) as Record<string, Slot>));
    const slot: Slot = {
      labels: { method, route: config.url ?? UNMATCHED },
      statuses: new Map(),
      buckets: new Float64Array(LATENCY_BUCKETS.length + 1),
      sum: 0,
      count: 0,
    };
    byMethod[method] = slot;
    return slot;
  }

  *#each(): Iterable<Slot> {
    for (const byMethod of this.#slots.values()) yield* Object.values(byMethod);
  }

  /** `<name>{method,route,status}`: a counter of responses. */
  counter(name: string, help: string): Metric {
    return collector(name, help, 'counter', () => {
      const values: Sample[] = [];
      for (const s of this.#each()) for (const [status, n] of s.statuses) values.push({ labels: { ...s.labels, status }, value: n });
      return values;
    });
  }

  /** `<name>{method,route}`: a histogram of latency in seconds. */
  histogram(name: string, help: string): Metric {
    return collector(name, help, 'histogram', () => {
      const values: Sample[] = [];
      for (const s of this.#each()) {
        let acc = 0;
        LATENCY_BUCKETS.forEach((le, i) => {
          acc += s.buckets[i];
          values.push({ metricName: `${name}_bucket`, labels: { ...s.labels, le }, value: acc });
        });
        values.push({ metricName: `${name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count });
        values.push({ metricName: `${name}_sum`, labels: s.labels, value: s.sum });
        values.push({ metricName: `${name}_count`, labels: s.labels, value: s.count });
      }
      return values;
    });
  }
}

/**
 * A metric whose samples are computed at scrape time, in the shape prom-client's Registry
 * reads (`get()` → name, help, type, values). prom-client's classes cannot take precomputed
 * histogram buckets, hence this.
 */
function collector(name: string, help: string, type: 'counter' | 'histogram', values: () => Sample[]): Metric {
  const metric = { name, help, type, aggregator: 'sum', get: async () => ({ name, help, type, aggregator: 'sum', values: values() }), reset: () => {} };
  return metric as unknown as Metric;
}
