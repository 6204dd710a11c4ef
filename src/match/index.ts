export { match, articleFields, resolveSources, MODEL, type MatchDeps, type MatchRequest, type MatchResponse, type MatchItem } from './match.js';
export { CursorCodec, fingerprint, type Position } from './cursor.js';
export { PageCache, type CachedRow } from './page-cache.js';
