/** Runs the `newsmatch` command from source (tsx), as a user would, with extra environment. */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

/** The environment of a child process run from source: this one's, with `env` over it, NODE_OPTIONS cleared. */
export const childEnv = (env: Record<string, string> = {}): NodeJS.ProcessEnv => ({ ...process.env, ...env, NODE_OPTIONS: '' });

export function cli(args: string[], env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], {
    cwd: ROOT,
    env: childEnv(env),
    encoding: 'utf8',
    timeout: 50_000,
  });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}
