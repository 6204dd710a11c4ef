// Builds the addon with the node-gyp that ships with npm, against this Node's own headers
// (never downloads them: no network is assumed). Run by `npm install` and `npm run build:native`.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const nodedir = path.resolve(process.execPath, '..', '..');
const args = ['rebuild', '--release'];
if (existsSync(path.join(nodedir, 'include', 'node', 'node_api.h'))) args.push(`--nodedir=${nodedir}`);
// Inside npm scripts npm names its node-gyp; run directly, use the one npm ships with.
const bundled = path.join(nodedir, 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
const gyp = process.env.npm_config_node_gyp || (existsSync(bundled) ? bundled : null);
const [cmd, pre] = gyp ? [process.execPath, [gyp]] : ['node-gyp', []];
const r = spawnSync(cmd, [...pre, ...args], { stdio: 'inherit' });
if (r.status !== 0) {
  console.error(`\nnewsmatch: building the native addon failed.
Possible solutions:
- install a C++17 compiler, make and python3 (Debian: apt-get install g++ make python3)
- make sure Node's headers are at ${path.join(nodedir, 'include', 'node')} (they ship with Node)
- then run: npm run build:native`);
  process.exit(r.status ?? 1);
}
