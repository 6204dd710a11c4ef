export { MonitorMatcher, type MonitorMatch, type MonitorSpec } from './matcher.js';
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
