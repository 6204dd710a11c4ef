/**
 * A Piscina worker that copies the rendered revisions into arenas for the event loop's mirror
 * (rendered-mirror.ts), newest first, off the event loop: at 1M chunks that is ~220,000 LMDB
 * reads, and on a cold page cache each may wait on the disk. lmdb-js shares the environment
 * between the threads of a process, so this reads the same store. Each full arena is moved to
 * `port`, then a null says the copy is done; it stops at the mirror's cap, or when the store
 * closes (`stop[0]` set).
 */
import { Store } from './lmdb-store.js';
import { ARENA_BYTES, ArenaPacker, type FillTask, type MirrorArena } from './rendered-mirror.js';

export default async function fill({ path, capBytes, stop, port }: FillTask): Promise<void> {
  const store = new Store(path);
  const packer = new ArenaPacker();
  let sent = 0;
  const send = (a: MirrorArena | null) => {
    if (a === null || sent + ARENA_BYTES > capBytes) return;
    port.postMessage(a, [a.buffer]);
    sent += ARENA_BYTES;
  };
  try {
    let n = 0;
    for (const { key, value } of store.renderedNewestFirst()) {
      if (sent + ARENA_BYTES > capBytes || (++n % 1024 === 0 && Atomics.load(stop, 0) !== 0)) break;
      send(packer.add(key, value));
    }
    if (Atomics.load(stop, 0) === 0) send(packer.take());
  } finally {
    port.postMessage(null);
    port.close();
    await store.close();
  }
}
