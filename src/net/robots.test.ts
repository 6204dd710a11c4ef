import { describe, expect, it } from 'vitest';
import { Robots } from './robots.js';

const URL_ = 'https://news.example/robots.txt';

describe('Robots (RFC 9309)', () => {
  const text = 'User-agent: *\nDisallow: /private/\n\nUser-agent: newsmatch\nDisallow: /drafts/\nAllow: /drafts/public\n';

  it('a 2xx file is parsed, the longest match wins, and the agent picks its group', () => {
    const robots = Robots.answered('newsmatch', URL_, 200, text);
    expect(robots.refusal('https://news.example/drafts/x')).toBe('robots.txt disallows it');
    expect(robots.refusal('https://news.example/drafts/public/x')).toBeNull();
    // Its own group replaces `*`.
    expect(robots.refusal('https://news.example/private/x')).toBeNull();
    expect(Robots.answered('other-bot', URL_, 200, text).refusal('https://news.example/private/x')).toBe('robots.txt disallows it');
  });

  it('a 4xx means no rules; a 5xx or an unreadable file closes the site, saying why', () => {
    expect(Robots.answered('newsmatch', URL_, 404, text).refusal('https://news.example/drafts/x')).toBeNull();
    expect(Robots.none('newsmatch').refusal('https://news.example/anything')).toBeNull();
    expect(Robots.answered('newsmatch', URL_, 503, '').refusal('https://news.example/')).toBe(
      'robots.txt answered HTTP 503, so the site is treated as disallowed (RFC 9309)',
    );
    expect(Robots.unreachable('newsmatch').refusal('https://news.example/')).toMatch(/could not be read, so the site is treated as disallowed/);
  });
});
