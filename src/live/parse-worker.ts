/**
 * A Piscina worker that runs live parsers (src/live/parsers.ts) off the event loop: a large
 * page costs a parse of a few hundred milliseconds (a 1.5 MB product page, ~400 ms), which
 * on the main thread every other request would wait behind. A ScrapeError comes back as
 * data: an Error loses its class and fields on the way between threads.
 */
import { ScrapeError } from './scrape-error.js';
import { PARSERS, type ParserName } from './parsers.js';

export interface ParseTask {
  name: ParserName;
  args: unknown[];
}

export type ParseOutcome = { ok: true; value: unknown } | { ok: false; scrape: boolean; message: string };

export default function parse({ name, args }: ParseTask): ParseOutcome {
  try {
    return { ok: true, value: (PARSERS[name] as (...a: unknown[]) => unknown)(...args) };
  } catch (e) {
    return { ok: false, scrape: e instanceof ScrapeError, message: e instanceof ScrapeError ? e.detail : String((e as Error)?.message ?? e) };
  }
}
