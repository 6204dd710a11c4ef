/**
 * Another process on the same store, for the tests of billing across processes: opens
 * DATA_DIR/lmdb with its own Billing and, on "go" from its parent, either charges an account
 * `count` times (`count` in flight, request ids `<tag>-<i>`) or grants it 1 credit `count` times
 * (`grant`: a millisecond apart; `grant-busy`: back to back, as a script in a loop does, holding
 * the write lock most of the time), then prints a JSON summary on its last line and exits.
 *
 *   node --import tsx test/helpers/billing-child.ts <dir> <charge|grant|grant-busy> <account> <count> <tag>
 */
import path from 'node:path';
import { AppError } from '../../src/errors.js';
import { Billing } from '../../src/platform/index.js';
import { Store } from '../../src/store/index.js';

const [dir, op, account, countArg, tag] = process.argv.slice(2);
const count = Number(countArg);
const store = new Store(path.join(dir, 'lmdb'));
const billing = new Billing(store);
process.stdout.write('ready\n');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));

let ok = 0;
let refused = 0;
const errors: string[] = [];
if (op === 'charge') {
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      try {
        await billing.charge(account, 'sources', { requestId: `${tag}-${i}`, keyId: tag });
        ok++;
      } catch (e) {
        if (e instanceof AppError && e.code === 'quota_exceeded') refused++;
        else errors.push(String(e));
      }
    }),
  );
} else {
  for (let i = 0; i < count; i++) {
    billing.grant(account, 1);
    ok++;
    // Let the parent's charges interleave with these changes (`grant-busy`: only just).
    await new Promise((r) => (op === 'grant' ? setTimeout(r, 1) : setImmediate(r)));
  }
}
await billing.close();
await store.close();
process.stdout.write(`${JSON.stringify({ ok, refused, errors })}\n`);
