export {
  DEMO_ARTICLES,
  DEMO_MIN_SCORE,
  DEMO_SEED,
  demoLine,
  generateDemoCorpus,
  newestOfTopic,
  writeDemoJsonl,
  type DemoArticle,
  type DemoChunk,
  type DemoCorpus,
  type DemoOptions,
  type DemoRevision,
} from './corpus.js';
export { DEMO_SOURCES, DEMO_TOPICS, type DemoSource, type DemoTopic } from './topics.js';
export { Rng } from './rng.js';
