// Downloads a bge-m3 ONNX export and its tokenizer from the Hugging Face hub into a directory
// and checks every file's size and SHA-256 against the hub's own LFS records. Needs internet;
// nothing else in the project (tests included) does.
//
//   scripts/fetch-model [DIR] [--repo BAAI/bge-m3] [--subdir onnx] [--revision main]
//
// Then: BGE_M3_MODEL_DIR=DIR npm start
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    repo: { type: 'string', default: 'BAAI/bge-m3' },
    subdir: { type: 'string', default: 'onnx' },
    revision: { type: 'string', default: 'main' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log('usage: scripts/fetch-model [DIR] [--repo BAAI/bge-m3] [--subdir onnx] [--revision main]');
  process.exit(0);
}
const dir = path.resolve(positionals[0] ?? 'models/bge-m3');
const hub = process.env.HF_ENDPOINT ?? 'https://huggingface.co';
/** @type {Record<string, string>} */
const auth = process.env.HF_TOKEN ? { authorization: `Bearer ${process.env.HF_TOKEN}` } : {};
const { repo, subdir, revision } = values;
// model.onnx_data is optional: small exports keep their weights inside model.onnx.
const WANTED = ['model.onnx', 'model.onnx_data', 'tokenizer.json', 'tokenizer_config.json'];

/** The hub's listing of a folder: path, size, and the LFS sha256 for large files. */
/** @param {string} folder */
async function listing(folder) {
  const url = `${hub}/api/models/${repo}/tree/${revision}${folder ? `/${folder}` : ''}`;
  const res = await fetch(url, { headers: auth });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return res.json();
}

/** @param {string} file */
async function sha256(file) {
  const h = createHash('sha256');
  await pipeline(fs.createReadStream(file), h);
  return h.digest('hex');
}

async function main() {
  fs.mkdirSync(dir, { recursive: true });
  // Files in the subfolder win over the repo root's (the tokenizer may be in either).
  const entries = new Map();
  for (const folder of ['', subdir]) for (const e of await listing(folder)) if (e.type === 'file') entries.set(path.basename(e.path), e);
  for (const name of WANTED) {
    const e = entries.get(name);
    if (!e) {
      if (name === 'model.onnx_data') continue;
      throw new Error(`${repo}@${revision} has no ${name} in / or /${subdir}`);
    }
    const target = path.join(dir, name);
    const size = e.lfs?.size ?? e.size;
    if (fs.existsSync(target) && fs.statSync(target).size === size && (!e.lfs || (await sha256(target)) === e.lfs.oid)) {
      console.log(`${name}: already here, verified`);
      continue;
    }
    const url = `${hub}/${repo}/resolve/${revision}/${e.path}`;
    const res = await fetch(url, { headers: auth, redirect: 'follow' });
    if (!res.ok || !res.body) throw new Error(`${url}: HTTP ${res.status}`);
    let got = 0;
    let last = 0;
    const tmp = `${target}.part`;
    const counter = new TransformStream({
      transform(chunk, c) {
        got += chunk.length;
        if (Date.now() - last > 2000) {
          last = Date.now();
          process.stderr.write(`${name}: ${(got / 1e6).toFixed(0)} / ${(size / 1e6).toFixed(0)} MB\n`);
        }
        c.enqueue(chunk);
      },
    });
    // The DOM and node:stream/web ReadableStream types differ only in name.
    await pipeline(
      Readable.fromWeb(/** @type {import('node:stream/web').ReadableStream} */ (/** @type {unknown} */ (res.body.pipeThrough(counter)))),
      fs.createWriteStream(tmp),
    );
    const have = fs.statSync(tmp).size;
    if (have !== size) throw new Error(`${name}: got ${have} bytes, the hub lists ${size}`);
    if (e.lfs) {
      const sum = await sha256(tmp);
      if (sum !== e.lfs.oid) throw new Error(`${name}: sha256 ${sum} differs from the hub's ${e.lfs.oid}`);
    }
    fs.renameSync(tmp, target);
    console.log(`${name}: ${size} bytes${e.lfs ? ', sha256 verified' : ''}`);
  }
  console.log(`\nbge-m3 is in ${dir}. Start with: BGE_M3_MODEL_DIR=${dir} npm start`);
}

main().catch((e) => {
  console.error(`fetch-model: ${e.message}\n(needs internet access to ${hub}; set HF_ENDPOINT for a mirror)`);
  process.exit(1);
});
