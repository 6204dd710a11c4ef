/**
 * `newsmatch import`: streams a JSONL file of article revisions into LMDB. Lines are parsed
 * one at a time and written in batches, each batch one durable LMDB transaction, so memory
 * stays flat whatever the file size and a crash loses at most the batch in flight (which a
 * re-run then adds: importing is idempotent).
 */
import fs from 'node:fs';
import readline from 'node:readline';
import type { RevisionInput, RevisionWriter, Store } from '../store/index.js';
import { parseImportLine } from './import-line.js';

export interface ImportSummary {
  lines: number;
  /** Distinct articles (canonical URLs) among the accepted lines. */
  articles: number;
  newRevisions: number;
  unchanged: number;
  rejected: number;
  rejections: { line: number; reason: string }[];
}

export interface ImportHooks {
  /** After each batch: bytes of the file read so far and lines handled, for a progress bar. */
  onProgress?: (bytesRead: number, lines: number) => void;
  onReject?: (line: number, reason: string) => void;
  /**
   * Embeds revisions just stored without vectors (lines with no `chunks`), after each batch is
   * committed; absent when text mode is off, and they wait for `newsmatch embed`.
   */
  embed?: (ords: number[]) => Promise<void>;
  /** Where the revisions go (cluster mode: the revision log); the store's `writeRevisions` when absent. */
  write?: RevisionWriter;
}

const BATCH_LINES = 256;

/** `store` null: a writer of the cluster's revision log alone (`hooks.write`), with no local store. */
export async function importFile(store: Store | null, file: string, hooks: ImportHooks = {}): Promise<ImportSummary> {
  const write = hooks.write ?? (store ? async (inputs: RevisionInput[]) => store.writeRevisions(inputs) : null);
  if (!write) throw new Error('importFile needs a store or a writer');
  const stream = fs.createReadStream(file);
  let bytes = 0;
  stream.on('data', (chunk) => {
    bytes += chunk.length;
  });
  const summary: ImportSummary = { lines: 0, articles: 0, newRevisions: 0, unchanged: 0, rejected: 0, rejections: [] };
  const urls = new Set<string>();
  const reject = (line: number, reason: string) => {
    summary.rejected++;
    summary.rejections.push({ line, reason });
    hooks.onReject?.(line, reason);
  };

  // A line that fails to parse waits in the batch beside the lines that parse, so every
  // rejection is reported in line order (a store's refusal comes only at the batch's write).
  let batch: { line: number; input?: RevisionInput; reason?: string }[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const parsed = batch.filter((b) => b.input !== undefined);
    const inputs = parsed.map((b) => b.input!);
    const outcomes = await write(inputs);
    const unembedded: number[] = [];
    let next = 0;
    for (const { line, input, reason } of batch) {
      if (input === undefined) {
        reject(line, reason!);
        continue;
      }
      const o = outcomes[next++];
      if (o.status === 'rejected') {
        reject(line, o.reason);
        continue;
      }
      urls.add(input.url);
      if (o.status === 'new') {
        summary.newRevisions++;
        if (input.chunks.length === 0 && o.ord !== null) unembedded.push(o.ord);
      } else summary.unchanged++;
    }
    batch = [];
    hooks.onProgress?.(bytes, summary.lines);
    // Stored first, embedded second: a crash in between leaves them for `newsmatch embed`.
    if (unembedded.length > 0 && hooks.embed) await hooks.embed(unembedded);
  };

  const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
  for await (const text of lines) {
    const line = ++summary.lines;
    if (text.trim() === '') continue;
    const parsed = parseImportLine(text);
    batch.push(parsed.ok ? { line, input: parsed.input } : { line, reason: parsed.reason });
    if (batch.length >= BATCH_LINES) await flush();
  }
  await flush();
  await store?.root.flushed;
  summary.articles = urls.size;
  summary.rejections.sort((a, b) => a.line - b.line);
  return summary;
}
