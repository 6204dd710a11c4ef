export { KeywordDb, type Corpus } from './db.js';
export { NewsIndex } from './news.js';
export { JobsIndex } from './jobs.js';
export { searchNews, type NewsDeps, type NewsParams, type NewsResponse } from './search-news.js';
export { parseQuery, termMatcher, type KeywordQuery } from './query.js';
export { tokenize, indexText, fold } from './text.js';
export { highlight } from './highlight.js';
