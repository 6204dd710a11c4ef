export { Embedder, type EmbedderOptions } from './embedder.js';
export { checkModelDir, ModelDirError, MODEL_FILES } from './model-dir.js';
export { TextTokenizer } from './tokenizer.js';
export { embedBacklog, embedRevisions, type ChunkSettings } from './revisions.js';
