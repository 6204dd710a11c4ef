/**
 * The model directory (`BGE_M3_MODEL_DIR`): an ONNX export of BAAI/bge-m3 and its tokenizer.
 * `model.onnx_data` sits beside `model.onnx` when the export keeps its weights outside (the
 * 2.2 GB bge-m3 export does); ONNX Runtime finds it by the model's path.
 */
import fs from 'node:fs';
import path from 'node:path';

export const MODEL_FILES = ['model.onnx', 'tokenizer.json', 'tokenizer_config.json'] as const;

export class ModelDirError extends Error {
  readonly name = 'ModelDirError';
}

/** The model's path; throws ModelDirError naming every missing file and how to get them. */
export function checkModelDir(dir: string): { modelPath: string } {
  let missing: string[];
  try {
    const have = new Set(fs.readdirSync(dir));
    missing = MODEL_FILES.filter((f) => !have.has(f));
  } catch (e) {
    throw new ModelDirError(
      `BGE_M3_MODEL_DIR ${dir} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); "newsmatch quickstart" fetches it (see "Text mode" in the README)`,
    );
  }
  if (missing.length > 0) {
    throw new ModelDirError(`BGE_M3_MODEL_DIR ${dir} lacks ${missing.join(', ')}; "newsmatch quickstart" fetches it (see "Text mode" in the README)`);
  }
  return { modelPath: path.join(dir, 'model.onnx') };
}
