export { addressRange, isPublicAddress } from './address.js';
export { CookieJar } from './cookies.js';
export { isBlocked, type Lookup } from './guard.js';
export { HttpClient, type GetOptions, type Page, type Validators } from './http-client.js';
export { Outbound, type OutboundOptions, type SendOptions } from './outbound.js';
export { FetchError, liveScraping, politePolling, type Failure, type LiveScrapingOptions, type Policy, type PolitePollingOptions } from './policies.js';
export type { Robots } from './robots.js';
