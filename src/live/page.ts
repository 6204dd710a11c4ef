/**
 * What every live parser shares: a page as a DOM (linkedom), and the one way a parse fails.
 * A parser never returns half a result: a robot check, a captcha, or a page without the
 * markers its layout must have throws ScrapeError, which the engine turns into 502
 * scrape_failed with this detail.
 */
import { parseHTML } from 'linkedom';

export class ScrapeError extends Error {
  readonly name = 'ScrapeError';
  constructor(readonly detail: string) {
    super(detail);
  }
}

/** The page's document. */
export function loadPage(html: string): Document {
  return parseHTML(html).document as unknown as Document;
}

/** Text of an element, whitespace collapsed; null when absent or empty. */
export function textOf(el: Element | null | undefined): string | null {
  const t = el?.textContent?.replace(/\s+/g, ' ').trim();
  return t ? t : null;
}

/**
 * Throws when the page is a robot check or captcha rather than content: the marketplace's
 * "validateCaptcha" form and its "Robot Check" title, or the common captcha widgets; or a bot
 * challenge, Cloudflare's interstitials ("Just a moment...") among them, which carry no captcha
 * markers.
 */
export function assertNotRobotCheck(doc: Document): void {
  const titleEl = doc.querySelector('title');
  // Titles are matched whole: a results page's title carries the query, which may say anything.
  if (/^\s*robot check\s*$/i.test(titleEl?.textContent ?? '') || doc.querySelector('form[action*="validateCaptcha"]') || doc.querySelector('iframe[src*="captcha"], .g-recaptcha, #captchacharacters, .h-captcha')) {
    throw new ScrapeError('the site answered with a robot check (captcha) instead of the page');
  }
  if (/^(?:just a moment|additional verification required|attention required|verify you are human)\b[\s.!…]*(?:\|.*)?$/i.test(textOf(titleEl) ?? '') || doc.querySelector('#challenge-form, #challenge-running, #challenge-stage')) {
    throw new ScrapeError('the site answered with a bot challenge instead of the page');
  }
}

/** `href` resolved against `base`; null for none or one that is no URL. */
export function absoluteUrl(href: string | null | undefined, base: string): string | null {
  if (!href) return null;
  try {
    return new URL(href, base).href;
  } catch {
    return null;
  }
}

/** An image's absolute URL (relative src resolved against the site), or null for none or an inline data: URL. */
export function imageUrl(img: Element | null, origin: string): string | null {
  const src = img?.getAttribute('src')?.trim();
  if (!src || src.startsWith('data:')) return null;
  try {
    return new URL(src, `${origin}/`).href;
  } catch {
    return null;
  }
}
