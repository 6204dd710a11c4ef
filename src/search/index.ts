export { HnswIndex, type HnswOptions, type Hits } from './hnsw.js';
export { VectorSearch, type Domain, type Scored, type VectorSearchOptions } from './vector-search.js';
export { dot, normalise, decodeVectorB64 } from './vector.js';
