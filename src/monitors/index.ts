export { MonitorFeed } from './feed.js';
export { MonitorMatcher, type MonitorMatch, type MonitorSpec } from './matcher.js';
export { Monitors, view, type CreateMonitor, type MonitorsDeps, type MonitorView } from './monitors.js';
export {
  eventId,
  MonitorStore,
  type DeliveryAttempt,
  type MonitorEvent,
  type MonitorItem,
  type MonitorRecord,
  type EventRef,
  type NewEvent,
  type WindowMatches,
  windowOf,
} from './store.js';
export { parseLastEventId, STREAM_RETRY_MS, streamEvents, type StreamOptions } from './stream.js';
export { NODE_VERIFY, PYTHON_VERIFY } from './verify-snippets.js';
export {
  backoffMs,
  checkWebhookUrl,
  signPayload,
  verifySignature,
  WebhookDeliverer,
  webhookBody,
  webhookHeaders,
  type WebhookDelivererOptions,
} from './webhooks.js';
