/**
 * The vector size everywhere: bge-m3 embeds in 1024 dimensions. The addon has the same number
 * (`kDims` in native/core/segment.h, exported as `dims`); native.ts refuses an addon built with
 * another.
 */
export const DIMS = 1024;
