/**
 * Shapes of a pending approval and its answer (§7, §11). Suggested for the harness and
 * `flotilla approve/deny`; only types live here, so policy stays free of I/O.
 */

/** A tool call waiting for a person. */
export interface ApprovalRequest {
  /** Unique, sortable id (see `newSortableId`). */
  id: string;
  /** The agent that wants to run the call. */
  agentId: string;
  /** Canonical tool id, e.g. `shell`. */
  tool: string;
  /** One line a person can judge: `$ npm publish`, `write src/app.ts (1.2 KB)`. */
  summary: string;
  /** ISO timestamp; an unanswered request is denied after `agents.approval_timeout_secs`. */
  createdAt: string;
  /** The permission mode that asked, for the record. */
  mode?: string;
  /** `secret` for a request_secret question (§11): answered y / n, never "always". */
  kind?: 'tool' | 'secret';
  /** The secret key asked for (kind `secret`). */
  key?: string;
  /** How long a grant would last (kind `secret`). */
  ttlSecs?: number;
  /** The agent's reason (kind `secret`). */
  reason?: string;
  /** What the person should know before answering (kind `secret` without a sandbox: who else could read the value). */
  warning?: string;
}

/** A person's answer. `always` approves this tool for the rest of the agent's life. */
export type ApprovalAnswer =
  | { requestId: string; decision: 'approve'; scope: 'once' | 'always'; by?: AnsweredBy }
  | { requestId: string; decision: 'deny'; reason: string; by?: AnsweredBy };

/** Where a person answered from, so the agent's pane says so truly (`flotilla approve` or the dashboard). */
export type AnsweredBy = 'cli' | 'dashboard';

/** What an approval tells the session's listeners (the pane draws both): asked, then answered. */
export type ApprovalEvent =
  /** A person must answer this; answer with `session.answerApproval`. */
  | { type: 'approval'; request: ApprovalRequest }
  | {
      type: 'approval_resolved';
      requestId: string;
      decision: 'approve' | 'deny';
      by: 'pane' | 'cli' | 'dashboard' | 'chat' | 'timeout' | 'aborted';
    };
