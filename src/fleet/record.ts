import { z } from 'zod';

/** Agent states (§3). Terminal states never change. */
export const AGENT_STATUSES = [
  'spawning', 'starting', 'working', 'idle', 'waiting_approval',
  'completed', 'failed', 'cancelled', 'timed_out', 'crashed', 'refused',
] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

export const TERMINAL_STATUSES: ReadonlySet<AgentStatus> = new Set([
  'completed', 'failed', 'cancelled', 'timed_out', 'crashed', 'refused',
]);

export function isTerminal(status: AgentStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}

/** Live states may move among themselves as the design's arrows allow; any may end. */
const NEXT: Record<AgentStatus, readonly AgentStatus[]> = {
  spawning: ['starting'],
  starting: ['working', 'idle'],
  working: ['idle', 'waiting_approval'],
  idle: ['working', 'waiting_approval'],
  waiting_approval: ['working', 'idle'],
  completed: [], failed: [], cancelled: [], timed_out: [], crashed: [], refused: [],
};

/** True when `from → to` is a legal move of the status machine (staying put is legal for live states). */
export function canTransition(from: AgentStatus, to: AgentStatus): boolean {
  if (isTerminal(from)) return false;
  if (from === to) return true;
  return isTerminal(to) || NEXT[from].includes(to);
}

export const usageSchema = z.object({
  inputTokens: z.number().int().nonnegative().default(0),
  outputTokens: z.number().int().nonnegative().default(0),
  costUsd: z.number().nonnegative().nullable().default(null),
});
export type Usage = z.infer<typeof usageSchema>;

export const tmuxPlaceSchema = z.object({
  socket: z.string().nullable(),
  sessionId: z.string(),
  windowId: z.string(),
  paneId: z.string(),
});
export type TmuxPlace = z.infer<typeof tmuxPlaceSchema>;

/** What an agent may do, fixed at spawn (§7). */
export const effectivePolicySchema = z.object({
  tools: z.array(z.string()),
  permissionMode: z.string(),
  secrets: z.array(z.string()).default([]),
});
export type EffectivePolicy = z.infer<typeof effectivePolicySchema>;

/** How the agent's latest task ended; a persistent agent stays `idle` after it (§5.9). */
export const taskResultSchema = z.object({
  task: z.number().int().positive(),
  status: z.enum(['completed', 'failed', 'cancelled', 'timed_out', 'crashed', 'refused']),
  exitReason: z.string().nullable(),
  finishedAt: z.string(),
  outputPath: z.string().nullable(),
});
export type TaskResult = z.infer<typeof taskResultSchema>;

/** One agent instance: `state/agents/<id>.json` (§3). */
export const agentRecordSchema = z.object({
  version: z.literal(1).default(1),
  id: z.string(),
  name: z.string(),
  parentId: z.string().nullable(),
  rootId: z.string(),
  depth: z.number().int().nonnegative(),
  pid: z.number().int().positive().nullable(),
  pidStartTime: z.string().nullable(),
  tmux: tmuxPlaceSchema.nullable(),
  cwd: z.string(),
  worktree: z.string().nullable(),
  mode: z.enum(['interactive', 'oneshot', 'headless']),
  status: z.enum(AGENT_STATUSES),
  exitReason: z.string().nullable(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  turns: z.number().int().nonnegative(),
  maxTurns: z.number().int().positive(),
  timeoutSecs: z.number().positive(),
  usage: usageSchema,
  lastLine: z.string().max(500),
  model: z.string(),
  scripted: z.boolean(),
  permissionMode: z.string(),
  effectivePolicy: effectivePolicySchema,
  background: z.boolean(),
  resumedFrom: z.string().nullable(),
  spawnedBy: z.enum(['agent', 'human']),
  /** The task counter: 1 for the first task, +1 for each new one a persistent agent takes. */
  task: z.number().int().positive().default(1),
  lastTask: taskResultSchema.nullable().default(null),
  /** Concurrency slot index held by this agent (§5.3), when slots are in use. */
  slot: z.number().int().nonnegative().nullable().default(null),
  collectedAt: z.string().nullable().default(null),
});
export type AgentRecord = z.infer<typeof agentRecordSchema>;
export type AgentRecordInput = z.input<typeof agentRecordSchema>;

/** Trims a line of output for `lastLine` (≤ 500 chars, one line). */
export function toLastLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  const last = lines.at(-1) ?? '';
  return last.length > 500 ? last.slice(0, 499) + '…' : last;
}
