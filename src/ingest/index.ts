export { importFile, type ImportSummary, type ImportHooks } from './import.js';
export { parseImportLine } from './import-line.js';
export { Outlets, OutletError, parseInterval, type OutletRecord } from './outlets.js';
export { Fetcher, FetchError, type FetcherOptions } from './fetcher.js';
export { Poller, type OutletReport } from './poller.js';
