/**
 * What every live parser shares: a page as a DOM (linkedom), and the one way a parse fails.
 * A parser never returns half a result: a robot check, a captcha, or a page without the
 * markers its layout must have throws ScrapeError, which the engine turns into 502
 * scrape_failed with this detail.
 */
import { parseHTML } from 'linkedom';
import { ScrapeError } from './scrape-error.js';

export { ScrapeError };

/** The page's document. */
export function loadPage(html: string): Document {
  return parseHTML(html).document as unknown as Document;
}

/** Elements whose content is never rendered as text. */
const UNRENDERED = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'SVG', 'IFRAME']);
/** Elements that break a line, so text in neighbouring cells or lines does not run together. */
const BLOCK = new Set([
  'ADDRESS',
  'ARTICLE',
  'ASIDE',
  'BLOCKQUOTE',
  'BR',
  'DD',
  'DIV',
  'DL',
  'DT',
  'FIELDSET',
  'FIGCAPTION',
  'FIGURE',
  'FOOTER',
  'FORM',
  'H1',
  'H2',
  'H3',
  'H4',
  'H5',
  'H6',
  'HEADER',
  'HR',
  'LI',
  'MAIN',
  'NAV',
  'OL',
  'OPTION',
  'P',
  'PRE',
  'SECTION',
  'TABLE',
  'TD',
  'TH',
  'TR',
  'UL',
]);

/**
 * The text under `node` as a reader sees it: unrendered elements left out, each text node's
 * whitespace collapsed (a source line break is no break) and a "\n" around each block element.
 */
export function renderedText(node: Node): string {
  const parts: string[] = [];
  const walk = (n: Node): void => {
    if (n.nodeType === 3) {
      parts.push((n.nodeValue ?? '').replace(/\s+/g, ' '));
      return;
    }
    if (n.nodeType !== 1 && n.nodeType !== 9) return;
    const tag = n.nodeType === 1 ? (n as Element).tagName.toUpperCase() : '';
    if (UNRENDERED.has(tag)) return;
    const block = BLOCK.has(tag);
    if (block) parts.push('\n');
    for (const child of Array.from(n.childNodes)) walk(child);
    if (block) parts.push('\n');
  };
  walk(node);
  return parts.join('');
}

/** Text of an element without what only screen readers or scripts get (sr-only spans, hidden nodes), collapsed; null when empty. */
export function shownText(el: Element | null | undefined): string | null {
  if (!el) return null;
  const copy = el.cloneNode(true) as Element;
  for (const hidden of copy.querySelectorAll('script, style, svg, .sr-only, .visually-hidden, .screen-reader-only, [style*="clip"], [hidden]')) hidden.remove();
  return textOf(copy);
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
  if (
    /^\s*robot check\s*$/i.test(titleEl?.textContent ?? '') ||
    doc.querySelector('form[action*="validateCaptcha"]') ||
    doc.querySelector('iframe[src*="captcha"], .g-recaptcha, #captchacharacters, .h-captcha')
  ) {
    throw new ScrapeError('the site answered with a robot check (captcha) instead of the page');
  }
  if (
    /^(?:just a moment|additional verification required|attention required|verify you are human)\b[\s.!…]*(?:\|.*)?$/i.test(textOf(titleEl) ?? '') ||
    doc.querySelector('#challenge-form, #challenge-running, #challenge-stage')
  ) {
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
