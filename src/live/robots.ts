/**
 * robots.txt for live reads that crawl a site (contacts), per RFC 9309: a 2xx file is
 * parsed (robots-parser: longest match wins, wildcards), a 4xx means no rules, and a 5xx
 * means the whole site is off limits.
 */
import robotsModule from 'robots-parser';
import type { LiveCall } from './engine.js';

// A CommonJS function whose types declare an ES default export: the import is the function.
export const robotsParser = robotsModule as unknown as (url: string, text: string) => { isAllowed(url: string, ua?: string): boolean | undefined };

export class Robots {
  private constructor(
    private readonly rules: { isAllowed(url: string, ua?: string): boolean | undefined } | null,
    /** Set when the whole site is off limits: why. */
    private readonly closed: string | null,
  ) {}

  static async read(call: LiveCall, origin: string, maxBytes: number): Promise<Robots> {
    const url = `${origin}/robots.txt`;
    // A site that cannot be reached at all fails the call (502), rather than reading as "disallowed".
    const page = await call.get(url, { anyStatus: true, untrusted: true, offSite: 'stop', cutAt: maxBytes });
    if (page.redirectedTo || (page.status >= 400 && page.status < 500)) return new Robots(null, null);
    if (page.status >= 500) return new Robots(null, `robots.txt answered HTTP ${page.status}, so the site is treated as disallowed (RFC 9309)`);
    return new Robots(robotsParser(url, page.html), null);
  }

  /** Null when `agent` may read `url`, else why not. */
  refusal(url: string, agent: string): string | null {
    if (this.closed) return this.closed;
    return this.rules?.isAllowed(url, agent) === false ? 'robots.txt disallows it' : null;
  }
}
