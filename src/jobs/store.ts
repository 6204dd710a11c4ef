/**
 * Job postings in LMDB (the source of truth; the keyword index reads them in ord order).
 *
 *   jobs           ord (uint32) → JobRecord       every version stored, in store order
 *   jobUrls        canonical URL → ord             the posting's current version
 *   unknownSkills  skill key → { name, postings }  skills given at import that the vocabulary lacks
 *   meta 'nextJobOrd'
 *
 * A posting is known by its URL. Importing the same content again changes nothing; changed
 * content stores a new version that `replaces` the old one (same id), so the index, reading
 * ords in order, swaps one for the other.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Database } from 'lmdb';
import type { Store } from '../store/index.js';
import { skillKey } from './vocabulary.js';

export const EMPLOYMENT_TYPES = ['full_time', 'part_time', 'contract', 'temporary', 'internship', 'freelance', 'volunteer', 'other'] as const;
export type EmploymentType = (typeof EMPLOYMENT_TYPES)[number];

/** A posting as imported, validated and with its skills resolved. */
export interface JobInput {
  url: string;
  title: string;
  company: string;
  location: string | null;
  remote: boolean | null;
  employmentType: EmploymentType | null;
  salaryMin: number | null;
  salaryMax: number | null;
  salaryCurrency: string | null;
  /** Canonical vocabulary names. */
  skills: string[];
  /** Names given that the vocabulary lacks, as given. */
  unknownSkills: string[];
  description: string;
  /** Unix seconds. */
  postedAt: number;
  source: string;
}

export interface JobRecord extends JobInput {
  id: string;
  ord: number;
  /** The ord of the version this one replaces, or null. */
  replaces: number | null;
  hash: string;
}

export type JobOutcome = { status: 'new' | 'updated'; ord: number } | { status: 'unchanged' };

const hashOf = (j: JobInput): string => createHash('sha256').update(JSON.stringify(j)).digest('hex');

export class JobStore {
  readonly jobs: Database<JobRecord, number>;
  readonly urls: Database<number, string>;
  readonly unknown: Database<{ name: string; postings: number }, string>;

  constructor(readonly store: Store) {
    const root = store.root;
    this.jobs = root.openDB({ name: 'jobs', keyEncoding: 'uint32' });
    this.urls = root.openDB({ name: 'jobUrls' });
    this.unknown = root.openDB({ name: 'unknownSkills' });
  }

  nextOrd(): number {
    return (this.store.meta.get('nextJobOrd') as number | undefined) ?? 0;
  }

  /** Stores a batch in one durable transaction; one outcome per input. */
  write(inputs: JobInput[]): JobOutcome[] {
    return this.store.root.transactionSync(() => {
      let ord = this.nextOrd();
      const outcomes = inputs.map((input): JobOutcome => {
        const hash = hashOf(input);
        const currentOrd = this.urls.get(input.url);
        const current = currentOrd === undefined ? undefined : this.jobs.get(currentOrd);
        if (current?.hash === hash) return { status: 'unchanged' };
        const record: JobRecord = { ...input, id: current?.id ?? randomUUID(), ord, replaces: current?.ord ?? null, hash };
        this.jobs.putSync(ord, record);
        this.urls.putSync(input.url, ord);
        // Counted per version stored, so importing a file twice counts nothing twice.
        for (const name of input.unknownSkills) {
          const key = skillKey(name);
          const seen = this.unknown.get(key);
          this.unknown.putSync(key, { name: seen?.name ?? name, postings: (seen?.postings ?? 0) + 1 });
        }
        return { status: current ? 'updated' : 'new', ord: ord++ };
      });
      this.store.meta.putSync('nextJobOrd', ord);
      return outcomes;
    });
  }

  /** Skills seen at import that the vocabulary lacks, most frequent first. */
  unknownSkills(): { name: string; postings: number }[] {
    return [...this.unknown.getRange()].map((e) => e.value).sort((a, b) => b.postings - a.postings || a.name.localeCompare(b.name));
  }

  get(ord: number): JobRecord | undefined {
    return this.jobs.get(ord);
  }
}
