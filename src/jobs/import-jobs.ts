/**
 * `newsmatch import-jobs <file.jsonl>`: job postings, one JSON object a line, streamed into
 * LMDB in batches (each one durable transaction), idempotent like `import`: a line equal to
 * the stored posting changes nothing, a bad line is reported by number and skipped.
 *
 *   {"url":"https://jobs.example/123","title":"Backend Engineer","company":"Acme","location":"Berlin, Germany",
 *    "remote":false,"employment_type":"full_time","salary_min":60000,"salary_max":80000,"salary_currency":"EUR",
 *    "skills":["Go","k8s","PostgreSQL"],"description":"…","posted_at":"2026-05-01T08:00:00Z","source":"Acme careers"}
 *
 * Skills are filed under the vocabulary's names (k8s → Kubernetes); unknown ones are kept
 * aside on the posting and counted (`newsmatch jobs unknown-skills`).
 */
import fs from 'node:fs';
import readline from 'node:readline';
import { canonicalUrl } from '../store/index.js';
import { parseTime } from '../time.js';
import { EMPLOYMENT_TYPES, type EmploymentType, type JobInput, type JobStore } from './store.js';
import { skillKey, type Vocabulary } from './vocabulary.js';

const FIELDS = new Set([
  'url',
  'title',
  'company',
  'location',
  'remote',
  'employment_type',
  'salary_min',
  'salary_max',
  'salary_currency',
  'skills',
  'description',
  'posted_at',
  'source',
]);
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const MAX_SKILLS = 100;

export type ParsedJob = { ok: true; input: JobInput } | { ok: false; reason: string };

const str = (o: Record<string, unknown>, k: string, max: number, required: boolean): string | null | Error => {
  const v = o[k];
  if (v === undefined || v === null) return required ? new Error(`${k}: required string`) : null;
  if (typeof v !== 'string') return new Error(`${k}: must be a string`);
  if (required && v.trim() === '') return new Error(`${k}: required non-empty string`);
  if (v.length > max) return new Error(`${k}: longer than ${max} characters`);
  return v.trim() === '' ? null : v.trim();
};

export function parseJobLine(line: string, vocabulary: Vocabulary): ParsedJob {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (e) {
    return { ok: false, reason: `invalid JSON (${(e as Error).message})` };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, reason: 'not a JSON object' };
  const o = raw as Record<string, unknown>;
  try {
    const unknown = Object.keys(o).filter((k) => !FIELDS.has(k));
    if (unknown.length > 0) throw new Error(`unknown field ${unknown.map((k) => `"${k}"`).join(', ')}`);
    const need = <T>(v: T | Error): T => {
      if (v instanceof Error) throw v;
      return v;
    };
    if (typeof o.url !== 'string') throw new Error('url: required string');
    const url = canonicalUrl(o.url);
    if (!url) throw new Error('url: not an absolute http(s) URL');
    const title = need(str(o, 'title', 500, true))!;
    const company = need(str(o, 'company', 200, true))!;
    const location = need(str(o, 'location', 200, false));
    const source = need(str(o, 'source', 200, true))!;
    const description = need(str(o, 'description', 100_000, false)) ?? '';
    if (o.remote !== undefined && o.remote !== null && typeof o.remote !== 'boolean') throw new Error('remote: must be true or false');
    let employmentType: EmploymentType | null = null;
    if (o.employment_type !== undefined && o.employment_type !== null) {
      const t =
        typeof o.employment_type === 'string'
          ? o.employment_type
              .trim()
              .toLowerCase()
              .replace(/[\s-]+/g, '_')
          : '';
      if (!(EMPLOYMENT_TYPES as readonly string[]).includes(t)) throw new Error(`employment_type: one of ${EMPLOYMENT_TYPES.join(', ')}`);
      employmentType = t as EmploymentType;
    }
    const money = (k: string): number | null => {
      const v = o[k];
      if (v === undefined || v === null) return null;
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new Error(`${k}: must be a number ≥ 0`);
      return v;
    };
    const salaryMin = money('salary_min');
    const salaryMax = money('salary_max');
    if (salaryMin !== null && salaryMax !== null && salaryMin > salaryMax) throw new Error('salary_min is above salary_max');
    let salaryCurrency: string | null = null;
    if (o.salary_currency !== undefined && o.salary_currency !== null) {
      if (typeof o.salary_currency !== 'string' || !/^[A-Za-z]{3}$/.test(o.salary_currency)) throw new Error('salary_currency: an ISO 4217 code such as USD');
      salaryCurrency = o.salary_currency.toUpperCase();
    }
    if ((salaryMin !== null || salaryMax !== null) && salaryCurrency === null) throw new Error('salary_currency: required with a salary');
    if (typeof o.posted_at !== 'string' || !RFC3339.test(o.posted_at) || Number.isNaN(parseTime(o.posted_at)))
      throw new Error('posted_at: required RFC 3339 date-time');
    const postedAt = parseTime(o.posted_at);
    const given = o.skills ?? [];
    if (!Array.isArray(given) || given.some((s) => typeof s !== 'string')) throw new Error('skills: must be an array of strings');
    if (given.length > MAX_SKILLS) throw new Error(`skills: at most ${MAX_SKILLS}`);
    const skills = new Set<string>();
    const unknownSkills = new Map<string, string>();
    for (const s of given as string[]) {
      const name = s.trim();
      if (name === '') continue;
      const skill = vocabulary.resolve(name);
      if (skill) skills.add(skill.name);
      else if (!unknownSkills.has(skillKey(name))) unknownSkills.set(skillKey(name), name.slice(0, 100));
    }
    const remote = typeof o.remote === 'boolean' ? o.remote : null;
    return {
      ok: true,
      input: {
        url,
        title,
        company,
        location,
        remote,
        employmentType,
        salaryMin,
        salaryMax,
        salaryCurrency,
        skills: [...skills],
        unknownSkills: [...unknownSkills.values()],
        description,
        postedAt,
        source,
      },
    };
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
}

export interface JobImportSummary {
  lines: number;
  newPostings: number;
  updated: number;
  unchanged: number;
  rejected: number;
  rejections: { line: number; reason: string }[];
  /** Skill names not in the vocabulary, across the accepted lines. */
  unknownSkills: number;
}

const BATCH_LINES = 256;

export async function importJobsFile(
  jobs: JobStore,
  vocabulary: Vocabulary,
  file: string,
  onReject?: (line: number, reason: string) => void,
): Promise<JobImportSummary> {
  const summary: JobImportSummary = { lines: 0, newPostings: 0, updated: 0, unchanged: 0, rejected: 0, rejections: [], unknownSkills: 0 };
  let batch: JobInput[] = [];
  const flush = () => {
    for (const o of jobs.write(batch)) {
      if (o.status === 'new') summary.newPostings++;
      else if (o.status === 'updated') summary.updated++;
      else summary.unchanged++;
    }
    batch = [];
  };
  const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  for await (const text of lines) {
    const line = ++summary.lines;
    if (text.trim() === '') continue;
    const parsed = parseJobLine(text, vocabulary);
    if (!parsed.ok) {
      summary.rejected++;
      summary.rejections.push({ line, reason: parsed.reason });
      onReject?.(line, parsed.reason);
      continue;
    }
    summary.unknownSkills += parsed.input.unknownSkills.length;
    batch.push(parsed.input);
    if (batch.length >= BATCH_LINES) flush();
  }
  flush();
  return summary;
}
