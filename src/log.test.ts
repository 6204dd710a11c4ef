import { describe, expect, it } from 'vitest';
import { redactUrl } from './log.js';

const KEY = 'nmb_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcd';

describe('redactUrl', () => {
  it('replaces the values of secret-named parameters, whatever they hold', () => {
    expect(redactUrl('/v1/news?q=port&api_key=hunter2&limit=5')).toBe('/v1/news?q=port&api_key=[redacted]&limit=5');
    expect(redactUrl('/v1/news?Token=abc&access-token=x&KEY=y')).toBe('/v1/news?Token=[redacted]&access-token=[redacted]&KEY=[redacted]');
    expect(redactUrl('/v1/news?api%5Fkey=abc')).toBe('/v1/news?api%5Fkey=[redacted]');
  });

  it('replaces anything shaped like a key: in a value, a name, a bare word or the path', () => {
    for (const url of [`/v1/news?q=${KEY}`, `/v1/news?q=${encodeURIComponent(KEY)}`, `/v1/news?${KEY}=1`, `/v1/news?${KEY}`, `/v1/x/${KEY}/y?q=1`]) {
      const out = redactUrl(url);
      expect(out, url).not.toContain('AbCdEfGh');
      expect(out).toContain('[redacted]');
    }
  });

  it('leaves other URLs as they are', () => {
    for (const url of ['/v1/news', '/v1/news?q=nmb&sort=time', '/v1/news?q=%E2%80%AE&x', '/v1/news?q=%ZZ']) expect(redactUrl(url)).toBe(url);
  });
});
