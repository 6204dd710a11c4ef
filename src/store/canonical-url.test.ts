import { describe, expect, it } from 'vitest';
import { canonicalUrl } from './canonical-url.js';

describe('canonicalUrl', () => {
  it.each([
    ['HTTPS://News.Example.COM:443/a?id=7&utm_source=x#top', 'https://news.example.com/a?id=7'],
    ['http://example.com/a?utm_medium=m&utm_campaign=c', 'http://example.com/a'],
    ['https://example.com/A/B?fbclid=1&q=2&gclid=3', 'https://example.com/A/B?q=2'],
    ['https://example.com:8443/x', 'https://example.com:8443/x'],
    ['  https://example.com/x  ', 'https://example.com/x'],
  ])('%s → %s', (raw, want) => expect(canonicalUrl(raw)).toBe(want));

  it.each(['not a url', 'ftp://example.com/x', 'mailto:a@b.c', '/relative/path', ''])('rejects %j', (raw) => {
    expect(canonicalUrl(raw)).toBeNull();
  });
});
