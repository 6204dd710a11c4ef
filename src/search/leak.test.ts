/**
 * The native leak check inside `npm test`: scripts/test-leak.sh builds native/test/core_test.cc
 * (native/core without N-API) and runs it under valgrind, or with ASan + UBSan where valgrind is
 * not installed. It fails on a wrong answer, a leak or a memory error. The build is cached in
 * node_modules/.cache/ by a hash of its inputs, so only a change to native/ pays for the compile
 * (~25 s); the run itself takes ~7 s under valgrind.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function run(cmd: string, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

it('native core: no leaks, no memory errors, every check passes (scripts/test-leak.sh)', async () => {
  const r = await run('bash', ['scripts/test-leak.sh']);
  expect(r.out).toMatch(/test-leak: (building|using the cached build)/);
  expect(r.code, r.out).toBe(0);
  expect(r.out).toContain('core_test: all checks passed');
}, 240_000);
