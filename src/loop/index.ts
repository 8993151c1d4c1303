/** The agent loop's public edge (§6). */
export { runLoop } from './run-loop.js';
export { toModelPrompt, toModelTools } from './prompt.js';
export type { GateDecision, Injection, LoopEvent, LoopOptions, ModelMessage, StopReason, Usage } from './types.js';
