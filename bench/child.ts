/**
 * A benchmark's server in a child process (autocannon's own work then stays off the server's
 * event loop), spoken to by messages: `ask(msg)` sends one and resolves with the next reply,
 * `ask(null)` waits for the first (the child's "ready"). It runs with the Node flags `npm start`
 * gives the server, read from package.json, so a benchmark measures the server as shipped.
 * BENCH_CPU_PROF=<dir> profiles it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';

/** The `--…` flags before the script in package.json's `start` ("exec node --x=1 dist/src/cli/index.js serve"). */
export function startFlags(): string[] {
  const pkg = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };
  const all = pkg.scripts.start.split(/\s+/);
  const words = all.slice(all.indexOf('node') + 1);
  return words.slice(
    0,
    words.findIndex((w) => !w.startsWith('--')),
  );
}

export function forkServer(file: string, args: string[]): { child: ChildProcess; ask: <T>(msg: string | null) => Promise<T> } {
  const prof = process.env.BENCH_CPU_PROF;
  const child = fork(file, args, {
    execArgv: [...startFlags(), '--import', 'tsx', ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [])],
    env: process.env,
  });
  const ask = <T>(msg: string | null): Promise<T> =>
    new Promise((resolve, reject) => {
      const exited = (code: number | null) => reject(new Error(`server exited with ${code}`));
      child.once('exit', exited);
      child.once('message', (m) => {
        child.off('exit', exited);
        resolve(m as T);
      });
      if (msg) child.send(msg);
    });
  return { child, ask };
}
