/**
 * The checks a team relies on, as tests, so CI's one summary line counts them: the layout
 * rules of the import graph (scripts/import-graph.ts), the type check of src/, test/, bench/
 * and scripts/ (tsconfig.check.json) and of the playground's browser script
 * (tsconfig.playground.json), and the formatter and linter (biome.json).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkLayout } from '../scripts/import-graph.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);

function run(cmd: string, args: string[]): { status: number | null; output: string } {
  const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', timeout: 300_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('checks', () => {
  it('the import graph keeps the layout rules: folders through index.ts, no folder or file cycle, base files import no folder', () => {
    const { violations, summary } = checkLayout(root);
    expect(violations).toEqual([]);
    expect(summary.folderCycles).toBe(0);
  });

  it('src/, test/, bench/ and scripts/ type-check', { timeout: 300_000 }, () => {
    const r = run(bin('tsc'), ['-p', 'tsconfig.check.json']);
    expect(r.output).toBe('');
    expect(r.status).toBe(0);
  });

  it('the playground’s browser script type-checks (DOM, no Node: tsconfig.playground.json)', { timeout: 300_000 }, () => {
    const r = run(bin('tsc'), ['-p', 'tsconfig.playground.json', '--noEmit']);
    expect(r.output).toBe('');
    expect(r.status).toBe(0);
  });

  it('the code is formatted and passes the linter', { timeout: 120_000 }, () => {
    const r = run(bin('biome'), ['check', '--max-diagnostics=20', '.']);
    expect(r.status, r.output).toBe(0);
  });
});
