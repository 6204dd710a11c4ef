/**
 * The float32 oracle of the search benchmarks: every query's exact score for every revision
 * (its best chunk), computed in plain JS over LMDB's vectors on one worker thread per core.
 * Independent of the native engine, which it measures.
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Service } from '../src/service.js';

/** scores[q][ord]: query q's f32 score of revision `ord` (its best chunk); -Infinity for a revision without chunks. */
export async function oracleScores(service: Service, queries: Float32Array[], onProgress?: (done: number, total: number) => void): Promise<Float32Array[]> {
  const { catalog, store } = service;
  const labels = store.nextLabel();
  const revisions = catalog.size;
  const labelOrd = Uint32Array.from(catalog.labelOrd.subarray(0, labels));
  const flat = new Float32Array(queries.length * 1024);
  queries.forEach((q, i) => flat.set(q, i * 1024));
  const slices = Math.max(1, os.availableParallelism());
  const filename = new URL('./oracle-worker.mjs', import.meta.url);
  const done = new Array<number>(slices).fill(0);
  const parts = await Promise.all(
    Array.from({ length: slices }, (_, s) => {
      const from = Math.floor((labels * s) / slices);
      const to = Math.floor((labels * (s + 1)) / slices);
      return new Promise<Float32Array>((resolve, reject) => {
        const w = new Worker(filename, { workerData: { lmdb: store.path, queries: flat, labelOrd, revisions, from, to } });
        w.on('message', (m: { progress?: number; best?: Float32Array }) => {
          if (m.best) resolve(m.best);
          else {
            done[s] = m.progress!;
            onProgress?.(
              done.reduce((a, b) => a + b, 0),
              labels,
            );
          }
        });
        w.on('error', reject);
        w.on('exit', (code) => code !== 0 && reject(new Error(`oracle worker exited with ${code}`)));
      });
    }),
  );
  const out: Float32Array[] = [];
  for (let q = 0; q < queries.length; q++) {
    const best = parts[0].slice(q * revisions, (q + 1) * revisions);
    for (const p of parts.slice(1))
      for (let o = 0; o < revisions; o++) {
        const x = p[q * revisions + o];
        if (x > best[o]) best[o] = x;
      }
    out.push(best);
  }
  return out;
}
