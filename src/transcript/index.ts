/** Transcripts, meta sidecars, final answers and their retention (§8). */
export * from './entries.js';
export * from './writer.js';
export * from './reader.js';
export * from './history.js';
export * from './meta.js';
export * from './output.js';
export * from './retention.js';
export * from './format.js';
