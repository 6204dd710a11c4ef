import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ScrapeError } from '../page.js';
import { parseDepartments } from './categories.js';

const PAGES = path.resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../test/fixtures/pages/amazon-search');
const read = (f: string) => fs.readFileSync(path.join(PAGES, f), 'utf8');

describe('parseDepartments', () => {
  it('reads the department menu of the 2026 .com header', () => {
    const d = parseDepartments(read('amazon-com-search-portable-charger-2026.html'));
    expect(d).toHaveLength(59); // 60 options, "All Departments" left out
    expect(d[0]).toEqual({ name: 'Alexa Skills', alias: 'alexa-skills', node_id: null });
    expect(d.find((x) => x.alias === 'tools')).toEqual({ name: 'Tools & Home Improvement', alias: 'tools', node_id: null });
    expect(d.at(-1)).toEqual({ name: 'Whole Foods Market', alias: 'wholefoods', node_id: null });
    expect(d.some((x) => x.alias === 'aps')).toBe(false);
  });

  it('reads the 2022 .de header too', () => {
    const d = parseDepartments(read('amazon-de-search-katzenfutter-2022.html'));
    expect(d).toHaveLength(48);
    expect(d.map((x) => x.name)).toContain('Amazon Warehouse');
  });

  it('refuses a robot check and a page without the menu', () => {
    expect(() => parseDepartments('<html><head><title>Robot Check</title></head><body><form action="/errors/validateCaptcha"></form></body></html>')).toThrow(
      ScrapeError,
    );
    expect(() => parseDepartments('<html><body><p>hello</p></body></html>')).toThrow(/no department menu/);
  });
});

describe('parseDepartments: a real page of another site', () => {
  // Issue 22: a page without the department menu answers 502, never an empty list.
  it.each(['../publisher/reuters-article-israeli-tank-2024-03-07.html', '../web-search/duckduckgo-html-search-openclaw-2026.html'])(
    '%s is a ScrapeError',
    (name) => {
      expect(() => parseDepartments(read(name))).toThrow(ScrapeError);
    },
  );
});
