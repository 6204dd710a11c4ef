export { Embedder, type EmbedderOptions } from './embedder.js';
export { checkModelDir, ModelDirError, MODEL_FILES } from './model-dir.js';
export { TextTokenizer } from './tokenizer.js';
export { chunkAndEmbed, embedBacklog, embedRevisions, textOf, type ChunkSettings } from './revisions.js';
