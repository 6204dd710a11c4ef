export {
  SearchEngine,
  EngineLockedError,
  type EngineOptions,
  type EngineFilter,
  type EngineRows,
  type EngineStats,
  type ProbeStats,
  type TopkOptions,
  type TopkPlan,
} from './engine.js';
export { MonitorSet, type MonitorChunks, type MonitorMatches } from './monitors.js';
export { VectorSearch, type Domain, type Scored, type VectorSearchOptions } from './vector-search.js';
export { exactRange, exactScore, inDomain } from './exact.js';
export { rangeAny, topKAny } from './multi-query.js';
export { dot, normalise, decodeVectorB64 } from './vector.js';
export { Maintenance } from './maintenance.js';
