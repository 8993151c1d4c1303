/** Hook commands (§9): running them, matching tools, the once-only stop hook. */
export * from './schema.js';
export * from './env.js';
export * from './matcher.js';
export * from './run-command.js';
export * from './run-hooks.js';
export * from './stop-once.js';
export * from './team-hooks.js';
