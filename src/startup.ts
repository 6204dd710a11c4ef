/**
 * The start-up line `serve` logs once it listens: where the data is and how much, whether text
 * mode and the gateway door are on, and the address. An operator reads the state of a fresh
 * process from this one line (README "Operations").
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from './config.js';

/** Bytes the files under `dir` take on disk (`du`: LMDB's map file is sparse, so not its length). */
export async function diskUsage(dir: string): Promise<number> {
  let total = 0;
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    if (!e.isFile()) continue;
    const st = await fs.stat(path.join(e.parentPath ?? e.path, e.name)).catch(() => null);
    if (st) total += st.blocks * 512;
  }
  return total;
}

/** `1536` → `1.5 KiB`. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
}

export interface StartupFacts {
  dataDir: string;
  storeBytes: number;
  chunks: number;
  revisions: number;
  textMode: 'on' | 'off';
  modelDir?: string;
  /** Whether GATEWAY_HOST is set; its value is never logged (the gateway's shared word). */
  gatewayDoor: 'configured' | 'closed';
  listening: string;
}

export async function startupFacts(config: Config, counts: { chunks: number; revisions: number }, listening: string): Promise<StartupFacts> {
  return {
    dataDir: config.dataDir,
    storeBytes: await diskUsage(config.dataDir),
    chunks: counts.chunks,
    revisions: counts.revisions,
    textMode: config.modelDir === undefined ? 'off' : 'on',
    ...(config.modelDir === undefined ? {} : { modelDir: config.modelDir }),
    gatewayDoor: config.gatewayHost === undefined ? 'closed' : 'configured',
    listening,
  };
}

/** The message beside the fields, for a person reading pretty logs. */
export const startupMessage = (f: StartupFacts): string =>
  `newsmatch listening on ${f.listening}: ${f.dataDir} (${formatBytes(f.storeBytes)}, ${f.revisions.toLocaleString('en-US')} revisions, ` +
  `${f.chunks.toLocaleString('en-US')} chunks), text mode ${f.textMode}${f.modelDir ? ` (${f.modelDir})` : ''}, gateway door ${f.gatewayDoor}`;
