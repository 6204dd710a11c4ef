export {
  newsVolumeByKeyword,
  newsVolumeByVector,
  skillsMarket,
  skillsTaxonomy,
  sourcesTaxonomy,
  type KeywordVolumeQuery,
  type MarketDeps,
  type NewsVolume,
  type SkillsMarketQuery,
  type VectorVolumeQuery,
} from './market.js';
