/**
 * Email addresses as pages write them: plain, in mailto: links, obfuscated against
 * harvesters ("info [at] acme [dot] de"), or hidden by Cloudflare's email protection.
 */
import { decodeHTML } from 'entities';

/**
 * Decodes Cloudflare's email protection: `data-cfemail="HEX"` or `/cdn-cgi/l/email-protection#HEX`.
 * The first byte is an XOR key for the bytes after it, which are the address in UTF-8:
 * "42230220" is key 0x42 over 0x23 0x02 0x20, "a@b". Null for anything that is not such hex.
 */
export function decodeCfEmail(hex: string): string | null {
  if (!/^(?:[0-9a-f]{2}){2,}$/i.test(hex)) return null;
  const key = parseInt(hex.slice(0, 2), 16);
  const bytes = new Uint8Array(hex.length / 2 - 1);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 + i * 2, 4 + i * 2), 16) ^ key;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

// Asset names that look like addresses: "logo@2x.png", "icon@3x.webp", "bundle@1.2.js".
const ASSET_TLD = /^(?:png|jpe?g|gif|svg|webp|avif|bmp|ico|tiff?|css|s?js|mjs|json|map|woff2?|ttf|otf|eot|mp[34]|webm|pdf)$/;
// Placeholders from form hints and templates, and error trackers' ingest addresses.
const JUNK_DOMAIN =
  /(?:^|\.)(?:example\.(?:com|org|net)|domain\.com|email\.com|sentry\.io|wixpress\.com)$|(?:^|\.)(?:your-?domain|your-?site|your-?company)\.[a-z]+$/;
const JUNK_LOCAL = /^(?:your[._-]?(?:name|email|mail)|first[._-]?(?:name)?[._-]?last(?:name)?|vorname[._-]?nachname|max[._-]?mustermann|[0-9a-f]{32})$/;

/** An address with its domain lower-cased, or null when it is not one or is a placeholder or tracker. */
export function cleanEmail(raw: string): string | null {
  const m = raw.trim().match(/^([a-z0-9._%+-]+)@([a-z0-9.-]+)$/i);
  if (!m) return null;
  const local = m[1]!;
  const domain = m[2]!.toLowerCase();
  if (local.length > 64 || /^\.|\.\.|\.$/.test(local)) return null;
  const labels = domain.split('.');
  const tld = labels[labels.length - 1]!;
  if (labels.length < 2 || labels.some((l) => !/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(l))) return null;
  if (!/^(?:[a-z]{2,24}|xn--[a-z0-9-]+)$/.test(tld) || ASSET_TLD.test(tld)) return null;
  if (JUNK_DOMAIN.test(domain) || JUNK_LOCAL.test(local.toLowerCase())) return null;
  return `${local}@${domain}`;
}

/*
 * Obfuscations turned back into "@" and ".": any bracketed at/dot ("[at]", "(dot)", "{at}",
 * "<at>"), and bare " AT " / " DOT " only in capitals, since lower-case "at" is everyday prose.
 */
const AT_BRACKETED = /\s*[[({<]\s*(?:at|@)\s*[\])}>]\s*/gi;
const DOT_BRACKETED = /\s*[[({<]\s*(?:dot|punkt|\.)\s*[\])}>]\s*/gi;
const AT_CAPS = /([A-Za-z0-9._%+-]+)\s+AT\s+([A-Za-z0-9-]+(?:(?:\s+DOT\s+|\.)[A-Za-z0-9-]+)+)/g;
const EMAIL = /[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+/gi;

/** The addresses in a piece of text, plain or obfuscated, cleaned, in order, without repeats. */
export function emailsInText(text: string): string[] {
  const plain = text
    .replace(AT_BRACKETED, '@')
    .replace(DOT_BRACKETED, '.')
    .replace(AT_CAPS, (_, local: string, domain: string) => `${local}@${domain.replace(/\s+DOT\s+/g, '.')}`);
  return dedupe((plain.match(EMAIL) ?? []).map(cleanEmail));
}

/** The addresses of a mailto: href ("mailto:a@x.de,b@x.de?subject=…"), entities and percent-encoding undone. */
export function emailsFromMailto(href: string): string[] {
  // The parser has decoded one level of entities already; pages that encode twice need another.
  let v = decodeHTML(href)
    .replace(/^\s*mailto:/i, '')
    .split('?')[0]!;
  try {
    v = decodeURIComponent(v);
  } catch {
    // A stray "%" leaves the text as it is.
  }
  return dedupe(v.split(/[,;]/).map((e) => cleanEmail(e)));
}

/** Non-null values, first spelling kept, repeats dropped case-insensitively. */
export function dedupe(list: (string | null)[]): string[] {
  const seen = new Set<string>();
  return list.filter((e): e is string => e !== null && !seen.has(e.toLowerCase()) && !!seen.add(e.toLowerCase()));
}
