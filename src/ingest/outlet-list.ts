/**
 * A list of outlets kept as data (default-outlets.json ships with the code; QUICKSTART_OUTLETS
 * names another), added as `newsmatch sources add` adds one:
 *
 *   { "interval": "15m",
 *     "outlets": [{ "name": "NOS", "homepage": "https://nos.nl/", "feeds": ["https://feeds.nos.nl/nosnieuwsalgemeen"],
 *                   "language": "nl", "country": "NL" }, …] }
 *
 * An outlet may also carry `interval` and `fetchArticles` (default false: headlines and
 * snippets only, one request a feed a round).
 */
import fs from 'node:fs';
import shipped from './default-outlets.json' with { type: 'json' };
import { OutletError, type Outlets } from './outlets.js';

export interface ListedOutlet {
  name: string;
  homepage: string;
  feeds: string[];
  language?: string;
  country?: string;
  interval?: string;
  fetchArticles?: boolean;
}

/** Where the shipped list is, as the README and the messages name it. */
export const DEFAULT_OUTLETS_FILE = 'src/ingest/default-outlets.json';

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const optional = (v: unknown, type: 'string' | 'boolean') => v === undefined || typeof v === type;

/** The outlets of `file` (JSON in the shape above), or of the shipped list when `file` is undefined. Throws OutletError naming what is wrong. */
export function readOutletList(file?: string): ListedOutlet[] {
  const from = file ?? DEFAULT_OUTLETS_FILE;
  let data: unknown = shipped;
  if (file !== undefined) {
    try {
      data = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
      throw new OutletError(`${from}: ${(e as Error).message}`);
    }
  }
  const list = data as { interval?: unknown; outlets?: unknown };
  if (!Array.isArray(list?.outlets)) throw new OutletError(`${from}: an object with an "outlets" array`);
  if (!optional(list.interval, 'string')) throw new OutletError(`${from}: "interval" is a string such as 15m`);
  return (list.outlets as Record<string, unknown>[]).map((o, i) => {
    const ok =
      typeof o?.name === 'string' &&
      typeof o.homepage === 'string' &&
      isStrings(o.feeds) &&
      optional(o.language, 'string') &&
      optional(o.country, 'string') &&
      optional(o.interval, 'string') &&
      optional(o.fetchArticles, 'boolean');
    if (!ok)
      throw new OutletError(`${from}: outlet ${i + 1} needs name, homepage and feeds (strings); language, country, interval and fetchArticles are optional`);
    return { ...(o as unknown as ListedOutlet), interval: (o.interval as string | undefined) ?? (list.interval as string | undefined) };
  });
}

/**
 * Adds each outlet of `list` that `outlets` lacks (by name); those present are left as they are
 * (the operator may have disabled or changed them). A malformed outlet throws OutletError
 * naming it; the ones before it stay added.
 */
export function addOutletList(outlets: Outlets, list: ListedOutlet[]): { added: string[]; present: string[] } {
  const added: string[] = [];
  const present: string[] = [];
  for (const o of list) {
    if (outlets.get(o.name.trim())) {
      present.push(o.name);
      continue;
    }
    try {
      outlets.add(o);
    } catch (e) {
      if (e instanceof OutletError) throw new OutletError(`outlet "${o.name}": ${e.message}`);
      throw e;
    }
    added.push(o.name);
  }
  return { added, present };
}
