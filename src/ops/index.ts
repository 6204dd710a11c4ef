export { OpsMetrics } from './metrics.js';
export { countResponses } from './http-hook.js';
export { RequestMetrics } from './request-metrics.js';
export { engineBehind, keywordBehind, startCatchUp, unmetConditions } from './readiness.js';
