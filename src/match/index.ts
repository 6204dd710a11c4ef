export { match, MODEL, type MatchDeps, type MatchRequest, type MatchResponse, type MatchItem } from './match.js';
export { PageCache, type CachedRow } from './page-cache.js';
export { likeQuery, type LikeQuery } from './like.js';
