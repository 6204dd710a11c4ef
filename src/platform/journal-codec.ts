/**
 * The bytes of a journal record (the entries one commit appends), as the journal's lmdb
 * encoder: a fixed binary layout, because every metered call encodes one entry on the event
 * loop and msgpack's records cost it ~1 µs (bench/metering.ts) where this costs a tenth.
 *
 *   record  = u8 version (1) · u32 count · entry × count
 *   entry   = u16 fields · u8 kind · f64 seq · f64 at · f64 credits · f64 balance · str account
 *             · then, for each bit set in `fields`, in this order:
 *               product str · plan str · requestId str · keyId str
 *               · lots (u16 n · (f64 lot id · f64 credits) × n) · period f64
 *               · lot (str kind · f64 expiresAt, NaN: never) · units f64 · overageMicros f64
 *               · refundOf f64 · note str
 *   str     = u32 byte length · UTF-8
 *   numbers little-endian; `refundedBy` is derived when read, never stored.
 *
 * A debit of 1 credit: 0x01 · 01000000 · 0f00 (product, plan, requestId, keyId) … 0x02 (debit)
 * · seq · at · -1 · 249 · "acct_…" · "news" · "free" · "req-1" · "key_…"
 */
import { AppError } from '../errors.js';
import type { JournalEntry, LedgerKind, LotKind } from './ledger.js';
import type { Plan, Product } from './products.js';

const VERSION = 1;
const KINDS: LedgerKind[] = ['grant', 'buy', 'debit', 'refund', 'expire', 'subscribe'];
const KIND_CODE = new Map(KINDS.map((k, i) => [k, i]));

const PRODUCT = 1 << 0;
const PLAN = 1 << 1;
const REQUEST = 1 << 2;
const KEY = 1 << 3;
const LOTS = 1 << 4;
const PERIOD = 1 << 5;
const LOT = 1 << 6;
const UNITS = 1 << 7;
const OVERAGE = 1 << 8;
const REFUND_OF = 1 << 9;
const NOTE = 1 << 10;

/** Bytes a string may take: UTF-8 is at most 3 bytes per UTF-16 unit. */
const room = (s: string | undefined) => (s === undefined ? 0 : 4 + 3 * s.length);

function encode(entries: JournalEntry[]): Buffer {
  let size = 5;
  for (const e of entries) {
    size += 2 + 1 + 32 + room(e.account) + room(e.product) + room(e.plan) + room(e.requestId) + room(e.keyId) + room(e.note) + 8 * 5;
    if (e.lots) size += 2 + 16 * e.lots.length;
    if (e.lot) size += room(e.lot.kind) + 8;
  }
  const b = Buffer.allocUnsafe(size);
  let o = b.writeUInt8(VERSION, 0);
  o = b.writeUInt32LE(entries.length, o);
  const str = (s: string) => {
    // Ids, names and products are short ASCII: copied here, which is cheaper than a call into
    // the UTF-8 encoder each; anything else goes to it.
    let n = 0;
    if (s.length <= 64) {
      const at = o + 4;
      for (; n < s.length; n++) {
        const c = s.charCodeAt(n);
        if (c > 0x7f) break;
        b[at + n] = c;
      }
    }
    if (n < s.length) n = b.write(s, o + 4, 'utf8');
    b.writeUInt32LE(n, o);
    o += 4 + n;
  };
  const num = (x: number) => {
    o = b.writeDoubleLE(x, o);
  };
  for (const e of entries) {
    const fields =
      (e.product !== undefined ? PRODUCT : 0) |
      (e.plan !== undefined ? PLAN : 0) |
      (e.requestId !== undefined ? REQUEST : 0) |
      (e.keyId !== undefined ? KEY : 0) |
      (e.lots !== undefined ? LOTS : 0) |
      (e.period !== undefined ? PERIOD : 0) |
      (e.lot !== undefined ? LOT : 0) |
      (e.units !== undefined ? UNITS : 0) |
      (e.overageMicros !== undefined ? OVERAGE : 0) |
      (e.refundOf !== undefined ? REFUND_OF : 0) |
      (e.note !== undefined ? NOTE : 0);
    o = b.writeUInt16LE(fields, o);
    o = b.writeUInt8(KIND_CODE.get(e.kind)!, o);
    num(e.seq);
    num(e.at);
    num(e.credits);
    num(e.balance);
    str(e.account);
    if (fields & PRODUCT) str(e.product!);
    if (fields & PLAN) str(e.plan!);
    if (fields & REQUEST) str(e.requestId!);
    if (fields & KEY) str(e.keyId!);
    if (fields & LOTS) {
      o = b.writeUInt16LE(e.lots!.length, o);
      for (const [id, credits] of e.lots!) {
        num(id);
        num(credits);
      }
    }
    if (fields & PERIOD) num(e.period!);
    if (fields & LOT) {
      str(e.lot!.kind);
      num(e.lot!.expiresAt ?? Number.NaN);
    }
    if (fields & UNITS) num(e.units!);
    if (fields & OVERAGE) num(e.overageMicros!);
    if (fields & REFUND_OF) num(e.refundOf!);
    if (fields & NOTE) str(e.note!);
  }
  return b.subarray(0, o);
}

function decode(bytes: Uint8Array): JournalEntry[] {
  const b = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b[0] !== VERSION) throw new AppError('internal', `a billing journal record of version ${b[0]}: this build reads version ${VERSION}`);
  let o = 5;
  const count = b.readUInt32LE(1);
  const str = () => {
    const n = b.readUInt32LE(o);
    const s = b.toString('utf8', o + 4, o + 4 + n);
    o += 4 + n;
    return s;
  };
  const num = () => {
    const x = b.readDoubleLE(o);
    o += 8;
    return x;
  };
  const out: JournalEntry[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const fields = b.readUInt16LE(o);
    const kind = KINDS[b[o + 2]];
    o += 3;
    const e = { account: '', seq: num(), at: num(), kind, credits: num(), balance: num() } as JournalEntry;
    e.account = str();
    if (fields & PRODUCT) e.product = str() as Product;
    if (fields & PLAN) e.plan = str() as Plan;
    if (fields & REQUEST) e.requestId = str();
    if (fields & KEY) e.keyId = str();
    if (fields & LOTS) {
      const n = b.readUInt16LE(o);
      o += 2;
      const lots: [number, number][] = new Array(n);
      for (let k = 0; k < n; k++) lots[k] = [num(), num()];
      e.lots = lots;
    }
    if (fields & PERIOD) e.period = num();
    if (fields & LOT) {
      const lotKind = str() as LotKind;
      const expiresAt = num();
      e.lot = { kind: lotKind, expiresAt: Number.isNaN(expiresAt) ? null : expiresAt };
    }
    if (fields & UNITS) e.units = num();
    if (fields & OVERAGE) e.overageMicros = num();
    if (fields & REFUND_OF) e.refundOf = num();
    if (fields & NOTE) e.note = str();
    out[i] = e;
  }
  return out;
}

/** The journal's lmdb encoder (values: a record's entries). */
export const journalEncoder = { encode, decode };
