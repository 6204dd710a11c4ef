export { Store, DIMENSIONS, contentHash } from './lmdb-store.js';
export type { RevisionRecord, SourceRecord, RevisionInput, RevisionChunk, WriteOutcome } from './lmdb-store.js';
export { Catalog } from './catalog.js';
export { canonicalUrl } from './canonical-url.js';
