/** The source filter every article search takes. */
import type { AppError } from '../errors.js';
import type { SourceRecord } from './lmdb-store.js';

/**
 * Source ids a sources / exclude_sources filter allows (null: no filter). A name neither
 * stored nor an enabled outlet is refused with `unknown` (422 on /v1/match, 400 unknown_source
 * on the platform's endpoints).
 */
export function resolveSources(
  sources: SourceRecord[],
  include: string[] | undefined,
  exclude: string[] | undefined,
  outlets: () => Set<string>,
  unknownError: (message: string) => AppError,
): Set<number> | null {
  const names = include ?? exclude;
  if (!names) return null;
  const known = new Map(sources.map((s) => [s.name, s.id]));
  // An outlet not polled yet is a valid name (GET /v1/sources lists it) that selects nothing.
  const missing = names.filter((n) => !known.has(n));
  const unknown = missing.length > 0 ? missing.filter((n) => !outlets().has(n)) : missing;
  if (unknown.length > 0) {
    const field = include ? 'sources' : 'exclude_sources';
    throw unknownError(`${field}: unknown source ${unknown.map((n) => JSON.stringify(n)).join(', ')} (see GET /v1/sources)`);
  }
  const ids = (list: string[]) => list.filter((n) => known.has(n)).map((n) => known.get(n)!);
  if (include) return new Set(ids(include));
  const excluded = new Set(ids(exclude!));
  return new Set([...known.values()].filter((id) => !excluded.has(id)));
}
