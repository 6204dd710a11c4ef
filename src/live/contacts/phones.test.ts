import { describe, expect, it } from 'vitest';
import { loadPage } from '../page.js';
import { countryHints, numberKind, phoneFromTel, phonesInText } from './phones.js';

describe('phoneFromTel', () => {
  it('reads a national number under the hint, shown as the link text', () => {
    expect(phoneFromTel('tel:030-1234567', ['DE'], ' 030 / 123 45 67 ')).toEqual({ e164: '+49301234567', shown: '030 / 123 45 67', kind: 'phone' });
  });
  it('reads percent-encoded and "//" forms, shown as written when the text is not the number', () => {
    expect(phoneFromTel('tel:%2B44%2020%207946%200958', ['DE'], 'Call us')).toEqual({ e164: '+442079460958', shown: '+44 20 7946 0958', kind: 'phone' });
    expect(phoneFromTel('TEL://+4930123456-0;ext=12', ['US'])).toEqual({ e164: '+49301234560', shown: '+4930123456-0', kind: 'phone' });
  });
  it('takes the first hint that makes it valid', () => {
    expect(phoneFromTel('tel:020 7946 0958', ['DE', 'GB'])).toEqual({ e164: '+442079460958', shown: '020 7946 0958', kind: 'phone' });
  });
  it('is null for what is no number', () => {
    expect(phoneFromTel('tel:', ['DE'])).toBeNull();
    expect(phoneFromTel('tel:112', ['DE'])).toBeNull();
    expect(phoneFromTel('tel:+1', ['US'])).toBeNull();
  });
});

describe('phonesInText', () => {
  it('reads German numbers under DE, with any separators, and international ones under any hint', () => {
    const text = 'Tel. 030 1234567\nFax: (030) 123 456-78\nLondon: +44 20 7946 0958';
    expect(phonesInText(text, ['DE'])).toEqual([
      { e164: '+49301234567', shown: '030 1234567', kind: 'phone' },
      { e164: '+493012345678', shown: '(030) 123 456-78', kind: 'fax' },
      { e164: '+442079460958', shown: '+44 20 7946 0958', kind: 'phone' },
    ]);
  });
  it('reads British numbers under GB, and not under DE', () => {
    expect(phonesInText('Office 020 7946 0958', ['GB'])).toEqual([{ e164: '+442079460958', shown: '020 7946 0958', kind: 'phone' }]);
    expect(phonesInText('Office 020 7946 0958', ['DE'])).toEqual([]);
  });
  it('takes Indian mobiles written without the trunk 0', () => {
    expect(phonesInText('Mobile: 98765 43210', ['IN'])).toEqual([{ e164: '+919876543210', shown: '98765 43210', kind: 'phone' }]);
  });
  it('tries later hints for what earlier ones do not read, in page order', () => {
    expect(phonesInText('NY (212) 555-0123, Berlin 030 1234567', ['DE', 'US'])).toEqual([
      { e164: '+12125550123', shown: '(212) 555-0123', kind: 'phone' },
      { e164: '+49301234567', shown: '030 1234567', kind: 'phone' },
    ]);
  });
  it('drops order numbers, dates, and numbers that are not valid', () => {
    expect(phonesInText('Order 1234 5678', ['US'])).toEqual([]);
    expect(phonesInText('Order #4155552671 shipped', ['US'])).toEqual([]);
    expect(phonesInText('Bestellnr. 2024031512345 vom 12.03.2024', ['DE'])).toEqual([]);
    expect(phonesInText('Laufzeit 01.01.2024 - 31.12.2024', ['DE'])).toEqual([]);
    expect(phonesInText('IBAN DE89 3704 0044 0532 0130 00, USt-IdNr. DE 123 456 789', ['DE'])).toEqual([]);
    expect(phonesInText('Call 555-0100 or +1 555 555 5555', ['US'])).toEqual([]);
  });
  it('keeps one entry per number', () => {
    expect(phonesInText('030 1234567 or +49 30 1234567', ['DE'])).toEqual([{ e164: '+49301234567', shown: '030 1234567', kind: 'phone' }]);
  });
});

describe('countryHints', () => {
  const page = (head: string, lang = '') => loadPage(`<!doctype html><html${lang}><head>${head}</head><body></body></html>`);
  it('reads lang, og:locale, the page own hreflang, then the TLD, US last', () => {
    const doc = page(
      '<meta property="og:locale" content="fr_CH"><link rel="alternate" hreflang="it-IT" href="https://acme.co.uk/it/"><link rel="alternate" hreflang="es-ES" href="/es/"><link rel="alternate" hreflang="nl-NL" href="https://acme.co.uk/kontakt">',
      ' lang="de-AT"',
    );
    expect(countryHints(doc, 'https://acme.co.uk/kontakt/')).toEqual(['AT', 'CH', 'NL', 'GB', 'US']);
  });
  it('dedupes, keeping the first place', () => {
    expect(countryHints(page('<meta property="og:locale" content="de_DE">', ' lang="de-DE"'), 'https://www.acme.de/')).toEqual(['DE', 'US']);
    expect(countryHints(page('', ' lang="en-US"'), 'https://acme.ca/')).toEqual(['US', 'CA']);
  });
  it('reads script subtags past and ignores language-only tags, vanity and generic TLDs', () => {
    expect(countryHints(page('', ' lang="zh-Hant-TW"'), 'https://acme.io/')).toEqual(['TW', 'US']);
    expect(countryHints(page('', ' lang="de"'), 'https://acme.com/')).toEqual(['US']);
    expect(countryHints(page('', ' lang="en-EU"'), 'https://acme.eu/')).toEqual(['US']);
  });
  it('maps country TLDs', () => {
    const tlds = ['uk', 'fr', 'it', 'es', 'nl', 'ch', 'at', 'au', 'in', 'jp'].map((t) => countryHints(page(''), `https://shop.example.${t}/`)[0]);
    expect(tlds).toEqual(['GB', 'FR', 'IT', 'ES', 'NL', 'CH', 'AT', 'AU', 'IN', 'JP']);
    expect(countryHints(page(''), 'https://acme.com.au/')).toEqual(['AU', 'US']);
  });
});

