export { KeywordDb, type Corpus, type KeywordWorkers } from './db.js';
export { NewsIndex } from './news.js';
export { JobsIndex } from './jobs.js';
export { keywordLag, type KeywordLag } from './lag.js';
export { NEWS_SORTS, Q_MAX, searchNews, type NewsDeps, type NewsQuery, type NewsResponse, type NewsSort } from './search-news.js';
export { searchJobs, resolveSkills, type JobsDeps, type JobsQuery } from './search-jobs.js';
export { parseQuery, termMatcher, type KeywordQuery } from './query.js';
export { tokenize, indexText, fold } from './text.js';
export { highlight } from './highlight.js';
