export { KeyStore, type KeyScheme, type KeyInfo } from './keys.js';
