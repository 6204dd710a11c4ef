/** The seeded PRNG every generated corpus, query and fuzz case draws from: the demo's own (src/demo/rng.ts). */
export { Rng } from '../../src/demo/index.js';
