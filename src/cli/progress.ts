/**
 * Progress of a long command on stderr: on a terminal a bar with the items done, their rate and
 * the ETA (cli-progress); otherwise a plain line every few seconds
 * (`imported 12,000 revisions (4,100/s)…`), which a log collector keeps readably.
 */
import { SingleBar } from 'cli-progress';
import { isInteractive } from '../config.js';

export interface Progress {
  /** `value` in the bar's unit (bytes of a file), `items` the count shown (revisions). */
  update(value: number, items?: number): void;
  /** A line of its own (a rejected line) without breaking the bar. */
  log(line: string): void;
  stop(): void;
}

const count = (n: number): string => Math.round(n).toLocaleString('en-US');

/** Every this many ms a line without a terminal. */
const LINE_EVERY_MS = 5_000;

/**
 * `verb` is the past tense the plain lines use (`imported`), `label` the bar's (`importing`),
 * `unit` the items' noun (`revisions`); `total` is in the unit of update's `value`.
 */
export function startProgress(o: { label: string; verb: string; unit: string; total: number; interactive?: boolean }): Progress {
  const started = performance.now();
  const rate = (items: number) => {
    const s = (performance.now() - started) / 1000;
    return s > 0 ? items / s : 0;
  };
  if (o.interactive ?? isInteractive()) {
    const bar = new SingleBar({
      format: `${o.label} [{bar}] {percentage}% | {items} ${o.unit} ({rate}/s) | ETA {eta_formatted}`,
      stream: process.stderr,
      hideCursor: true,
      etaBuffer: 50,
    });
    bar.start(Math.max(o.total, 1), 0, { items: '0', rate: '0' });
    let stopped = false;
    return {
      update(value, items = value) {
        bar.update(value, { items: count(items), rate: count(rate(items)) });
      },
      log(line) {
        // cli-progress redraws on the next update; a line starting at column 0 stays above it.
        process.stderr.write(`\r\x1b[K${line}\n`);
      },
      stop() {
        if (stopped) return;
        stopped = true;
        bar.stop();
      },
    };
  }
  let last = started;
  let latest = 0;
  let stopped = false;
  return {
    update(_value, items = _value) {
      latest = items;
      if (performance.now() - last < LINE_EVERY_MS) return;
      last = performance.now();
      process.stderr.write(`${o.verb} ${count(items)} ${o.unit} (${count(rate(items))}/s)…\n`);
    },
    log(line) {
      process.stderr.write(`${line}\n`);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      // Only a run long enough to have printed a line gets a closing one.
      if (last !== started) process.stderr.write(`${o.verb} ${count(latest)} ${o.unit} (${count(rate(latest))}/s)\n`);
    },
  };
}
