/**
 * The keyword query language of /v1/news and /v1/jobs, compiled to an FTS5 MATCH expression:
 *
 *   election results     both words (AND)
 *   "climate deal"       the phrase
 *   wind OR solar        either (OR binds its neighbours: `a OR b c` is (a or b) and c)
 *   -opinion             not this word or "phrase" (also: NOT opinion)
 *   a AND b              the same as `a b`
 *   elect*               a prefix (at least 2 characters)
 *
 * Words go through the document tokenizer (text.ts), so case, diacritics and width fold the
 * same way, and a word that tokenizes into several tokens ("e-mail", 東京都) is a phrase.
 */
import { AppError } from '../errors.js';
import { isCjkChar, tokenize } from './text.js';

export interface Term {
  /** Folded tokens: one for a word, several for a phrase. */
  tokens: string[];
  /** The last token is a prefix. */
  prefix: boolean;
}

export interface KeywordQuery {
  /** Every group must match; a group matches when any of its terms does. */
  groups: Term[][];
  /** No term may match. */
  excluded: Term[];
  /** The FTS5 MATCH expression. */
  match: string;
}

const MIN_PREFIX = 2;
const MAX_TERMS = 32;

/** Parses `q`; 400 empty_query when nothing searchable is left, bad_request when it is malformed. */
export function parseQuery(q: string): KeywordQuery {
  const groups: Term[][] = [];
  const excluded: Term[] = [];
  let orPending = false;
  let notPending = false;
  let count = 0;
  // A quoted phrase (the closing quote may be missing), or a run of anything but space and quote.
  for (const m of q.matchAll(/(-?)"([^"]*)"?|(\S*[^\s"])/gu)) {
    const raw = m[3];
    if (raw === 'OR') {
      orPending = groups.length > 0;
      continue;
    }
    if (raw === 'AND' || raw === 'NOT') {
      notPending = raw === 'NOT';
      continue;
    }
    let neg = m[1] === '-' || notPending;
    notPending = false;
    let text = m[2];
    let prefix = false;
    if (raw !== undefined) {
      const dash = raw.startsWith('-') && raw.length > 1;
      neg ||= dash;
      text = dash ? raw.slice(1) : raw;
      prefix = text.endsWith('*');
      if (prefix) text = text.replace(/\*+$/, '');
    }
    const tokens = tokenize(text, true).map((t) => t.norm);
    if (tokens.length === 0) {
      orPending = false;
      continue;
    }
    // One CJK character stands at the head of the bigrams that hold it (or alone at a run's end).
    if (tokens.length === 1 && isCjkChar(tokens[0])) prefix = true;
    else if (prefix && [...tokens[tokens.length - 1]].length < MIN_PREFIX) {
      throw new AppError('bad_parameter', `q: a prefix needs at least ${MIN_PREFIX} characters before the *, got "${raw}"`);
    }
    if (++count > MAX_TERMS) throw new AppError('bad_parameter', `q: at most ${MAX_TERMS} terms`);
    const term = { tokens, prefix };
    if (neg) {
      excluded.push(term);
      orPending = false;
    } else if (orPending) {
      groups[groups.length - 1].push(term);
      orPending = false;
    } else {
      groups.push([term]);
    }
  }
  if (groups.length === 0) {
    throw new AppError(
      'empty_query',
      excluded.length ? 'q: only excluded terms; add a word to search for' : 'q: no searchable word (letters or digits) in the query',
    );
  }
  const phrase = (t: Term) => `"${t.tokens.join(' ')}"${t.prefix ? ' *' : ''}`;
  const anyOf = (terms: Term[]) => (terms.length === 1 ? phrase(terms[0]) : `(${terms.map(phrase).join(' OR ')})`);
  let match = groups.map(anyOf).join(' AND ');
  if (excluded.length) match = `(${match}) NOT ${anyOf(excluded)}`;
  return { groups, excluded, match };
}

/**
 * What of a folded token the query matched, for highlighting: 'all' (a word, a phrase's
 * token, a prefix's word), 'first' (a one-character CJK term heads the bigram: only that
 * character), or null.
 */
export type TokenMatch = 'all' | 'first' | null;

export function termMatcher(query: Pick<KeywordQuery, 'groups'>): (norm: string) => TokenMatch {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  const heads = new Set<string>();
  for (const t of query.groups.flat()) {
    t.tokens.forEach((tok, i) => {
      if (!t.prefix || i < t.tokens.length - 1) exact.add(tok);
      else if (t.tokens.length === 1 && isCjkChar(tok)) heads.add(tok);
      else prefixes.push(tok);
    });
  }
  return (norm) => {
    if (exact.has(norm) || prefixes.some((p) => norm.startsWith(p))) return 'all';
    if (heads.size === 0) return null;
    const head = String.fromCodePoint(norm.codePointAt(0)!);
    if (!heads.has(head)) return null;
    return head === norm ? 'all' : 'first';
  };
}
