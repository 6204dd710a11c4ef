/**
 * A Piscina worker answering keyword reads (reads.ts) on a read-only connection of its own:
 * BM25 over tens of thousands of matches holds a connection for ~0.1 s, which on the main
 * thread every other request would wait behind. The index is in WAL mode, so this connection
 * sees each commit of the writer (the write worker, or another process) once it is made.
 */
import Database from 'better-sqlite3';
import { threadId } from 'node:worker_threads';
import { carry, Readers, runRead, type ReadOutcome, type ReadTask } from './reads.js';

export type WorkerReadTask = ReadTask & { file: string };

/** One connection per index file (a pool serves one service, so one file). */
const open = new Map<string, Readers>();

function readersOf(file: string): Readers {
  let r = open.get(file);
  if (!r) {
    r = new Readers(new Database(file, { readonly: true, fileMustExist: true, timeout: 10_000 }));
    open.set(file, r);
  }
  return r;
}

export default function read(task: WorkerReadTask): ReadOutcome {
  try {
    return { ok: true, rows: runRead(readersOf(task.file), task), threadId };
  } catch (e) {
    return { ok: false, error: carry(e) };
  }
}
