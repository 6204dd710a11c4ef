export { Store, contentHash } from './lmdb-store.js';
export type { RevisionRecord, SourceRecord, RevisionInput, RevisionChunk, WriteOutcome } from './lmdb-store.js';
export { Catalog } from './catalog.js';
export { articleFields, resolveSources, type ArticleFields } from './articles.js';
export { canonicalUrl } from './canonical-url.js';
