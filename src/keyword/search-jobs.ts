/**
 * GET /v1/jobs as a function of its query: postings newest first, filtered by keywords (the
 * /v1/news query language), vocabulary skills (all required), location words, remote and
 * posting time; keyset cursor. The route checks and types the parameters; the SQL runs on a
 * reader thread.
 */
import { AppError } from '../errors.js';
import type { JobsIndex } from './jobs.js';
import { highlight } from './highlight.js';
import { parseQuery, termMatcher, type TokenMatch } from './query.js';
import { tokenize } from './text.js';
import { fingerprint, type CursorCodec } from '../cursor/index.js';
import { formatTime } from '../time.js';
import type { JobRecord, JobStore, Vocabulary } from '../jobs/index.js';

export interface JobsDeps {
  jobs: JobStore;
  jobsIndex: JobsIndex;
  vocabulary: Vocabulary;
  cursors: CursorCodec;
}

/** A search, checked and typed by the route (its schema holds the defaults). */
export interface JobsQuery {
  q?: string;
  /** Vocabulary names or aliases, all required (resolveSkills). */
  skills: string[];
  /** Words of the location, in order. */
  location?: string;
  remote?: boolean;
  /** Postings from this time, Unix seconds. */
  since?: number;
  /** Rows a page, 1 to 100. */
  limit: number;
  cursor?: string;
}

export interface JobResult {
  id: string;
  url: string;
  title: string;
  company: string;
  location: string | null;
  remote: boolean | null;
  employment_type: string | null;
  salary_min: number | null;
  salary_max: number | null;
  salary_currency: string | null;
  skills: string[];
  posted_at: string;
  source: string;
  /** The description's opening, up to about 300 characters. */
  snippet: string;
  /** With `q`: a passage with the matched words in <mark>…</mark>. */
  highlight?: string | null;
}

export interface JobsResponse {
  results: JobResult[];
  count: number;
  next_cursor: string | null;
  /** True while the keyword index is catching up with a large backlog: postings stored meanwhile may be missing. */
  partial: boolean;
}

/** Canonical names of skill names or aliases; 400 unknown_skill naming any outside the vocabulary. */
export function resolveSkills(vocabulary: Vocabulary, names: readonly string[]): string[] {
  const unknown = names.filter((n) => !vocabulary.resolve(n));
  if (unknown.length)
    throw new AppError(
      'unknown_skill',
      `skills: ${unknown.map((n) => JSON.stringify(n)).join(', ')} not in the reviewed vocabulary (GET /v1/taxonomies/skills)`,
    );
  return [...new Set(names.map((n) => vocabulary.resolve(n)!.name))];
}

/** The FTS5 expression of q and location together (null: neither). */
function matchOf(q: string | undefined, location: string | undefined): { match: string | null; matches?: (norm: string) => TokenMatch } {
  const parts: string[] = [];
  let matches: ((norm: string) => TokenMatch) | undefined;
  if (q !== undefined) {
    const query = parseQuery(q);
    parts.push(`(${query.match})`);
    matches = termMatcher(query);
  }
  if (location !== undefined) {
    const tokens = tokenize(location, true).map((t) => t.norm);
    if (tokens.length === 0) throw new AppError('bad_parameter', 'location: no letters or digits');
    parts.push(`location : "${tokens.join(' ')}"`);
  }
  return { match: parts.length ? parts.join(' AND ') : null, matches };
}

const opening = (s: string, max = 300): string => {
  if (s.length <= max) return s;
  const cut = s.lastIndexOf(' ', max);
  return `${s.slice(0, cut > max / 2 ? cut : max)}…`;
};

export function jobResult(j: JobRecord): JobResult {
  return {
    id: j.id,
    url: j.url,
    title: j.title,
    company: j.company,
    location: j.location,
    remote: j.remote,
    employment_type: j.employmentType,
    salary_min: j.salaryMin,
    salary_max: j.salaryMax,
    salary_currency: j.salaryCurrency,
    skills: j.skills,
    posted_at: formatTime(j.postedAt),
    source: j.source,
    snippet: opening(j.description),
  };
}

export async function searchJobs(deps: JobsDeps, p: JobsQuery): Promise<JobsResponse> {
  const { q, location, remote, since, limit } = p;
  const skills = resolveSkills(deps.vocabulary, p.skills);
  const { match, matches } = matchOf(q, location);
  const fp = fingerprint({ corpus: 'jobs', q, location, skills: [...skills].sort(), remote, since });
  let after: number | undefined;
  if (p.cursor !== undefined) {
    after = deps.cursors.decode(p.cursor, fp).t;
    if (!Number.isSafeInteger(after)) throw new AppError('bad_cursor', 'cursor is malformed');
  }
  const pending = await deps.jobsIndex.fresh();
  const hits = await deps.jobsIndex.query({ match, skills, remote, since }, limit + 1, after);
  const shown = hits.slice(0, limit);
  // The index may hold postings committed after this request's LMDB snapshot was taken.
  if (shown.some((h) => h.ord >= deps.jobs.nextOrd())) deps.jobs.store.refresh();
  const results = shown.map((h) => {
    const job = deps.jobs.get(h.ord)!;
    const r = jobResult(job);
    if (matches) r.highlight = highlight([job.description, job.title, job.skills.join(', ')], matches);
    return r;
  });
  const next = hits.length > limit ? deps.cursors.encode({ t: shown[shown.length - 1].rid, id: '' }, fp) : null;
  return { results, count: results.length, next_cursor: next, partial: pending > 0 };
}