describe('countryHints from the address and the labels', () => {
  const page = (body: string, head = '', lang = '') => loadPage(`<!doctype html><html${lang}><head>${head}</head><body>${body}</body></html>`);
  it("reads the address's country from JSON-LD (a code or a name, in any language), microdata and geo.region, ahead of the TLD", () => {
    const ld = (v: unknown) =>
      `<script type="application/ld+json">${JSON.stringify({ '@type': 'Organization', address: { '@type': 'PostalAddress', addressCountry: v } })}</script>`;
    expect(countryHints(page('', ld('AT')), 'https://acme.de/')).toEqual(['AT', 'DE', 'US']);
    expect(countryHints(page('', ld('Deutschland')), 'https://acme.com/')).toEqual(['DE', 'US']);
    expect(countryHints(page('', ld({ '@type': 'Country', name: 'Switzerland' })), 'https://acme.com/')).toEqual(['CH', 'US']);
    expect(
      countryHints(page('<p itemscope itemtype="https://schema.org/PostalAddress"><span itemprop="addressCountry">Österreich</span></p>'), 'https://acme.com/'),
    ).toEqual(['AT', 'US']);
    expect(countryHints(page('', '<meta name="geo.region" content="DE-NI">'), 'https://acme.com/')).toEqual(['DE', 'US']);
    expect(countryHints(page('', ld('Atlantis')), 'https://acme.com/')).toEqual(['US']);
  });
  it('hints DE from a label only German writes before a number, unless the page is declared in another language', () => {
    expect(countryHints(page('<p>Telefon: 05191 979238</p>'), 'https://acme.com/')).toEqual(['DE', 'US']);
    expect(countryHints(page('<p>Fon 05191 979238</p>', '', ' lang="de"'), 'https://acme.com/')).toEqual(['DE', 'US']);
    expect(countryHints(page('<p>Telefon: 08-123 456 78</p>', '', ' lang="sv"'), 'https://acme.com/')).toEqual(['US']);
    // "Tel." and "Fax" are English, French and Dutch too; "Telefon" with no number after it is a form's field
    expect(countryHints(page('<p>Tel. 020 7946 0958, Fax 020 7946 0959</p>'), 'https://acme.com/')).toEqual(['US']);
    expect(countryHints(page('<label>Telefon</label><input>'), 'https://acme.com/')).toEqual(['US']);
  });
});

describe('numberKind and the kind of numbers in text', () => {
  it('is a fax where the label before the number ends in a fax word', () => {
    const kinds = (label: string) => numberKind(label);
    expect(['Fax', 'Fax:', 'Telefax ', 'Fax-Nr.: ', 'Faxnummer', 'T: 030 1 / F: ', 'fax.'].map(kinds)).toEqual([
      'fax',
      'fax',
      'fax',
      'fax',
      'fax',
      'fax',
      'fax',
    ]);
    expect(['', 'Tel.', 'Telefon:', 'Fon', 'Phone', 'Tel./Fax:', 'Telefon und Fax:', 'Ref. ', 'Faxen Sie uns an '].map(kinds)).toEqual([
      'phone',
      'phone',
      'phone',
      'phone',
      'phone',
      'phone',
      'phone',
      'phone',
      'phone',
    ]);
  });
  it('labels each number by what stands before it: on its line, after the last number, or on a short line above', () => {
    const text = 'Tel.: 030 1234567 / Fax: 030 1234568\nFax 040 1111111, 040 2222222\nFax\n089 123456\nZentrale\n089 654321';
    expect(phonesInText(text, ['DE']).map((p) => [p.shown, p.kind])).toEqual([
      ['030 1234567', 'phone'],
      ['030 1234568', 'fax'],
      ['040 1111111', 'fax'],
      ['040 2222222', 'fax'], // a second number after the line's "Fax" label
      ['089 123456', 'fax'], // a table's "Fax" cell on the line above
      ['089 654321', 'phone'],
    ]);
  });
});

describe('phonesInText on long pages', () => {
  it('reads only the number-like runs: ids glued to letters are no numbers, and prose costs no parse', () => {
    expect(phonesInText('Artikel ID49301234567 und Kunde 030 1234567x', ['DE'])).toEqual([]);
    const prose = 'Lorem ipsum dolor sit amet, on 12.03.2024 consectetur adipiscing elit.\n'.repeat(20_000);
    const found = phonesInText(`${prose}Telefon: 030 1234567\n`, ['DE', 'US']);
    expect(found).toEqual([{ e164: '+49301234567', shown: '030 1234567', kind: 'phone' }]);
  });
});

describe('phonesInText on a page of thousands of numbers', () => {
  it('reads its head and its foot: the footer number is found', () => {
    const list = Array.from({ length: 5000 }, (_, i) => `Ticket ${100000 + i}: 030 ${1000000 + i}`).join('\n');
    const found = phonesInText(`Zentrale: 089 123456\n${list}\nFax: 040 7654321\n`, ['DE']).map((p) => p.e164);
    expect(found[0]).toBe('+4989123456');
    expect(found.at(-1)).toBe('+49407654321');
    expect(found).not.toContain('+49301002500'); // the middle of the list is not read
  });
});
