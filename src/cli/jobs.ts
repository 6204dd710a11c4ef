/** `import-jobs` and `jobs unknown-skills`: job postings and the skill vocabulary. */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';
import { importJobsFile, JobStore, skillVocabulary } from '../jobs/index.js';
import { JobsIndex, KeywordDb } from '../keyword/index.js';
import { Store } from '../store/index.js';
import { UsageError } from './output.js';

/** Job postings into LMDB, then the keyword index caught up (both safe beside a running server). */
export async function importJobsCommand(config: Config, file: string): Promise<number> {
  if (!fs.existsSync(file)) throw new UsageError(`no such file: ${file}`);
  fs.mkdirSync(config.dataDir, { recursive: true });
  const store = new Store(path.join(config.dataDir, 'lmdb'));
  let keyword: KeywordDb | undefined;
  try {
    const jobs = new JobStore(store);
    const s = await importJobsFile(jobs, skillVocabulary(), file, (line, reason) => process.stderr.write(`line ${line}: ${reason}\n`));
    keyword = new KeywordDb(path.join(config.dataDir, 'keyword.sqlite'), store.storeId());
    new JobsIndex(keyword, jobs).catchUp();
    process.stdout.write(
      `${file}: ${s.lines} lines, ${s.newPostings} new postings, ${s.updated} updated, ${s.unchanged} unchanged, ${s.rejected} rejected; ` +
        `${s.unknownSkills} skill names outside the vocabulary (newsmatch jobs unknown-skills)\n`,
    );
    return s.rejected > 0 ? 1 : 0;
  } finally {
    await keyword?.close();
    await store.close();
  }
}

export async function unknownSkillsCommand(config: Config): Promise<number> {
  const store = new Store(path.join(config.dataDir, 'lmdb'));
  try {
    const unknown = new JobStore(store).unknownSkills();
    for (const u of unknown) process.stdout.write(`${String(u.postings).padStart(7)}  ${u.name}\n`);
    if (unknown.length === 0) process.stdout.write('every imported skill is in the vocabulary\n');
    return 0;
  } finally {
    await store.close();
  }
}
