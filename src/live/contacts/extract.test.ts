import { describe, expect, it } from 'vitest';
import { readFixture } from '../../../test/helpers/pages.js';
import { loadPage } from '../page.js';
import { countryHints, extractContacts, readContactsPage, visibleText } from './extract.js';

const URL_DE = 'https://www.acme.de/kontakt';
const HTML_DE = `<!doctype html><html lang="de-DE"><head>
  <title>Kontakt 030 7777777 title@acme.de</title>
  <script type="application/ld+json">{"@context":"https://schema.org","@graph":[{"@type":"Organization","email":"mailto:presse@acme.de",
    "contactPoint":{"@type":"ContactPoint","telephone":"+49 89 1234567","email":"Support(at)acme.de"},
    "sameAs":["https://twitter.com/AcmeHQ","instagram.com/Acme.DE","https://www.facebook.com/AcmeGmbH"]}]}</script>
  <script type="application/ld+json">{ "broken": true, }</script>
  <style>.x::after { content: "040 9999999 css@acme.de" }</style>
</head><body>
  <header><a href="mailto:&amp;#109;&amp;#97;x%40Acme.DE?subject=Hallo">Schreiben</a>
  <a href="tel:+49301234567">030 / 123 45 67</a></header>
  <main>
    <p>E-Mail: <a href="/cdn-cgi/l/email-protection#422302206c212d">[email&#160;protected]</a>
      or <span class="__cf_email__" data-cfemail="9ff4f0f1ebfef4ebdffefcf2fab1fbfa">[email&#160;protected]</span></p>
    <p>Vertrieb: vertrieb [at] acme [dot] de, Tel. 040 1234567</p>
    <table><tr><td>Bestellnr.</td><td>2024031512345</td></tr><tr><td>Fax</td><td>030 1234567</td><td>0301234568</td></tr></table>
    <img src="/img/logo@2x.png" alt="logo@2x.png">
  </main>
  <footer>
    <a href="https://www.facebook.com/sharer.php?u=https%3A%2F%2Facme.de">Teilen</a>
    <a href="https://www.facebook.com/AcmeGmbH/">Facebook</a>
    <a href="//www.linkedin.com/company/acme-gmbh/">LinkedIn</a>
    <a href="https://twitter.com/intent/tweet?text=x">Tweet</a>
    <a href="/impressum">Impressum</a>
  </footer>
  <script>window.cfg = { phone: "030 5555555", mail: "js@acme.de" };</script>
  <noscript>noscript@acme.de</noscript>
</body></html>`;

describe('extractContacts', () => {
  const doc = loadPage(HTML_DE);
  it('reads every source in order: links, protected links, visible text, JSON-LD', () => {
    expect(countryHints(doc, URL_DE)).toEqual(['DE', 'US']);
    expect(extractContacts(doc, URL_DE, countryHints(doc, URL_DE))).toEqual({
      emails: ['max@acme.de', 'a@b.co', 'kontakt@acme.de', 'vertrieb@acme.de', 'presse@acme.de', 'Support@acme.de'],
      phones: [
        { e164: '+49301234567', shown: '030 / 123 45 67', kind: 'phone' },
        { e164: '+49891234567', shown: '+49 89 1234567', kind: 'phone' },
        { e164: '+49401234567', shown: '040 1234567', kind: 'phone' },
      ],
      socials: [
        { network: 'facebook', url: 'https://facebook.com/AcmeGmbH' },
        { network: 'linkedin', url: 'https://linkedin.com/company/acme-gmbh' },
        { network: 'x', url: 'https://x.com/acmehq' },
        { network: 'instagram', url: 'https://instagram.com/acme.de' },
      ],
    });
  });
  it('is empty for a page without contacts', () => {
    expect(extractContacts(loadPage('<p>Nothing here, order 1234 5678.</p>'), 'https://acme.com/', ['US'])).toEqual({ emails: [], phones: [], socials: [] });
  });
  it('reads numbers written without "+" only under a hint', () => {
    const page = loadPage('<p>Call 020 7946 0958 or +44 20 7946 0959</p>');
    expect(extractContacts(page, 'https://acme.com/', []).phones).toEqual([{ e164: '+442079460959', shown: '+44 20 7946 0959', kind: 'phone' }]);
    expect(extractContacts(page, 'https://acme.co.uk/', ['GB']).phones).toEqual([
      { e164: '+442079460958', shown: '020 7946 0958', kind: 'phone' },
      { e164: '+442079460959', shown: '+44 20 7946 0959', kind: 'phone' },
    ]);
  });
});

