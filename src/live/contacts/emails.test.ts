import { describe, expect, it } from 'vitest';
import { cleanEmail, decodeCfEmail, emailsFromMailto, emailsInText } from './emails.js';

/** Cloudflare's encoding, written independently of the decoder: key byte, then each UTF-8 byte XOR key, as hex. */
const cfEncode = (key: number, s: string): string => [key, ...Buffer.from(s, 'utf8').map((b) => b ^ key)].map((b) => b.toString(16).padStart(2, '0')).join('');

describe('emailsInText: obfuscated forms', () => {
  it('reads "[at]" and "[dot]"', () => expect(emailsInText('Mail: info [at] acme [dot] de.')).toEqual(['info@acme.de']));
  it('reads "(at)" and "(dot)"', () => expect(emailsInText('sales (at) acme (dot) com')).toEqual(['sales@acme.com']));
  it('reads "{at}" with a plain dot', () => expect(emailsInText('jobs{at}acme.io')).toEqual(['jobs@acme.io']));
  it('reads capital " AT " and " DOT "', () => expect(emailsInText('PRESS AT ACME DOT CO DOT UK')).toEqual(['PRESS@acme.co.uk']));
  it('reads " AT " with a plain dotted domain', () => expect(emailsInText('write to hello AT acme.org')).toEqual(['hello@acme.org']));
  it('leaves lower-case "at" and "dot" prose alone', () => expect(emailsInText('we are at home dot com, meet me at noon.')).toEqual([]));
});

describe('emailsInText: plain addresses', () => {
  it('finds addresses in order, domain lower-cased, repeats dropped in any case', () => {
    expect(emailsInText('Info@ACME.de, info@acme.de; INFO@acme.DE and support@help.acme.de.')).toEqual(['Info@acme.de', 'support@help.acme.de']);
  });
  it('drops asset names, placeholders and trackers', () => {
    const junk =
      'logo@2x.png icon@3x.webp name@example.com you@sub.example.org me@domain.com x@email.com a@yourdomain.de your.name@acme.de 0123456789abcdef0123456789abcdef@o1.ingest.sentry.io bug@sentry.io 605a7baede844d278b89dc95ae0a9123@sentry-next.wixpress.com';
    expect(emailsInText(`${junk} real@acme.de`)).toEqual(['real@acme.de']);
  });
});

describe('cleanEmail', () => {
  it('validates the shape', () => {
    expect(cleanEmail('A.B+tag@Sub.Acme.CO.UK')).toBe('A.B+tag@sub.acme.co.uk');
    expect(cleanEmail('a..b@acme.de')).toBeNull();
    expect(cleanEmail('.a@acme.de')).toBeNull();
    expect(cleanEmail('a@acme')).toBeNull();
    expect(cleanEmail('a@-acme.de')).toBeNull();
    expect(cleanEmail('a@acme.d3')).toBeNull();
    expect(cleanEmail('a b@acme.de')).toBeNull();
  });
});

describe('emailsFromMailto', () => {
  it('undoes entities the parser left, percent-encoding, and the query', () => {
    expect(emailsFromMailto('mailto:&#109;&#97;x%40Acme.DE?subject=Hello%20there')).toEqual(['max@acme.de']);
  });
  it('reads several recipients', () => expect(emailsFromMailto('MAILTO:a@acme.de,%20b@acme.de')).toEqual(['a@acme.de', 'b@acme.de']));
  it('is empty for an empty or placeholder mailto', () => {
    expect(emailsFromMailto('mailto:')).toEqual([]);
    expect(emailsFromMailto('mailto:name@example.com')).toEqual([]);
  });
});

describe('decodeCfEmail', () => {
  it('decodes a hand-computed vector: key 0x42 over "a@b.co"', () => expect(decodeCfEmail('422302206c212d')).toBe('a@b.co'));
  it('round-trips an independently encoded address, UTF-8 included', () => {
    expect(cfEncode(0x9f, 'kontakt@acme.de')).toMatch(/^9f[0-9a-f]{30}$/);
    expect(decodeCfEmail(cfEncode(0x9f, 'kontakt@acme.de'))).toBe('kontakt@acme.de');
    expect(decodeCfEmail(cfEncode(0x13, 'jürgen@acme.de').toUpperCase())).toBe('jürgen@acme.de');
  });
  it('is null for what is not such hex', () => {
    expect(decodeCfEmail('')).toBeNull();
    expect(decodeCfEmail('42')).toBeNull();
    expect(decodeCfEmail('4223022')).toBeNull();
    expect(decodeCfEmail('zz2302')).toBeNull();
    expect(decodeCfEmail(`${cfEncode(0x42, 'x').slice(0, 2)}ff`)).toBeNull(); // 0xff ^ 0x42 = 0xbd, a lone UTF-8 continuation byte
  });
});
