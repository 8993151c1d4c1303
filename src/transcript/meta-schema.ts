import { z } from 'zod';
import { usageSchema } from '../fleet/record-schema.js';
import { AGENT_STATUSES } from '../fleet/record-status.js';

/**
 * The zod schema of a transcript's sidecar `transcripts/<id>.meta.json` (§8), the source of
 * truth; meta.ts reads and writes it with meta-validate.generated.ts, generated from this.
 */
export const transcriptMetaSchema = z.object({
  agent_id: z.string(),
  /** The instance's display name (normally the definition name). */
  agent_name: z.string(),
  def_name: z.string(),
  status: z.enum(AGENT_STATUSES),
  exit_reason: z.string().nullable().default(null),
  started_at: z.string(),
  finished_at: z.string().nullable().default(null),
  resumed_from: z.string().nullable().default(null),
  turns_used: z.number().int().nonnegative().default(0),
  model: z.string().nullable().default(null),
  usage: usageSchema.prefault({}),
  /** When `flotilla collect` last handed this agent's output to a person. */
  collected_at: z.string().nullable().default(null),
});
export type TranscriptMeta = z.infer<typeof transcriptMetaSchema>;
export type TranscriptMetaInput = z.input<typeof transcriptMetaSchema>;
