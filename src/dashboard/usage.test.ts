import { describe, expect, it } from 'vitest';
import { dailyUsage, ledgerCsv } from './usage.js';

describe('usage a day and the ledger CSV', () => {
  it('requests and credits a day: debits add, refunds take back, days outside the window are left out', () => {
    const day = Date.parse('2026-03-10T00:00:00Z');
    const e = (seq: number, at: number, kind: 'debit' | 'refund' | 'grant', credits: number, product?: 'news' | 'sources', units?: number) => ({
      seq,
      at,
      kind,
      credits,
      balance: 0,
      product,
      units,
    });
    const u = dailyUsage(
      [
        e(1, day - 40 * 86_400_000, 'debit', -1, 'news'),
        e(2, day + 5, 'grant', 100),
        e(3, day + 6, 'debit', -1, 'news'),
        e(4, day + 7, 'debit', -1, 'news'),
        e(5, day + 8, 'refund', 1, 'news'),
        e(6, day - 86_400_000, 'debit', -3, 'sources', 3),
      ],
      day + 3_600_000,
    );
    expect(u.days).toHaveLength(30);
    expect(u.days.at(-1)).toBe('2026-03-10');
    expect(u.products).toEqual(['news', 'sources']);
    expect(u.cells.get('2026-03-10')!.get('news')).toEqual({ requests: 1, credits: 1 });
    expect(u.cells.get('2026-03-09')!.get('sources')).toEqual({ requests: 3, credits: 3 });
  });

  it('CSV: quoted where needed, and text a spreadsheet would run as a formula is defused', () => {
    const csv = ledgerCsv([{ seq: 1, at: 0, kind: 'debit', credits: -1, balance: 9, product: 'news', requestId: '-cmd', note: 'a, "b"\nc' }]);
    const lines = csv.split('\r\n');
    expect(lines[0]).toBe('seq,time,kind,credits,balance,product,plan,request_id,key_id,units,overage_usd,refund_of,refunded_by,note');
    expect(lines[1]).toBe(`1,1970-01-01T00:00:00Z,debit,-1,9,news,,'-cmd,,,,,,"a, ""b""\nc"`);
    expect(lines).toHaveLength(3);
  });
});
