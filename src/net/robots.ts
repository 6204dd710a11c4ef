/**
 * robots.txt rules, per RFC 9309: a 2xx file is parsed (robots-parser: longest match wins,
 * wildcards), a 4xx (or a file that cannot be found past its redirects) means no rules, and a
 * 5xx, or a file that cannot be read at all, closes the whole site. Reading the file is the
 * client's (http-client.ts); which name the rules are matched against, and whether an
 * unreachable file closes the site or fails the read, is the policy's (policies.ts).
 */
import robotsModule from 'robots-parser';

// A CommonJS function whose types declare an ES default export: the import is the function.
const robotsParser = robotsModule as unknown as (url: string, text: string) => { isAllowed(url: string, ua?: string): boolean | undefined };

/** robots.txt longer than this is cut (RFC 9309 asks crawlers to read at least 500 KiB). */
export const ROBOTS_MAX_BYTES = 512 * 1024;

export class Robots {
  private constructor(
    /** The name groups are matched against. */
    readonly agent: string,
    private readonly rules: { isAllowed(url: string, ua?: string): boolean | undefined } | null,
    /** Set when the whole site is off limits: why. */
    private readonly closed: string | null,
  ) {}

  /** The rules of the answer `status` with `text` gave for the robots.txt at `url`. */
  static answered(agent: string, url: string, status: number, text: string): Robots {
    if (status >= 500) return new Robots(agent, null, `robots.txt answered HTTP ${status}, so the site is treated as disallowed (RFC 9309)`);
    if (status >= 200 && status < 300) return new Robots(agent, robotsParser(url, text), null);
    return Robots.none(agent);
  }

  /** No rules: the file is missing (4xx), or redirects past the limit or off the site. */
  static none(agent: string): Robots {
    return new Robots(agent, null, null);
  }

  /** The file could not be read (network, deadline): the whole site is treated as disallowed. */
  static unreachable(agent: string): Robots {
    return new Robots(agent, null, 'robots.txt could not be read, so the site is treated as disallowed (RFC 9309)');
  }

  /** Null when the agent may read `url`, else why not. */
  refusal(url: string): string | null {
    if (this.closed) return this.closed;
    return this.rules?.isAllowed(url, this.agent) === false ? 'robots.txt disallows it' : null;
  }
}
