export {
  localRows,
  newestFirst,
  match,
  MODEL,
  type MatchDeps,
  type MatchRequest,
  type MatchResponse,
  type MatchItem,
  type RoutedQuery,
  type RoutedRow,
  type ShardRouter,
} from './match.js';
export { PageCache, type CachedRow } from './page-cache.js';
export { likeQuery, type LikeQuery } from './like.js';
