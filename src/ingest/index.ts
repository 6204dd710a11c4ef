export { importFile, type ImportSummary, type ImportHooks } from './import.js';
export { parseImportLine } from './import-line.js';
