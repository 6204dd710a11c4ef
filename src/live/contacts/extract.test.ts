import { describe, expect, it } from 'vitest';
import { loadPage } from '../page.js';
import { countryHints, extractContacts, visibleText } from './extract.js';

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
        { e164: '+49301234567', shown: '030 / 123 45 67' },
        { e164: '+49891234567', shown: '+49 89 1234567' },
        { e164: '+49401234567', shown: '040 1234567' },
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
    expect(extractContacts(page, 'https://acme.com/', []).phones).toEqual([{ e164: '+442079460959', shown: '+44 20 7946 0959' }]);
    expect(extractContacts(page, 'https://acme.co.uk/', ['GB']).phones).toEqual([
      { e164: '+442079460958', shown: '020 7946 0958' },
      { e164: '+442079460959', shown: '+44 20 7946 0959' },
    ]);
  });
});

describe('visibleText', () => {
  it('skips scripts, styles and head, and breaks lines at blocks but not inline elements', () => {
    const doc = loadPage('<html><head><title>T</title></head><body><div>Tel <b>030</b> 1234567</div><table><tr><td>a</td><td>b</td></tr></table><script>x</script><style>y</style>end</body></html>');
    expect(visibleText(doc)).toBe('\nTel 030 1234567\na\nb\nend');
  });
});
