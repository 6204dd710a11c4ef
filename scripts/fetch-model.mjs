// Fetches the bge-m3 ONNX export and its tokenizer into a directory, as `newsmatch quickstart`
// does first (src/model-fetch/: resumable, each file verified against the hub's hashes; the
// MODEL_HUB_* settings apply). Only fetches; `newsmatch quickstart` also adds outlets and serves.
//
//   scripts/fetch-model [DIR] [--repo BAAI/bge-m3] [--subdir onnx] [--revision main]
//
// Then: BGE_M3_MODEL_DIR=DIR npm start
import { parseArgs } from 'node:util';
import { ensureModel } from '../src/cli/quickstart.js';
import { loadConfig } from '../src/config.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { repo: { type: 'string' }, subdir: { type: 'string' }, revision: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
});
if (values.help) {
  console.log('usage: scripts/fetch-model [DIR] [--repo BAAI/bge-m3] [--subdir onnx] [--revision main]');
  process.exit(0);
}
const config = loadConfig(process.env, {
  BGE_M3_MODEL_DIR: positionals[0] ?? 'models/bge-m3',
  MODEL_HUB_REPO: values.repo,
  MODEL_HUB_SUBDIR: values.subdir,
  MODEL_HUB_REVISION: values.revision,
});
const dir = /** @type {string} */ (config.modelDir);
console.log(`bge-m3 into ${dir}`);
if (!(await ensureModel(config, dir))) process.exit(1);
console.log(`Start with: BGE_M3_MODEL_DIR=${dir} npm start`);
