/**
 * Row ids are the time order: seconds since 1900 shifted past a slot within the second, so
 * they stay below 2^53 (JavaScript's exact integers) through 2172. Times outside 1900..2172
 * are clamped for ordering only (the exact time is kept beside, and filters read it).
 */
const SLOT_BITS = 20;
const SLOTS = 2 ** SLOT_BITS;
const EPOCH = Date.UTC(1900, 0, 1) / 1000;
const ridBase = (seconds: number): number => Math.min(Math.max(Math.floor(seconds) - EPOCH, 0), 2 ** 33 - 1) * SLOTS;

/** The rid range of rows whose time is within [since, until] (either bound open). */
export function ridRange(since?: number, until?: number): { lo: number; hi: number } {
  return { lo: since === undefined ? -1 : ridBase(since), hi: until === undefined ? Number.MAX_SAFE_INTEGER : ridBase(until) + SLOTS - 1 };
}

/** The next free rid of a row at `seconds`, given a statement answering the largest rid in [a, b). */
export function nextRid(maxRid: { get(a: number, b: number): unknown }, seconds: number): number {
  const base = ridBase(seconds);
  const top = maxRid.get(base, base + SLOTS) as number | null;
  if (top === null) return base;
  if (top + 1 >= base + SLOTS) throw new Error(`more than ${SLOTS} rows in one second of the keyword index`);
  return top + 1;
}
