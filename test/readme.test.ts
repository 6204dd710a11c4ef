import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { settings } from '../src/config.js';
import { catalogue } from '../src/errors.js';
import { NODE_VERIFY, PYTHON_VERIFY } from '../src/monitors/index.js';
import { MONITOR_LIMITS } from '../src/platform/index.js';

const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** The rows of the markdown table that follows `heading`. */
function tableAfter(heading: string): string[][] {
  const start = readme.indexOf(heading);
  expect(start, `README has a "${heading}" section`).toBeGreaterThanOrEqual(0);
  const lines = readme.slice(start).split('\n').slice(1);
  const rows: string[][] = [];
  let inTable = false;
  for (const raw of lines) {
    // A table inside a list item is indented.
    const line = raw.trimStart();
    if (line.startsWith('|')) {
      inTable = true;
      rows.push(
        line
          .split('|')
          .slice(1, -1)
          .map((c) => c.trim()),
      );
    } else if (inTable) break;
  }
  return rows.slice(2); // header and separator
}

describe('README', () => {
  it('starts with the set-up and test commands', () => {
    const head = readme.slice(0, 1500);
    expect(head).toContain('npm install && npm start');
    expect(head).toContain('npm test');
  });

  it('error table lists exactly the catalogue (status and code)', () => {
    const documented = tableAfter('## Errors')
      .map(([status, code]) => `${status} ${code.replace(/`/g, '')}`)
      .sort();
    const actual = [...new Set(Object.values(catalogue).map((e) => `${e.status} ${e.code}`))].sort();
    expect(documented).toEqual(actual);
  });

  it('layout section names every folder and base file of src/, and nothing that is not there', () => {
    const start = readme.indexOf('## Layout');
    expect(start, 'README has a "## Layout" section').toBeGreaterThanOrEqual(0);
    const block = readme.slice(start).split('```')[1];
    const named = [...block.matchAll(/^(src\/[\w.-]+\/?)\s/gm)].map((m) => m[1]).sort();
    const src = new URL('../src/', import.meta.url);
    const actual = fs
      .readdirSync(src, { withFileTypes: true })
      .filter((e) => e.isDirectory() || (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')))
      .map((e) => `src/${e.name}${e.isDirectory() ? '/' : ''}`)
      .sort();
    expect(named).toEqual(actual);
  });

  it('configuration table lists exactly the settings', () => {
    const documented = tableAfter('## Configuration')
      .map(([env]) => env.replace(/`/g, ''))
      .sort();
    expect(documented).toEqual(
      Object.values(settings)
        .map((s) => s.env)
        .sort(),
    );
  });

  it('monitors: the signature snippets are the ones the tests run, and the plan table is the products table', () => {
    const start = readme.indexOf('## Monitors');
    expect(start).toBeGreaterThanOrEqual(0);
    expect(readme).toContain(`\`\`\`js\n${NODE_VERIFY}\`\`\``);
    expect(readme).toContain(`\`\`\`python\n${PYTHON_VERIFY}\`\`\``);
    const rows = tableAfter('## Monitors').map(([plan, monitors, matches]) => [plan, Number(monitors.replace(/,/g, '')), Number(matches.replace(/,/g, ''))]);
    expect(rows).toEqual(Object.entries(MONITOR_LIMITS).map(([plan, l]) => [plan, l.monitors, l.deliveries]));
  });
});
