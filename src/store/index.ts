export { Store, contentHash, articleFields } from './lmdb-store.js';
export type { ArticleFields, RevisionRecord, SourceRecord, RevisionInput, RevisionChunk, WriteOutcome } from './lmdb-store.js';
export { Catalog } from './catalog.js';
export { resolveSources } from './articles.js';
export { canonicalUrl } from './canonical-url.js';
