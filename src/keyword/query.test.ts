import { describe, expect, it } from 'vitest';
import type { AppError } from '../errors.js';
import { highlight } from './highlight.js';
import { parseQuery, termMatcher } from './query.js';
import { fold, indexText, tokenize } from './text.js';

const code = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    return (e as AppError).code;
  }
  return 'ok';
};

describe('tokenizer', () => {
  it('folds case, width, Latin diacritics and ß, but not kana marks', () => {
    expect(indexText('Über CAFÉ Straße Ｔｏｋｙｏ naïve')).toBe('uber cafe strasse tokyo naive');
    expect(fold('ガ')).toBe('ガ'); // the dakuten is part of the letter
    expect(fold('Ωμέγα')).toBe('ωμεγα');
  });

  it('cuts CJK runs into bigrams (a document run ends with its last character), keeps offsets', () => {
    const doc = tokenize('東京都に行く');
    expect(doc.map((t) => t.norm)).toEqual(['東京', '京都', '都に', 'に行', '行く', 'く']);
    expect(doc[1]).toMatchObject({ start: 1, end: 3 });
    expect(tokenize('東京都', true).map((t) => t.norm)).toEqual(['東京', '京都']);
  });

  it('splits Thai into words and mixed words at script changes', () => {
    expect(tokenize('ภาษาไทยง่าย').length).toBeGreaterThan(1);
    expect(tokenize('iPhone15東京').map((t) => t.norm)).toEqual(['iphone15', '東京', '京']);
  });
});

describe('query language', () => {
  it('ANDs words, keeps phrases, binds OR to its neighbours and excludes', () => {
    expect(parseQuery('port strike').match).toBe('"port" AND "strike"');
    expect(parseQuery('"rate cut" bank').match).toBe('"rate cut" AND "bank"');
    expect(parseQuery('wind OR solar farm').match).toBe('("wind" OR "solar") AND "farm"');
    expect(parseQuery('strike -opinion -"op ed"').match).toBe('("strike") NOT ("opinion" OR "op ed")');
    expect(parseQuery('elect*').match).toBe('"elect" *');
  });

  it('makes a multi-token word a phrase and a single CJK character a prefix', () => {
    expect(parseQuery('e-mail').match).toBe('"e mail"');
    expect(parseQuery('東京都').match).toBe('"東京 京都"');
    expect(parseQuery('京').match).toBe('"京" *');
  });

  it('ignores a dangling OR, punctuation-only terms and a lone dash', () => {
    expect(parseQuery('OR port OR').match).toBe('"port"');
    expect(parseQuery('port !!! -').match).toBe('"port"');
  });

  it('refuses what has nothing to search and short prefixes', () => {
    expect(code(() => parseQuery('!!! ...'))).toBe('empty_query');
    expect(code(() => parseQuery('-war'))).toBe('empty_query');
    expect(code(() => parseQuery('"'))).toBe('empty_query');
    expect(code(() => parseQuery('a*'))).toBe('bad_request');
    expect(code(() => parseQuery(Array.from({ length: 33 }, (_, i) => `w${i}`).join(' ')))).toBe('bad_request');
  });

  it('quotes every token, so FTS5 syntax in the input is only text', () => {
    expect(parseQuery('NEAR(a b) col:x "x"').match).toBe('"near a" AND "b" AND "col x" AND "x"');
    expect(parseQuery('war AND peace NOT treaty').match).toBe('("war" AND "peace") NOT "treaty"');
    expect(parseQuery('and not or').match).toBe('"and" AND "not" AND "or"');
  });
});

describe('highlight', () => {
  it('marks matched words in the first text that has one, escaping the rest', () => {
    const m = termMatcher(parseQuery('strike port*'));
    expect(highlight(['nothing here', 'A <b>Strike</b> at the Ports & docks'], m)).toBe(
      'A &lt;b&gt;<mark>Strike</mark>&lt;/b&gt; at the <mark>Ports</mark> &amp; docks',
    );
    expect(highlight(['nothing'], m)).toBeNull();
  });

  it('merges overlapping CJK bigram hits into one mark and cuts long texts around the hit', () => {
    const m = termMatcher(parseQuery('東京都'));
    expect(highlight(['昨日東京都に行った'], m)).toBe('昨日<mark>東京都</mark>に行った');
    const long = `${'word '.repeat(200)}target ${'tail '.repeat(200)}`;
    const h = highlight([long], termMatcher(parseQuery('target')))!;
    expect(h.startsWith('…')).toBe(true);
    expect(h.endsWith('…')).toBe(true);
    expect(h).toContain('<mark>target</mark>');
    expect(h.length).toBeLessThan(300);
  });
});
