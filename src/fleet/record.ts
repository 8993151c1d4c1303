/**
 * The agent record's types and status rules, without zod: importing this costs nothing at
 * start-up (§14). The zod schema, the source of truth, is record-schema.ts; hot paths check
 * records with record-validate.generated.ts, generated from it.
 */
export {
  AGENT_STATUSES,
  TERMINAL_STATUSES,
  canTransition,
  isTerminal,
  toLastLine,
  type AgentStatus,
} from './record-status.js';
export type { TmuxPlace, TaskResult, SecretGrantView, AgentRecord, AgentRecordInput } from './record-schema.js';
