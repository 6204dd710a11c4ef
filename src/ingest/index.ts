export { importFile, type ImportSummary, type ImportHooks } from './import.js';
export { parseImportLine } from './import-line.js';
export { Outlets, OutletError, parseInterval, type OutletRecord } from './outlets.js';
export { addOutletList, DEFAULT_OUTLETS_FILE, readOutletList, type ListedOutlet } from './outlet-list.js';
export { Poller, type OutletReport } from './poller.js';
