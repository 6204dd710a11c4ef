export { addressRange, isPublicAddress } from './address.js';
export { isBlocked, type Lookup } from './guard.js';
export { Outbound, type OutboundOptions, type SendOptions } from './outbound.js';
