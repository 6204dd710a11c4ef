export { liveScrapers, type LiveScrapers } from './scrapers.js';
export { refuseLocked, runLive, type Envelope, type LiveCall, type LiveEndpoint, type Param } from './scraper.js';
export { ParsePool } from './parse-pool.js';
