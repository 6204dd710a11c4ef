/** What every command prints: the quiet log, the import summary, the outlets' reports; and the usage error (exit 2). */
import { ClusterError } from '../cluster/index.js';
import type { Config } from '../config.js';
import { ModelDirError } from '../embed/index.js';
import { isAppError } from '../errors.js';
import type { ImportSummary, OutletReport } from '../ingest/index.js';
import { createLogger } from '../log.js';
import { EngineLockedError } from '../search/index.js';

export class UsageError extends Error {}

/** Failures of the file system the user can fix (a path, a permission, a full disk). */
const SYSTEM_CODES = new Set(['ENOENT', 'EACCES', 'EPERM', 'EEXIST', 'EISDIR', 'ENOTDIR', 'ENOSPC', 'EROFS', 'EMFILE', 'EADDRINUSE', 'EADDRNOTAVAIL']);

/**
 * The one-line message of an expected runtime failure (exit 1, no stack), or null for anything
 * else, which is a bug and is printed with its stack.
 */
export function describeFailure(e: unknown): string | null {
  if (e instanceof ModelDirError || e instanceof EngineLockedError || e instanceof ClusterError || isAppError(e)) return e.message;
  const code = (e as NodeJS.ErrnoException | null)?.code;
  if (e instanceof Error && code !== undefined && SYSTEM_CODES.has(code)) return e.message;
  return null;
}

/** The CLI logs warnings and errors only, unless LOG_LEVEL asks for more detail than `info`. */
export const quietLevel = (config: Config): Config['logLevel'] => (config.logLevel === 'info' ? 'warn' : config.logLevel);

export function quietLog(config: Config) {
  return createLogger(quietLevel(config), 2, config.logFormat);
}

export function printSummary(file: string, s: ImportSummary): void {
  process.stdout.write(`imported ${file}: ${s.articles} articles, ${s.newRevisions} new revisions, ${s.unchanged} unchanged, ${s.rejected} rejected\n`);
}

/** One line per outlet on stdout, its errors on stderr; exit 1 if anything failed. */
export function printReports(reports: OutletReport[]): number {
  for (const r of reports) {
    process.stdout.write(
      `${r.outlet}: ${r.feeds} feed(s) (${r.notModified} not modified), ${r.items} items, ${r.newArticles} new articles, ` +
        `${r.newRevisions} new revisions, ${r.unchanged} unchanged, ${r.pagesFetched} pages fetched, ${r.errors.length} errors\n`,
    );
    for (const e of r.errors) process.stderr.write(`  ${r.outlet}: ${e}\n`);
  }
  if (reports.length === 0) process.stdout.write('no enabled outlets: add one with `newsmatch sources add`\n');
  return reports.some((r) => r.errors.length > 0) ? 1 : 0;
}
