/**
 * The one way a live parse fails: a robot check, a captcha, or a page without the markers its
 * layout must have. The engine turns it into 502 scrape_failed with this detail. Apart from
 * page.ts so that what only catches it does not load linkedom at start-up.
 */
export class ScrapeError extends Error {
  readonly name = 'ScrapeError';
  constructor(readonly detail: string) {
    super(detail);
  }
}
