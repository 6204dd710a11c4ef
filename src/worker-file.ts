/**
 * Where a Piscina worker module lives: beside the module that starts it. From the sources
 * (the tests, tsx) it is TypeScript and loads through tsx's hooks; built, it is the
 * JavaScript in dist/.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export function workerFile(besideUrl: string, name: string): { filename: string; execArgv: string[] } {
  const self = fileURLToPath(besideUrl);
  const ext = path.extname(self);
  const execArgv = ext === '.ts' ? ['--import', pathToFileURL(createRequire(besideUrl).resolve('tsx')).href] : [];
  return { filename: path.join(path.dirname(self), `${name}${ext}`), execArgv };
}
