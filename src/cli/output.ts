/** What every command prints: the quiet log, the import summary, the outlets' reports; and the usage error (exit 2). */
import { destination, pino } from 'pino';
import type { Config } from '../config.js';
import type { ImportSummary, OutletReport } from '../ingest/index.js';

export class UsageError extends Error {}

/** The CLI logs warnings and errors only, unless LOG_LEVEL asks for more detail than `info`. */
export const quietLevel = (config: Config): Config['logLevel'] => (config.logLevel === 'info' ? 'warn' : config.logLevel);

export function quietLog(config: Config) {
  return pino({ level: quietLevel(config) }, destination(2));
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
