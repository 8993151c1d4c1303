import type { ModelMessage } from 'ai';
import { z } from 'zod';
import { TERMINAL_STATUSES } from '../fleet/record-status.js';
import type { AgentStatus } from '../fleet/record.js';

/**
 * The transcript file format (§8): `transcripts/<id>.jsonl`, a versioned header line, then
 * one entry per line, each `{seq, ts, type, …}`. Bump TRANSCRIPT_VERSION on any change a
 * reader of the old version would misread.
 */
export const TRANSCRIPT_VERSION = 1;

export const transcriptHeaderSchema = z.object({
  type: z.literal('header'),
  version: z.number().int().positive(),
  agent_id: z.string(),
  def_name: z.string(),
  parent_id: z.string().nullable().default(null),
  model: z.string().nullable().default(null),
  cwd: z.string().nullable().default(null),
  resumed_from: z.string().nullable().default(null),
  created_at: z.string(),
});
export type TranscriptHeader = z.infer<typeof transcriptHeaderSchema>;
/** What a writer is given: the header minus what it fills in itself. */
export type TranscriptHeaderInput = Omit<z.input<typeof transcriptHeaderSchema>, 'type' | 'version' | 'created_at'> & {
  created_at?: string;
};

const MESSAGE_ROLES = new Set(['system', 'user', 'assistant', 'tool']);

/**
 * Checks the outer shape of an AI SDK `ModelMessage` (role + string or part-array content).
 * Parts are kept as written: the SDK validates them when the history is sent, and importing
 * its runtime schema here would load the whole SDK into every `flotilla transcript` call.
 */
function isModelMessage(v: unknown): v is ModelMessage {
  if (typeof v !== 'object' || v === null) return false;
  const m = v as { role?: unknown; content?: unknown };
  return (
    typeof m.role === 'string' &&
    MESSAGE_ROLES.has(m.role) &&
    (typeof m.content === 'string' || Array.isArray(m.content))
  );
}

const base = { seq: z.number().int().positive(), ts: z.string() };

const messageEntry = z.object({
  ...base,
  type: z.literal('message'),
  message: z.custom<ModelMessage>(isModelMessage, { message: 'not an AI SDK ModelMessage {role, content}' }),
});

/** Inbox messages put into the conversation as one user turn; `text` is exactly what the model saw. */
const surfacedInboxEntry = z.object({
  ...base,
  type: z.literal('surfaced'),
  source: z.literal('inbox'),
  ids: z.array(z.string()),
  /** Maildir file names of the same messages (absent in older transcripts); resume de-duplicates by these. */
  files: z.array(z.string()).optional(),
  /**
   * `tool`: the model read these in a tool result already in the transcript (check_inbox,
   * or completions wait_for_agents returned); recorded so they are claimed once and never
   * shown again, but not a turn of their own when the conversation is rebuilt.
   */
  via: z.literal('tool').optional(),
  text: z.string(),
});

/** A line a person typed into the pane, injected as a user turn. */
const surfacedHumanEntry = z.object({
  ...base,
  type: z.literal('surfaced'),
  source: z.literal('human'),
  text: z.string(),
});

/** An answered approval (§7) or secret request (§11; key names only, never values). */
const approvalEntry = z.object({
  ...base,
  type: z.literal('approval'),
  request_id: z.string(),
  /** What was asked, e.g. `shell: git push` or `secret: GITHUB_TOKEN`. */
  subject: z.string(),
  decision: z.enum(['approved', 'denied']),
  /** Who decided: `human`, `policy`, `timeout`, `headless`, … */
  by: z.string(),
  reason: z.string().nullable().default(null),
});

const endEntry = z.object({
  ...base,
  type: z.literal('end'),
  status: z.enum([...TERMINAL_STATUSES] as [AgentStatus, ...AgentStatus[]]),
  exit_reason: z.string().nullable(),
});

export const transcriptEntrySchema = z.union([
  messageEntry,
  surfacedInboxEntry,
  surfacedHumanEntry,
  approvalEntry,
  endEntry,
]);
export type TranscriptEntry = z.infer<typeof transcriptEntrySchema>;
export type MessageEntry = z.infer<typeof messageEntry>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An entry as the harness hands it to the writer, which adds `seq` and `ts`. */
export type NewTranscriptEntry = DistributiveOmit<z.input<typeof transcriptEntrySchema>, 'seq' | 'ts'>;
