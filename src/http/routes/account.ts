import type { FastifyInstance } from 'fastify';
import { formatRate, OPERATOR, type Billing } from '../../platform/index.js';
import { TAGS } from '../openapi.js';
import { noQuery } from '../schemas.js';

const rate = {
  type: 'object',
  required: ['limit', 'quota', 'window_s'],
  properties: { limit: { type: 'string' }, quota: { type: 'integer' }, window_s: { type: 'integer' } },
} as const;

const response200 = {
  type: 'object',
  required: ['id', 'credits', 'subscriptions'],
  properties: {
    id: { type: 'string' },
    name: { type: ['string', 'null'] },
    created_at: { type: ['string', 'null'], format: 'date-time' },
    unlimited: { type: 'boolean', description: 'The operator account: no wallet, no plans, no rate cap.' },
    credits: {
      type: ['object', 'null'],
      properties: {
        total: { type: 'integer' },
        subscription: { type: 'integer', description: 'Spent first; expire with the period.' },
        free: { type: 'integer' },
        purchased: { type: 'integer', description: 'Never expire.' },
        expiring: {
          type: 'array',
          items: { type: 'object', properties: { credits: { type: 'integer' }, expires_at: { type: 'string', format: 'date-time' } } },
        },
      },
    },
    subscriptions: {
      type: 'array',
      items: {
        type: 'object',
        required: ['product', 'plan', 'period_start', 'period_end', 'used', 'rate_limit'],
        properties: {
          product: { type: 'string' },
          plan: { type: 'string' },
          period_start: { type: 'string', format: 'date-time' },
          period_end: { type: 'string', format: 'date-time' },
          used: { type: 'integer', description: 'Billed calls this period.' },
          credits_per_call: { type: 'integer' },
          rate_limit: rate,
          included: { type: 'integer', description: 'Marketplace plans: requests included a period.' },
          overage_requests: { type: 'integer' },
          overage_usd: { type: 'number' },
          stop: { type: 'integer', description: 'Marketplace plans: calls past this answer 429 quota_exceeded until the period ends.' },
        },
      },
    },
  },
} as const;

export function accountRoutes(app: FastifyInstance, billing: Pick<Billing, 'summary'>): void {
  app.get('/v1/account', {
    config: { auth: 'bearer' },
    schema: {
      summary: "The key's account: credits by kind, subscriptions with this period's usage, rate limits (free of charge)",
      operationId: 'getAccount',
      tags: [TAGS.account.name],
      security: [{ bearer: [] }],
      querystring: noQuery,
      response: { 200: response200 },
    },
    handler: async (req) => {
      const account = req.apiKey!.account ?? OPERATOR;
      if (account === OPERATOR) return { id: OPERATOR, name: 'operator', created_at: null, unlimited: true, credits: null, subscriptions: [] };
      const s = billing.summary(account);
      return {
        ...s,
        unlimited: false,
        subscriptions: s.subscriptions.map((sub) => ({
          ...sub,
          rate_limit: { limit: formatRate(sub.rate_limit), quota: sub.rate_limit.quota, window_s: sub.rate_limit.windowS },
        })),
      };
    },
  });
}
