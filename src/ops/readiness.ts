/**
 * Readiness: whether this process answers like its data says it should. Health (the process
 * is up) needs nothing of this; readiness reads the store, the engine and the keyword index.
 */
import { keywordLag } from '../keyword/index.js';
import type { Service } from '../service.js';

/**
 * Records LMDB holds that keyword search cannot see yet (news revisions and job-posting
 * versions): either corpus may answer `partial` while it catches up.
 */
export function keywordBehind(service: Service): number {
  return keywordLag(service).pending;
}

/**
 * Chunks LMDB holds that the search engine has not appended (not searchable yet), read from a
 * fresh snapshot: another process (an import, `ingest --once`) may have written since the last.
 */
export function engineBehind(service: Service): number {
  service.store.refresh();
  return Math.max(0, service.store.nextLabel() - service.engine.nextLabel);
}

/**
 * Every unmet condition, in words fit for a load balancer's log (counts, no paths or keys);
 * empty when ready. Ready: the store is open, the engine is loaded and holds every chunk LMDB
 * holds, the keyword index holds every record, and text mode is as configured.
 */
export function unmetConditions(service: Service): string[] {
  const unmet: string[] = [];
  try {
    service.store.nextOrd();
  } catch {
    // Nothing else can be read without the store.
    return ['the store is not open'];
  }
  try {
    const chunks = engineBehind(service);
    if (chunks > 0) unmet.push(`the search engine is ${chunks} chunks behind LMDB`);
  } catch {
    unmet.push('the search engine is not loaded');
  }
  const records = keywordBehind(service);
  if (records > 0) unmet.push(`the keyword index is ${records} records behind LMDB`);
  unmet.push(...(service.cluster?.unmet() ?? []));
  if (service.config.modelDir !== undefined && !service.embedder?.info) unmet.push('text mode is configured but the bge-m3 model is not loaded');
  return unmet;
}

/**
 * Starts the catch-up a request would have started (the engine appends on the next match, the
 * keyword index on the next search). A probe that finds the service behind calls it: an
 * instance a load balancer took out of rotation gets no requests, and would stay behind.
 */
export function startCatchUp(service: Service): void {
  const failed = (e: unknown) => service.log.warn({ err: e }, 'readiness: catching up with LMDB failed');
  setImmediate(() => {
    service.catchUp().catch(failed);
    service.news.fresh().catch(failed);
    service.jobsIndex.fresh().catch(failed);
  });
}
