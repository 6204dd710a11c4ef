/**
 * `redocly lint` over GET /openapi.json with the repository's redocly.yaml (the recommended
 * ruleset): any error fails. Offline: telemetry and the update check are off.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './helpers/service.js';

const run = promisify(execFile);
let h: Harness;
let dir: string;

beforeAll(async () => {
  h = await startHarness({});
  dir = mkdtempSync(join(tmpdir(), 'nm-openapi-lint-'));
});

afterAll(async () => {
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('redocly lint', () => {
  it('finds no error in /openapi.json', async () => {
    const res = await h.inject({ url: '/openapi.json', noAuth: true });
    expect(res.status).toBe(200);
    const file = join(dir, 'openapi.json');
    writeFileSync(file, res.raw);
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
    const out = await run('node_modules/.bin/redocly', ['lint', file, '--config', 'redocly.yaml', '--format', 'json'], { env, maxBuffer: 16 << 20 }).catch(
      (e: { stdout?: string; stderr?: string }) => ({ stdout: e.stdout ?? '', stderr: e.stderr ?? '' }),
    );
    const report = JSON.parse(out.stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
    };
    const problems = report.problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(problems, out.stderr).toEqual([]);
  }, 60_000);
});
