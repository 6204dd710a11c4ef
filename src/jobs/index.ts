export { JobStore, EMPLOYMENT_TYPES, type JobInput, type JobRecord } from './store.js';
export { Vocabulary, skillVocabulary, skillKey, type Skill } from './vocabulary.js';
export { importJobsFile, parseJobLine, type JobImportSummary } from './import-jobs.js';
export { searchJobs, resolveSkills, type JobsQuery } from './search-jobs.js';