describe('visibleText', () => {
  it('skips scripts, styles and head, and breaks lines at blocks but not inline elements', () => {
    const doc = loadPage(
      '<html><head><title>T</title></head><body><div>Tel <b>030</b> 1234567</div><table><tr><td>a</td><td>b</td></tr></table><script>x</script><style>y</style>end</body></html>',
    );
    expect(visibleText(doc)).toBe('\nTel 030 1234567\na\nb\nend');
  });
});

describe('the labels of tel: and fax: links', () => {
  const phones = (body: string, head = '') =>
    extractContacts(loadPage(`<html lang="de-DE"><head>${head}</head><body>${body}</body></html>`), 'https://acme.de/', ['DE']).phones;
  it('is a fax where the text before the link, its own text or the cell before says so', () => {
    expect(phones('<p>Tel.: <a href="tel:+49301234567">030 1234567</a><br>Fax: <a href="tel:+49301234568">030 1234568</a></p>').map((p) => p.kind)).toEqual([
      'phone',
      'fax',
    ]);
    expect(phones('<p><a href="tel:030-1234568">Telefax 030 1234568</a></p>')[0]!.kind).toBe('fax');
    expect(phones('<table><tr><td>Fax</td><td><a href="tel:+49301234568">030 1234568</a></td></tr></table>')[0]!.kind).toBe('fax');
    // a label in an earlier paragraph labels nothing here
    expect(phones('<p>Fax</p><p>Zentrale</p><p><a href="tel:+49301234567">030 1234567</a></p>')[0]!.kind).toBe('phone');
  });
  it('is a fax for a fax: link and a JSON-LD faxNumber', () => {
    const ld = '<script type="application/ld+json">{"@type":"Organization","telephone":"+49 89 1234567","faxNumber":"+49 89 1234568"}</script>';
    expect(phones('<a href="fax:+49301234568">Fax senden</a>', ld)).toEqual([
      { e164: '+49301234568', shown: '+49301234568', kind: 'fax' },
      { e164: '+49891234567', shown: '+49 89 1234567', kind: 'phone' },
      { e164: '+49891234568', shown: '+49 89 1234568', kind: 'fax' },
    ]);
  });
});

/**
 * A real Impressum: markeich.de, a German agency's Jimdo site (contacts/ in
 * test/fixtures/pages/PROVENANCE.md). Every expected value was read by hand from the HTML; the
 * comment beside it gives the line of the file it stands on.
 */
describe('readContactsPage: the real Impressum page (markeich.de)', () => {
  const html = readFixture('contacts/markeich_de_impressum.html');
  const URL_IMPRESSUM = 'https://www.markeich.de/kontakt/impressum-werbeagentur-soltau/'; // its <link rel="canonical">, line 30

  it('finds the one email, the phone and the fax written as plain national numbers, and the three profiles', () => {
    const page = readContactsPage(html, URL_IMPRESSUM, null, 5);
    // <html lang="de-DE"> line 2, <meta property="og:locale" content="de_DE"> line 21, the .de host
    expect(page.hints).toEqual(['DE', 'US']);
    expect(page.contacts).toEqual({
      // <a href="mailto:info@markeich.de"> line 373 (the Impressum) and line 532 (the Kontakt box): one address
      emails: ['info@markeich.de'],
      phones: [
        // line 361 "Fon  05191 979238<br/>": text only, no tel: link; Soltau's area code 05191 read under DE; again line 520
        { e164: '+495191979238', shown: '05191 979238', kind: 'phone' },
        // line 364 "Fax   05191 979228", in its own <p>: labelled a fax; again line 524 "Fax 05191 979228"
        { e164: '+495191979228', shown: '05191 979228', kind: 'fax' },
      ],
      // line 565: the "Netzwerke" box's three icon links, in that order
      socials: [
        { network: 'facebook', url: 'https://facebook.com/markeich' },
        { network: 'x', url: 'https://x.com/marke_ich' },
        { network: 'instagram', url: 'https://instagram.com/agentur.markeich' },
      ],
    });
    // Not numbers: "29614 Soltau" (line 355), the VAT id "DE246292916", "50969 Köln", "© 2020"; the form's "Telefon" field (line 629) is empty.
    // The nav (line 303): "Kontakt" /kontakt-werbeagentur-soltau/ before "Unternehmen" /unternehmen/ (contact, then about); "Impressum" is the page itself.
    expect(page.links).toEqual(['https://www.markeich.de/kontakt-werbeagentur-soltau/', 'https://www.markeich.de/unternehmen/']);
  });

  it('reads the numbers as German from their German labels alone: lang and og:locale taken out, on a .com host', () => {
    const bare = html.replace('<html lang="de-DE">', '<html>').replace('<meta property="og:locale" content="de_DE"/>', '');
    const page = readContactsPage(bare, 'https://www.markeich.example.com/kontakt/impressum-werbeagentur-soltau/', null, 5);
    expect(page.hints).toEqual(['DE', 'US']); // from "Fon 05191 979238": "Fon" is German only
    expect(page.contacts.phones.map((p) => [p.e164, p.kind])).toEqual([
      ['+495191979238', 'phone'],
      ['+495191979228', 'fax'],
    ]);
  });
});

