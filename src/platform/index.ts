export { Billing, FREE_CREDITS, OPERATOR, periodOf, type AccountRecord, type AccountSummary, type Charge, type LedgerEntry } from './billing.js';
export { fingerprint, IDEMPOTENCY_KEY, IdempotencyStore } from './idempotency.js';
export { KeyStore, type KeyInfo, type KeyRecord, type KeyScheme } from './keys.js';
export { Metering, type Admission } from './metering.js';
export * from './products.js';
export { RateLimiter } from './rate-limit.js';
