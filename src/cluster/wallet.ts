/**
 * The wallet log: every account's ledger as a chain of records on a stream replicated 3 ways,
 * record n of an account's chain at subject `nm.bill.<account>.<n>` (n: the seq of its first
 * entry). A record is appended only while its subject is empty (last subject sequence 0
 * expected): the one conditional append nats-server 2.9 holds to under racing writers on a
 * replicated stream (README, "Cluster mode"). The rules of the chain are SlotWriter's
 * (src/platform/slot-writer.ts); this is its transport, and the feed that copies the log into
 * a node's journal.
 */
import type { JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import { AppError } from '../errors.js';
import type { Billing, SlotRecord, WalletSlots } from '../platform/index.js';
import type { Feed } from './applier.js';
import { takenAlready } from './revision-log.js';

export const WALLET_STREAM = 'NM_WALLET';
export const WALLET_SUBJECTS = 'nm.bill.>';
/** How long an append or a read keeps trying through lost servers and leader elections. */
const RETRY_MS = 60_000;
/** Account ids are subject tokens: what `acct_…` and `operator` are made of. */
const ACCOUNT_TOKEN = /^[A-Za-z0-9_-]{1,64}$/;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
export const encodeRecord = (r: SlotRecord): Uint8Array => encoder.encode(JSON.stringify(r));
export const decodeRecord = (b: Uint8Array): SlotRecord => JSON.parse(decoder.decode(b)) as SlotRecord;

export class NatsWalletSlots implements WalletSlots {
  constructor(
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
  ) {}

  append(account: string, seq: number, record: SlotRecord): Promise<number | null> {
    return retrying(async () => {
      try {
        // msgID: an append resent after a lost answer lands once (and is then found as this record).
        const ack = await this.js.publish(subject(account, seq), encodeRecord(record), { msgID: record.id, expect: { lastSubjectSequence: 0 } });
        return ack.seq;
      } catch (e) {
        if (takenAlready(e)) return null;
        throw e;
      }
    });
  }

  read(account: string, seq: number): Promise<SlotRecord | null> {
    return retrying(async () => {
      const m = await this.jsm.streams.getMessage(WALLET_STREAM, { last_by_subj: subject(account, seq) });
      return m ? decodeRecord(m.data) : null;
    });
  }
}

function subject(account: string, seq: number): string {
  if (!ACCOUNT_TOKEN.test(account)) throw new AppError('not_found', `no account ${account}`);
  return `nm.bill.${account}.${seq}`;
}

/** `f`, tried again through errors of the servers (not refusals: an AppError goes straight out) until RETRY_MS. */
export async function retrying<T>(f: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + RETRY_MS;
  for (;;) {
    try {
      return await f();
    } catch (e) {
      if (e instanceof AppError || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** The wallet log as a node applies it: into its billing journal (Billing.applyShared). */
export const walletFeed = (billing: Billing): Feed => ({
  stream: WALLET_STREAM,
  subjects: WALLET_SUBJECTS,
  what: 'wallet',
  position: () => billing.sharedPosition(),
  apply: (batch: JsMsg[]) => billing.applyShared(batch.map((m) => ({ position: m.seq, record: decodeRecord(m.data) }))),
});