describe('readContactsPage on real pages of other sites: nothing invented', () => {
  /** Each contact found stands on the page: the email and the social handle in its HTML, the number as shown in its visible text. */
  const expectOnPage = (html: string, c: ReturnType<typeof readContactsPage>['contacts']) => {
    const text = visibleText(loadPage(html));
    for (const e of c.emails) expect(html.toLowerCase()).toContain(e.toLowerCase());
    for (const p of c.phones) expect(text).toContain(p.shown);
    for (const s of c.socials) expect(html.toLowerCase()).toContain(new URL(s.url).pathname.split('/').pop()!.toLowerCase());
  };

  it('an Amazon product page, thousands of prices, ASINs, ratings and ids: no email, no phone, no profile', () => {
    const html = readFixture('amazon-product/amazon-com-product-portable-charger-2026.html');
    const page = readContactsPage(html, 'https://www.amazon.com/dp/B0DR8G428S', null, 5);
    expect(page.contacts).toEqual({ emails: [], phones: [], socials: [] });
  });

  it("a Reuters article: no email and no phone; only Reuters' own profiles, which its links name", () => {
    const html = readFixture('publisher/reuters-article-israeli-tank-2024-03-07.html');
    const page = readContactsPage(html, 'https://www.reuters.com/world/middle-east/israeli-tank-likely-fired-machine-gun-reporters-2024-03-07/', null, 5);
    expect([page.contacts.emails, page.contacts.phones]).toEqual([[], []]);
    // the footer's links (byte 175405 on: twitter.com/Reuters, facebook, instagram, youtube, linkedin 10256858),
    // then the JSON-LD sameAs (byte 10880) adds linkedin.com/company/reuters2 and tiktok.com/@reuters
    expect(page.contacts.socials.map((s) => s.network)).toEqual(['x', 'facebook', 'instagram', 'youtube', 'linkedin', 'linkedin', 'tiktok']);
    expectOnPage(html, page.contacts);
  });

  it("an AP article: no phone; the reporter's address from its JSON-LD author, and profiles its links name", () => {
    const html = readFixture('publisher/apnews-article-presidential-campaigns-2024-09-03.html');
    const page = readContactsPage(html, 'https://apnews.com/article/x', null, 5);
    expect(page.contacts.phones).toEqual([]);
    expect(page.contacts.emails).toEqual(['TBeaumont@ap.org']); // the NewsArticle's author Person, "email":"TBeaumont@ap.org"
    // twitter.com/AP, instagram.com/apnews, facebook.com/APNews, the reporter's twitter.com/TomBeaumont; not the share links
    expect(page.contacts.socials.map((s) => s.url).sort()).toEqual([
      'https://facebook.com/APNews',
      'https://instagram.com/apnews',
      'https://x.com/ap',
      'https://x.com/tombeaumont',
    ]);
    expectOnPage(html, page.contacts);
  });
});
