export { CursorCodec, fingerprint, type Position } from './cursor.js';
