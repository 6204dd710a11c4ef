/**
 * Vector queries on a node that holds some shards' vectors (shards.ts): each group serving a
 * shard the query touches answers on `nm.q.<group>`, one of its nodes chosen by NATS's queue
 * group (another if it does not answer), and the rows are merged here: newest first for
 * order=time (the keyset cursor (t, id) is the cluster's, revision ids coming from the log),
 * best first for order=relevance. A group answers from all the vectors it holds, so groups
 * whose ranges overlap (while shards are being split again) return some rows twice: the same
 * revision, the same id and score, kept once. Each group's first `take` rows hold every row of
 * the merged first `take` it holds, so the merge is exact. A touched shard no live group serves is 503
 * `shard_unavailable` naming it, never a page without its rows.
 */
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { AppError, isAppError } from '../errors.js';
import { newestFirst, type RoutedQuery, type RoutedRow, type ShardRouter } from '../match/index.js';
import { groupOf, serves, type ShardSet, touched } from './shards.js';

/** How long a group has to answer, and how many times it is asked (a queue group picks another node the next time). */
const ASK_MS = 10_000;
const ASKS = 2;

/** What a node answers for its group. */
export type GroupRequest = { kind: 'rows'; q: RoutedQuery } | { kind: 'like'; id: string };

/** The live groups (group id → the shards it serves) and the shards the log holds: read from NATS by the cluster. */
export interface ShardMap {
  groups(): Promise<Map<string, ShardSet>>;
  known(): Promise<string[]>;
}

export class QueryRouter implements ShardRouter {
  readonly #ownGroup: string;

  constructor(
    readonly nc: NatsConnection,
    readonly own: ShardSet,
    readonly map: ShardMap,
    /** This node's own answer for its group: asked directly, not through NATS. */
    readonly local: (r: GroupRequest) => Promise<unknown>,
  ) {
    this.#ownGroup = groupOf(own);
  }

  async rows(q: RoutedQuery): Promise<RoutedRow[]> {
    const shards = touched(await this.map.known(), q.since, q.until, q.includeEdits);
    const plan = await this.#plan(shards);
    const answers = await Promise.all([...plan].map(([g, of]) => this.#ask<RoutedRow[]>(g, of, { kind: 'rows', q })));
    const seen = new Set<string>();
    const rows = answers.flat().filter((r) => !seen.has(r.id) && seen.add(r.id));
    if (q.order === 'time') rows.sort(newestFirst);
    else rows.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return rows.slice(0, q.take);
  }

  async likeVectors(id: string, firstPublished: number): Promise<number[][]> {
    const shard = new Date(firstPublished * 1000).toISOString().slice(0, 7);
    const [[group, of]] = await this.#plan([shard]);
    return this.#ask<number[][]>(group, of, { kind: 'like', id });
  }

  /** The groups that answer for `shards`: this node's own where it serves one, else a group that serves all, else the one serving it. */
  async #plan(shards: string[]): Promise<Map<string, string[]>> {
    const groups = await this.map.groups();
    const plan = new Map<string, string[]>();
    const missing: string[] = [];
    for (const s of shards) {
      let g: string | undefined;
      if (serves(this.own, s)) g = this.#ownGroup;
      else if (groups.has('all')) g = 'all';
      else for (const [id, set] of groups) if (serves(set, s)) g = id;
      if (g) plan.set(g, [...(plan.get(g) ?? []), s]);
      else missing.push(s);
    }
    if (missing.length > 0) {
      throw new AppError('shard_unavailable', `no live node holds the vectors of shard${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (CLUSTER_SHARDS)`);
    }
    return plan;
  }

  /** Asks `group` (which holds `shards`), twice at most; 503 shard_unavailable naming the shards when no node of it answers. */
  async #ask<T>(group: string, shards: string[], req: GroupRequest): Promise<T> {
    if (group === this.#ownGroup) return (await this.local(req)) as T;
    let last: unknown;
    for (let i = 0; i < ASKS; i++) {
      try {
        const m = await this.nc.request(`nm.q.${group}`, JSON.stringify(req), { timeout: ASK_MS });
        return decodeAnswer<T>(m.string());
      } catch (e) {
        if (isAppError(e)) throw e;
        last = e;
      }
    }
    throw new AppError(
      'shard_unavailable',
      `no node holding the vectors of shard${shards.length > 1 ? 's' : ''} ${shards.join(', ')} answered (${(last as Error).message})`,
    );
  }
}

/** Answers this node's group's requests with `handle`, until the subscription is closed. */
export function serveGroup(nc: NatsConnection, own: ShardSet, handle: (r: GroupRequest) => Promise<unknown>, log: Logger): Subscription {
  const group = groupOf(own);
  return nc.subscribe(`nm.q.${group}`, {
    queue: group,
    callback: (err, msg) => {
      if (err) return;
      void (async () => {
        try {
          msg.respond(encodeAnswer(await handle(msg.json<GroupRequest>())));
        } catch (e) {
          if (!isAppError(e)) log.error({ err: e }, 'cluster: answering a shard query failed');
          const error = isAppError(e)
            ? { code: e.code, message: e.message, extra: e.extra }
            : { code: 'internal', message: 'the node answering for the shard failed' };
          msg.respond(JSON.stringify({ error }));
        }
      })();
    },
  });
}

/**
 * An answer on the wire: JSON, and for rows their items after it, a line each (an item is
 * compact JSON, with no line break in it), so they are not escaped into a string and back.
 */
function encodeAnswer(ok: unknown): string {
  if (!Array.isArray(ok) || ok.length === 0 || typeof (ok[0] as RoutedRow).item !== 'string') return JSON.stringify({ ok });
  const rows = ok as RoutedRow[];
  return `${JSON.stringify({ rows: rows.map(({ t, id, score }) => [t, id, score]) })}\n${rows.map((r) => r.item).join('\n')}`;
}

function decodeAnswer<T>(text: string): T {
  const nl = text.indexOf('\n');
  const head = JSON.parse(nl < 0 ? text : text.slice(0, nl)) as {
    ok?: T;
    rows?: [number, string, number][];
    error?: { code: string; message: string; extra?: Record<string, unknown> };
  };
  // The group's refusal is this query's (too_many_matches keeps its matched_at_least).
  if (head.error) throw new AppError(head.error.code as never, head.error.message, { extra: head.error.extra });
  if (!head.rows) return head.ok as T;
  const items = text.slice(nl + 1).split('\n');
  return head.rows.map(([t, id, score], i) => ({ t, id, score, item: items[i] })) as T;
}
