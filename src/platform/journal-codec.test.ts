import { describe, expect, it } from 'vitest';
import { Rng } from '../../test/helpers/rng.js';
import type { JournalEntry } from './ledger.js';
import { journalEncoder } from './journal-codec.js';

const { encode, decode } = journalEncoder;

describe('the journal record codec', () => {
  it('reads back every entry shape a ledger has, field for field', () => {
    const entries: JournalEntry[] = [
      { account: 'acct_0123456789abcdef0123', seq: 1, at: 1_767_225_600_000, kind: 'subscribe', credits: 0, balance: 0, product: 'news', plan: 'free' },
      {
        account: 'acct_0123456789abcdef0123',
        seq: 2,
        at: 1_767_225_600_001,
        kind: 'grant',
        credits: 250,
        balance: 250,
        lots: [[2, 250]],
        lot: { kind: 'free', expiresAt: null },
        note: 'new account',
      },
      {
        account: 'acct_0123456789abcdef0123',
        seq: 3,
        at: 1_767_225_600_002,
        kind: 'grant',
        credits: 7,
        balance: 257,
        lots: [[3, 7]],
        lot: { kind: 'subscription', expiresAt: 1_769_904_000_000 },
      },
      {
        account: 'acct_0123456789abcdef0123',
        seq: 4,
        at: 1_767_225_600_003,
        kind: 'debit',
        credits: -8,
        balance: 249,
        product: 'launches',
        plan: 'pro',
        requestId: 'req-1',
        keyId: 'key_ab',
        period: 1_767_225_600_000,
        lots: [
          [3, 7],
          [2, 1],
        ],
      },
      {
        account: 'operator',
        seq: 9,
        at: 1,
        kind: 'debit',
        credits: 0,
        balance: 0,
        product: 'match',
        requestId: 'r',
        keyId: 'k',
        note: 'operator (list price 1)',
      },
      {
        account: 'acct_x',
        seq: 5,
        at: 2,
        kind: 'debit',
        credits: 0,
        balance: 3,
        product: 'marketplace',
        plan: 'mega',
        period: 0,
        units: 1,
        overageMicros: 8_100,
      },
      {
        account: 'acct_x',
        seq: 6,
        at: 3,
        kind: 'refund',
        credits: 0,
        balance: 3,
        product: 'marketplace',
        requestId: 'ü—日本',
        period: 0,
        lots: [],
        refundOf: 5,
        note: 'HTTP 502 «ø»',
        units: -1,
        overageMicros: -8_100,
      },
      { account: 'acct_x', seq: 7, at: 4, kind: 'expire', credits: -7, balance: -4, lots: [[3, 7]] },
      {
        account: 'acct_x',
        seq: 8,
        at: 5,
        kind: 'buy',
        credits: 9_007_199_254_740_991,
        balance: 9_007_199_254_740_991,
        lots: [[8, 9_007_199_254_740_991]],
        lot: { kind: 'purchased', expiresAt: null },
      },
    ];
    expect(decode(encode(entries))).toEqual(entries);
    expect(decode(encode([]))).toEqual([]);
  });

  it('round-trips random entries, and reads a record out of a larger buffer (lmdb passes its own)', () => {
    const g = new Rng(17);
    const r = () => g.next();
    const text = (n: number) =>
      Array.from({ length: n }, () => String.fromCodePoint(r() < 0.8 ? 32 + Math.floor(r() * 90) : 0x80 + Math.floor(r() * 0x2000))).join('');
    for (let round = 0; round < 200; round++) {
      const entries: JournalEntry[] = Array.from({ length: 1 + Math.floor(r() * 20) }, (_, i) => {
        const e: JournalEntry = {
          account: text(1 + Math.floor(r() * 30)),
          seq: i + 1,
          at: Math.floor(r() * 2e12),
          kind: (['grant', 'buy', 'debit', 'refund', 'expire', 'subscribe'] as const)[Math.floor(r() * 6)],
          credits: Math.floor(r() * 2000) - 1000,
          balance: Math.floor(r() * 1e7),
        };
        if (r() < 0.7) e.product = 'news';
        if (r() < 0.5) e.plan = 'mega';
        if (r() < 0.6) e.requestId = text(Math.floor(r() * 128));
        if (r() < 0.6) e.keyId = text(20);
        if (r() < 0.5) e.lots = Array.from({ length: Math.floor(r() * 4) }, () => [Math.floor(r() * 100), Math.floor(r() * 50)] as [number, number]);
        if (r() < 0.5) e.period = Math.floor(r() * 2e12);
        if (r() < 0.2) e.lot = { kind: 'purchased', expiresAt: r() < 0.5 ? null : Math.floor(r() * 2e12) };
        if (r() < 0.2) e.units = 1;
        if (r() < 0.2) e.overageMicros = 13_400;
        if (r() < 0.2) e.refundOf = Math.floor(r() * 100);
        if (r() < 0.3) e.note = text(Math.floor(r() * 40));
        return e;
      });
      const bytes = encode(entries);
      const padded = Buffer.concat([bytes, Buffer.alloc(64, 0xee)]);
      expect(decode(padded)).toEqual(entries);
    }
  });

  it('refuses a record of another version instead of misreading it', () => {
    const bytes = encode([{ account: 'a', seq: 1, at: 0, kind: 'debit', credits: -1, balance: 0 }]);
    bytes[0] = 2;
    expect(() => decode(bytes)).toThrow(/version 2/);
  });
});
