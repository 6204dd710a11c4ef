/**
 * What parsing live pages off the event loop buys: 16 parses of the captured 1.5 MB
 * marketplace product page, run inline (LIVE_PARSE_THREADS=0) and on the parse pool (2
 * threads, warmed up first), in one process. For each: the wall time, and the event loop's
 * longest stall while they ran (perf_hooks.monitorEventLoopDelay): what every other request
 * would have waited. Prints the ratios against the inline run; asserts nothing about timings.
 */
import fs from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ParsePool } from '../src/live/index.js';

const PAGE = fs.readFileSync(path.join(import.meta.dirname, '../test/fixtures/pages/amazon-product/amazon-com-product-portable-charger-2026.html'), 'utf8');
const CTX = { origin: 'https://www.amazon.com', currency: 'USD' };
const N = Number(process.env.BENCH_PARSES ?? 16);

async function measure(threads: number) {
  const pool = new ParsePool(threads);
  await Promise.all(Array.from({ length: Math.max(threads, 1) }, () => pool.run('parseProductPage', PAGE, CTX))); // warm-up: workers started, JIT warm
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const t0 = performance.now();
  // Calls arrive one per event-loop turn, as requests do.
  const runs: Promise<unknown>[] = [];
  for (let i = 0; i < N; i++) {
    runs.push(pool.run('parseProductPage', PAGE, CTX));
    await new Promise((r) => setImmediate(r));
  }
  await Promise.all(runs);
  const wall = performance.now() - t0;
  delay.disable();
  await pool.close();
  return { wall, maxStall: delay.max / 1e6, p99Stall: delay.percentile(99) / 1e6 };
}

const inline = await measure(0);
const pooled = await measure(2);
const row = (name: string, r: typeof inline) =>
  console.log(
    `${name.padEnd(24)} wall ${r.wall.toFixed(0).padStart(6)} ms   longest event-loop stall ${r.maxStall.toFixed(0).padStart(5)} ms   p99 stall ${r.p99Stall.toFixed(0).padStart(5)} ms`,
  );
console.log(`${N} parses of a 1.5 MB product page`);
row('inline (threads 0)', inline);
row('parse pool (threads 2)', pooled);
console.log(
  `live-parse: stall_ratio=${(pooled.maxStall / inline.maxStall).toFixed(3)} wall_ratio=${(pooled.wall / inline.wall).toFixed(3)} inline_max_stall_ms=${inline.maxStall.toFixed(0)} pool_max_stall_ms=${pooled.maxStall.toFixed(0)}`,
);
