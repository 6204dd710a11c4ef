import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, redactUrl } from './log.js';

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

describe('createLogger', () => {
  /** What one request line becomes in `format`. */
  function logged(format: 'json' | 'pretty'): string {
    let out = '';
    const sink = new Writable({
      write(chunk, _enc, done) {
        out += chunk;
        done();
      },
    });
    const log = createLogger('info', sink, format);
    log.info({ req: { method: 'GET', url: `/v1/news?api_key=${KEY}`, headers: { authorization: `Bearer ${KEY}` } } }, 'request');
    return out;
  }

  it('keeps keys out of JSON and pretty lines alike', () => {
    const json = logged('json');
    const pretty = logged('pretty');
    expect(json.split('\n')[0].startsWith('{')).toBe(true);
    expect(pretty.startsWith('{')).toBe(false);
    expect(pretty).toContain('request');
    for (const out of [json, pretty]) {
      expect(out).toContain('/v1/news?api_key=[redacted]');
      expect(out).not.toContain('AbCdEfGh');
    }
  });
});
