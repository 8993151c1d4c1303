import { z } from 'zod';
import { PERMISSION_MODES } from '../policy/permission-mode.js';
import { AGENT_STATUSES } from './record-status.js';

// The zod schema of an agent record, the source of truth for its fields. Code imports types and
// status rules from record.ts (zod-free); hot paths parse with record-validate.generated.ts.

export const usageSchema = z.object({
  inputTokens: z.number().int().nonnegative().default(0),
  outputTokens: z.number().int().nonnegative().default(0),
  costUsd: z.number().nonnegative().nullable().default(null),
});

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
  /**
   * Parsed once here: a record with an unknown mode is refused as corrupt, naming its file, never read as `default`.
   */
  permissionMode: z.enum(PERMISSION_MODES),
  secrets: z.array(z.string()).default([]),
});

/** How the agent's latest task ended; a persistent agent stays `idle` after it (§5.9). */
export const taskResultSchema = z.object({
  task: z.number().int().positive(),
  status: z.enum(['completed', 'failed', 'cancelled', 'timed_out', 'crashed', 'refused', 'lost']),
  exitReason: z.string().nullable(),
  finishedAt: z.string(),
  outputPath: z.string().nullable(),
});
export type TaskResult = z.infer<typeof taskResultSchema>;

/** A live secret grant as the registry shows it (`status`, the dashboard). */
export const secretGrantSchema = z.object({
  key: z.string(),
  requestId: z.string(),
  /** ISO time the grant ends unless revoked sooner. */
  expiresAt: z.string(),
});
export type SecretGrantView = z.infer<typeof secretGrantSchema>;

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
  /**
   * A --worktree agent's base: the branch (null: a detached HEAD) and commit its worktree was made from; `diff` and
   * `merge` start from it.
   */
  base: z.object({ branch: z.string().nullable(), commit: z.string() }).nullable().optional(),
  mode: z.enum(['interactive', 'oneshot', 'headless']),
  status: z.enum(AGENT_STATUSES),
  exitReason: z.string().nullable(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  /** Model turns over the agent's whole life (usage, audit); `taskTurns` is what `maxTurns` bounds. */
  turns: z.number().int().nonnegative(),
  /** max_turns, per task (§5.9): a persistent agent gets the whole limit for each new task. */
  maxTurns: z.number().int().positive(),
  timeoutSecs: z.number().positive(),
  usage: usageSchema,
  lastLine: z.string().max(500),
  model: z.string(),
  scripted: z.boolean(),
  permissionMode: z.enum(PERMISSION_MODES),
  effectivePolicy: effectivePolicySchema,
  background: z.boolean(),
  resumedFrom: z.string().nullable(),
  /** Where the spawn came from (§5.10): an agent's spawn, a person (terminal, pane), or a schedule. */
  spawnedBy: z.enum(['agent', 'human', 'cron']),
  /** The task counter: 1 for the first task, +1 for each new one a persistent agent takes. */
  task: z.number().int().positive().default(1),
  lastTask: taskResultSchema.nullable().default(null),
  /**
   * Model turns of the current task (the last one while idle): what the pane, status and the dashboard show against
   * maxTurns.
   */
  taskTurns: z.number().int().nonnegative().default(0),
  /** Concurrency slot index held by this agent (§5.3), when slots are in use. */
  slot: z.number().int().nonnegative().nullable().default(null),
  collectedAt: z.string().nullable().default(null),
  /** Secrets granted and live now (§11): key names and expiry only, never values. */
  secretGrants: z.array(secretGrantSchema).default([]),
  /** What runs the agent (§13): Flotilla's own harness, or a vendor CLI under a Flotilla shim. */
  runtime: z.enum(['flotilla', 'claude', 'codex', 'gemini']).default('flotilla'),
  /**
   * A scheduled run (§5.10): its schedule, the run's id, the slot it fired for, and who gets its completion (null: the
   * person).
   */
  schedule: z
    .object({ name: z.string(), runId: z.string(), slot: z.string(), notify: z.string().nullable().default(null) })
    .nullable()
    .default(null),
  /** The task board it works from (§15): its tools' and `flotilla task`'s default; null is the fleet's board. */
  board: z.string().nullable().default(null),
  /** An idle agent claims the next claimable task on its board and works it (§15, `auto_claim`). */
  autoClaim: z.boolean().default(false),
  /** The host that runs it (§17): its fleet-wide name; null = this machine, in records written before hosts existed. */
  host: z.string().nullable().default(null),
});
export type AgentRecord = z.infer<typeof agentRecordSchema>;
export type AgentRecordInput = z.input<typeof agentRecordSchema>;
