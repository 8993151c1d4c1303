/** Pure policy decisions (§7): tool filter, permission modes, shell gate, no escalation. */
export * from './tool-table.js';
export * from './tool-names.js';
export * from './tool-policy.js';
export * from './permission-mode.js';
export * from './decide.js';
export * from './shell/index.js';
export * from './escalation.js';
export * from './read-scope.js';
export * from './broadcast.js';
