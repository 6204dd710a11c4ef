/**
 * Joining what a page's markup shows with what its JSON-LD says of the same records: the
 * JSON-LD's values are the site's own data, the markup has what the JSON-LD leaves out.
 */

/** `a`'s fields, with `b`'s where `a` has none (null, '' or false). */
export function prefer<T extends object>(a: T, b: T): T {
  const out = { ...a };
  for (const k of Object.keys(b) as (keyof T)[]) if (out[k] === null || out[k] === '' || out[k] === false) out[k] = b[k];
  return out;
}

export interface MergeOptions<T> {
  /** How a JSON-LD record and its card combine; `prefer(ld, card)` by default. */
  join?: (ld: T, card: T) => T;
  /** Without ids on either side, lists of equal length pair by position. */
  byPosition?: boolean;
}

/**
 * The cards in page order, each joined with the JSON-LD record of the same id, then the
 * JSON-LD records no card matched. Either list alone is returned as it is.
 */
export function mergeById<T extends { id: string | null }>(cards: T[], ld: T[], { join = prefer, byPosition = false }: MergeOptions<T> = {}): T[] {
  if (!ld.length || !cards.length) return ld.length ? ld : cards;
  const byId = new Map(ld.filter((r) => r.id).map((r) => [r.id, r]));
  const byIndex = byPosition && byId.size === 0 && cards.every((c) => !c.id) && cards.length === ld.length;
  const used = new Set<T>();
  const out = cards.map((c, i) => {
    const match = byIndex ? ld[i] : c.id ? byId.get(c.id) : undefined;
    if (!match) return c;
    used.add(match);
    return join(match, c);
  });
  return [...out, ...ld.filter((r) => !used.has(r))];
}
