/** Builds a benchmark corpus file of about `chunks` chunks with the tests' seeded generator. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateCorpus, writeCorpusJsonl, type Corpus } from '../test/helpers/corpus.js';

export function benchCorpus(chunks: number, seed = 7): { corpus: Corpus; file: string; dir: string; chunks: number } {
  // The generator averages about 5.8 chunks per article once edits are counted; size by that, then trim.
  let articles = Math.max(10, Math.round(chunks / 5.8));
  let corpus = generateCorpus({ seed, articles, days: 365 });
  const count = (c: Corpus) => c.revisions.reduce((n, r) => n + r.chunks.length, 0);
  if (count(corpus) < chunks) corpus = generateCorpus({ seed, articles: (articles = Math.ceil((articles * chunks) / count(corpus)) + 5), days: 365 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'newsmatch-bench-'));
  const file = path.join(dir, 'corpus.jsonl');
  writeCorpusJsonl(corpus, file);
  return { corpus, file, dir, chunks: count(corpus) };
}

export const envInt = (name: string, fallback: number): number => {
  const v = process.env[name];
  return v === undefined ? fallback : Number.parseInt(v, 10);
};

/** Prints a table whose last column is the ratio to the first row. */
export function printTable(title: string, rows: { name: string; ms: number; note?: string }[]): void {
  const base = rows[0].ms;
  console.log(`\n${title}`);
  console.log(`${'step'.padEnd(44)} ${'ms'.padStart(10)}  ${'note'.padEnd(34)} ${'ratio to first'.padStart(14)}`);
  for (const r of rows) {
    console.log(`${r.name.padEnd(44)} ${r.ms.toFixed(1).padStart(10)}  ${(r.note ?? '').padEnd(34)} ${(r.ms / base).toFixed(2).padStart(13)}x`);
  }
}
