/**
 * The import graph of src/ and the layout rules it must keep (README, "Layout"):
 *
 * - a folder (a directory directly under src/, with its subdirectories) has an `index.ts` and
 *   is imported from outside only through it;
 * - no two folders import each other, directly or around a longer loop;
 * - no file cycle inside a folder;
 * - the base files at src/'s root (config, errors, log, time, native, worker-file) import
 *   only each other; main.ts and service.ts compose the folders;
 * - nothing but the composition (main.ts, service.ts, cli/) imports http/, and http/ never
 *   imports cli/.
 *
 * Test files are left out: a test may reach into its folder's files. `npx tsx
 * scripts/import-graph.ts` prints the summary and every violation, and exits 1 on any;
 * test/architecture.test.ts runs the same check.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const COMPOSITION = new Set(['main.ts', 'service.ts']);

/** Every non-test .ts/.js file under `src`, relative to it, with its resolved relative imports. */
export function importGraph(root: string): Map<string, Set<string>> {
  const src = path.join(root, 'src');
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|js|mjs)$/.test(e.name) && !/\.test\.ts$/.test(e.name)) files.push(path.relative(src, p));
    }
  };
  walk(src);
  const known = new Set(files);
  const edges = new Map<string, Set<string>>();
  for (const f of files) {
    const text = fs.readFileSync(path.join(src, f), 'utf8');
    const info = ts.preProcessFile(text, true, true);
    const out = new Set<string>();
    for (const { fileName } of info.importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = resolve(path.posix.join(path.posix.dirname(f), fileName), known);
      if (target) out.add(target);
    }
    edges.set(f, out);
  }
  return edges;
}

function resolve(spec: string, known: Set<string>): string | undefined {
  const norm = path.posix.normalize(spec);
  for (const c of [norm, norm.replace(/\.js$/, '.ts'), `${norm}.ts`, `${norm}/index.ts`]) if (known.has(c)) return c;
  return undefined;
}

/** A file's folder: its first directory under src/, or '' for a base file at the root. */
export const folderOf = (file: string): string => (file.includes('/') ? file.slice(0, file.indexOf('/')) : '');

/** Strongly connected components with more than one member (Tarjan). */
function cycles(nodes: string[], next: (v: string) => Iterable<string>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of next(v)) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        c.push(w);
      } while (w !== v);
      if (c.length > 1) out.push(c.sort());
    }
  };
  for (const v of nodes) if (!idx.has(v)) visit(v);
  return out;
}

/** The summary and every broken rule. */
export interface Layout {
  summary: { files: number; folders: number; folderEdges: number; crossFolderImports: number; folderCycles: number; fileCycles: number };
  violations: string[];
}

export function checkLayout(root: string): Layout {
  const edges = importGraph(root);
  const folders = new Set([...edges.keys()].map(folderOf).filter((f) => f));
  const violations: string[] = [];
  for (const f of folders) if (!edges.has(`${f}/index.ts`)) violations.push(`${f}/ has no index.ts`);
  let crossFolder = 0;
  const folderEdges = new Map([...folders].map((f) => [f, new Set<string>()]));
  for (const [from, tos] of edges) {
    const a = folderOf(from);
    for (const to of tos) {
      const b = folderOf(to);
      if (a === b) continue;
      if (a === '' && !COMPOSITION.has(from) && b !== '') violations.push(`base file ${from} imports ${to}`);
      if (b === '') continue;
      crossFolder++;
      if (a !== '') folderEdges.get(a)!.add(b);
      if (to !== `${b}/index.ts`) violations.push(`${from} imports ${to} past ${b}/index.ts`);
      if (b === 'http' && a !== 'cli' && !COMPOSITION.has(from)) violations.push(`${from} imports http/ (the core never does)`);
      if (b === 'cli' && a !== '') violations.push(`${from} imports cli/`);
    }
  }
  const folderCycles = cycles([...folders], (f) => folderEdges.get(f)!);
  for (const c of folderCycles) violations.push(`folder cycle: ${c.join(' ⇄ ')}`);
  const fileCycles = cycles([...edges.keys()], (f) => edges.get(f)!);
  for (const c of fileCycles) violations.push(`file cycle: ${c.join(' ⇄ ')}`);
  return {
    summary: {
      files: edges.size,
      folders: folders.size,
      folderEdges: [...folderEdges.values()].reduce((n, s) => n + s.size, 0),
      crossFolderImports: crossFolder,
      folderCycles: folderCycles.length,
      fileCycles: fileCycles.length,
    },
    violations,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { summary, violations } = checkLayout(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'));
  console.log(
    `import graph: ${summary.files} files, ${summary.folders} folders, ${summary.folderEdges} folder edges, ${summary.crossFolderImports} cross-folder imports, ${summary.folderCycles} folder cycles, ${summary.fileCycles} file cycles, ${violations.length} violations`,
  );
  for (const v of violations) console.log(`  ${v}`);
  process.exitCode = violations.length ? 1 : 0;
}
