/**
 * The benchmarks' oracle, one slice of it: for chunk labels [from, to), the float32 score of
 * every query against each chunk vector read from LMDB (lmdb-js directly, not the service's
 * store), kept as each revision's best (the max over its chunks). Plain JavaScript, so a worker
 * loads it without a TypeScript loader; bench/oracle.ts runs slices in parallel.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { open } from 'lmdb';

const { lmdb, queries, labelOrd, revisions, from, to } = workerData;
const DIM = 1024;
const nq = queries.length / DIM;
const root = open({ path: lmdb, maxDbs: 32 });
const vectors = root.openDB({ name: 'vectors', encoding: 'binary', keyEncoding: 'uint32' });
// best[q * revisions + ord]
const best = new Float32Array(nq * revisions).fill(Number.NEGATIVE_INFINITY);
const scores = new Float64Array(nq);
for (let label = from; label < to; label++) {
  const buf = vectors.getBinary(label);
  const v = buf.byteOffset % 4 === 0 ? new Float32Array(buf.buffer, buf.byteOffset, DIM) : new Float32Array(new Uint8Array(buf).buffer, 0, DIM);
  // One chunk against every query: the query matrix stays in cache.
  for (let q = 0; q < nq; q++) {
    const o = q * DIM;
    let s0 = 0,
      s1 = 0,
      s2 = 0,
      s3 = 0;
    for (let i = 0; i < DIM; i += 4) {
      s0 += v[i] * queries[o + i];
      s1 += v[i + 1] * queries[o + i + 1];
      s2 += v[i + 2] * queries[o + i + 2];
      s3 += v[i + 3] * queries[o + i + 3];
    }
    scores[q] = s0 + s1 + s2 + s3;
  }
  const ord = labelOrd[label];
  for (let q = 0; q < nq; q++) {
    const at = q * revisions + ord;
    if (scores[q] > best[at]) best[at] = scores[q];
  }
  if ((label - from) % 50_000 === 0) parentPort.postMessage({ progress: label - from });
}
await root.close();
parentPort.postMessage({ best }, [best.buffer]);
