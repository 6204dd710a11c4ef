export { addressRange, isPublicAddress } from './address.js';
export { CookieJar } from './cookies.js';
export { isBlocked, type Lookup } from './guard.js';
export {
  HttpClient,
  type GetOptions,
  type Page,
  type PostAnswer,
  type PostRequest,
  type StreamHead,
  type StreamOptions,
  type Validators,
} from './http-client.js';
export {
  FetchError,
  liveScraping,
  modelHub,
  politePolling,
  WEBHOOK_MAX_BYTES,
  WebhookError,
  webhookDelivery,
  type Policy,
  type WebhookDeliveryOptions,
} from './policies.js';
export type { Robots } from './robots.js';
