export { Store, contentHash, articleFields, decideRevision } from './lmdb-store.js';
export type {
  ArticleFields,
  RevisionRecord,
  SourceRecord,
  RevisionInput,
  RevisionChunk,
  WriteOutcome,
  Written,
  RevisionWriter,
  DecidedRevision,
  ArticleHistory,
} from './lmdb-store.js';
export { Catalog } from './catalog.js';
export { resolveSources } from './articles.js';
export { canonicalUrl } from './canonical-url.js';
