/**
 * A benchmark's server in a child process (autocannon's own work then stays off the server's
 * event loop), spoken to by messages: `ask(msg)` sends one and resolves with the next reply,
 * `ask(null)` waits for the first (the child's "ready"). BENCH_CPU_PROF=<dir> profiles it.
 */
import { fork, type ChildProcess } from 'node:child_process';

export function forkServer(file: string, args: string[]): { child: ChildProcess; ask: <T>(msg: string | null) => Promise<T> } {
  const prof = process.env.BENCH_CPU_PROF;
  const child = fork(file, args, { execArgv: ['--import', 'tsx', ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [])], env: process.env });
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
