import { describe, expect, it } from 'vitest';
import { loadPage } from '../page.js';
import { contactPageLinks } from './links.js';

const PAGE = 'https://www.acme.de/produkte/';
const html = `<!doctype html><html><body>
  <nav>
    <a href="/team">Unser Team</a>
    <a href="/ueber-uns/">Über uns</a>
    <a href="https://acme.de/impressum.html">Impressum</a>
    <a href="#kontakt">Kontakt</a>
    <a href="/service/kontakt#form">Kontakt</a>
    <a href="/service/kontakt">Schreiben Sie uns</a>
    <a href="/unternehmen">Unternehmen</a>
    <a href="/people">People</a>
    <a href="https://shop.acme.de/contact">Contact the shop</a>
    <a href="https://other.de/kontakt">Partner</a>
    <a href="mailto:info@acme.de">Contact</a>
    <a href="tel:+49301234567">Contact</a>
    <a href="/downloads/kontakt.pdf">Kontaktformular (PDF)</a>
    <a href="/produkte/">About our products</a>
    <a href="/blog/2024/neues-produkt">Wir haben ein neues Produkt, das Ihr Team und Ihre Kontakte begeistern wird</a>
    <a href="/products">Products</a>
    <a href="http://www.acme.de/legal-notice">Legal notice</a>
  </nav></body></html>`;

describe('contactPageLinks', () => {
  it('ranks contact, imprint, about, team on the same site, in page order within a rank', () => {
    expect(contactPageLinks(loadPage(html), PAGE, 10)).toEqual([
      'https://www.acme.de/service/kontakt',
      'https://acme.de/impressum.html',
      'http://www.acme.de/legal-notice',
      'https://www.acme.de/ueber-uns/',
      'https://www.acme.de/unternehmen',
      'https://www.acme.de/team',
      'https://www.acme.de/people',
    ]);
  });
  it('stops at max', () => {
    expect(contactPageLinks(loadPage(html), PAGE, 2)).toEqual(['https://www.acme.de/service/kontakt', 'https://acme.de/impressum.html']);
    expect(contactPageLinks(loadPage(html), PAGE, 0)).toEqual([]);
  });
  it('matches on the path when the text says nothing, and respects <base>', () => {
    const doc = loadPage(
      '<html><head><base href="https://acme.co.uk/en/"></head><body><a href="contact-us.aspx">›</a><a href="about-us">›</a><a href="https://acme.co.uk/en/">Contact</a></body></html>',
    );
    expect(contactPageLinks(doc, 'https://acme.co.uk/en/', 5)).toEqual(['https://acme.co.uk/en/contact-us.aspx', 'https://acme.co.uk/en/about-us']);
  });
  it('keeps the best rank of a page linked twice', () => {
    const doc = loadPage('<a href="/info">Team</a><a href="/x">x</a><a href="/info/">Contact</a><a href="/about">About</a>');
    expect(contactPageLinks(doc, 'https://acme.com/', 5)).toEqual(['https://acme.com/info', 'https://acme.com/about']);
  });
});

describe('contactPageLinks: the port is part of the site', () => {
  it('does not take the same host name on another port for the site', () => {
    const doc = loadPage('<a href="http://acme.test:8080/kontakt">Kontakt</a><a href="/impressum">Impressum</a><a href="http://www.acme.test/about">About</a>');
    expect(contactPageLinks(doc, 'http://acme.test/', 5)).toEqual(['http://acme.test/impressum', 'http://www.acme.test/about']);
  });
});
