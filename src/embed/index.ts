export { Embedder, type ChunkSettings, type EmbedderOptions } from './embedder.js';
export { checkModelDir, ModelDirError, MODEL_FILES } from './model-dir.js';
export { TextTokenizer } from './tokenizer.js';
export { embedBacklog, embedRevisions, textOf } from './revisions.js';
