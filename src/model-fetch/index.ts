export { completeModel, fetchModel, formatBytes, hasPartial, MANIFEST, type Manifest } from './fetch-model.js';
export type { DownloadEvents } from './download.js';
export { ModelFetchError, type HubFile, type HubSource } from './hub.js';
