/**
 * The address check where a socket is opened: a dns.lookup that refuses a name when any of its
 * addresses is not public, and the refusal every outbound path throws. The check runs on the
 * addresses the socket then connects to, so a name cannot answer one address for the check and
 * another for the connection (DNS rebinding).
 */
import dns from 'node:dns';
import net from 'node:net';
import { isPublicAddress } from './address.js';

/** dns.lookup's shape (the callback form undici hands to net.connect). */
export type Lookup = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

export const systemLookup: Lookup = (hostname, options, callback) => dns.lookup(hostname, options, callback);

/** `code` of the error an outbound request to a non-public target fails with. */
export const BLOCKED = 'EBLOCKED';

/**
 * The refusal. Its message names the host as the caller wrote it, never what it resolved to:
 * callers see "blocked", not the layout of the operator's network.
 */
export const blockedError = (host: string, why = 'is not a public address'): Error & { code: string } =>
  Object.assign(new Error(`${host} ${why}`), { code: BLOCKED });

/** Whether `e`, or an error it was caused by, is the refusal. */
export function isBlocked(e: unknown): boolean {
  for (let at = e as { code?: unknown; cause?: unknown } | undefined, depth = 0; at && depth < 8; at = at.cause as typeof at, depth++) {
    if (at.code === BLOCKED) return true;
  }
  return false;
}

/** Every address of `hostname`, or the refusal when one of them is not public (a mixed answer is not trusted either). */
export function resolvePublic(hostname: string, lookup: Lookup = systemLookup): Promise<dns.LookupAddress[]> {
  return new Promise((resolve, reject) => {
    if (net.isIP(hostname)) return isPublicAddress(hostname) ? resolve([{ address: hostname, family: net.isIP(hostname) }]) : reject(blockedError(hostname));
    lookup(hostname, { all: true }, (err, addresses) => {
      if (err) return reject(err);
      if (addresses.length === 0 || addresses.some((a) => !isPublicAddress(a.address))) return reject(blockedError(hostname));
      resolve(addresses);
    });
  });
}

/** A `lookup` for net.connect / undici's `connect` options that only ever yields public addresses. */
export function guardedLookup(lookup: Lookup = systemLookup): net.LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, callback: (err: Error | null, address: string | dns.LookupAddress[], family?: number) => void) => {
    resolvePublic(hostname, lookup).then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        if (wanted.length === 0) return callback(Object.assign(new Error(`${hostname} has no IPv${options.family} address`), { code: 'ENOTFOUND' }), '');
        if (options.all) callback(null, wanted);
        else callback(null, wanted[0].address, wanted[0].family);
      },
      (err: Error) => callback(err, ''),
    );
  }) as unknown as net.LookupFunction;
}
