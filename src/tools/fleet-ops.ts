import { statusWithReason } from '../fleet/record-status.js';

/**
 * What the fleet tools (§6: starting, listing, waiting for and cancelling agents) do to the
 * fleet, injected as `FleetOps` and bound to the calling agent as parent (src/spawn/ops.ts), so
 * the same commands a person runs are used.
 */

export interface AgentSummary {
  id: string;
  name: string;
  status: string;
  depth: number;
  turns: number;
  lastLine: string;
}

export interface WaitResult {
  id: string;
  /** The task waited for (null when the agent's record was gone). */
  task: number | null;
  status: string;
  exitReason: string | null;
  outputPath: string | null;
  /** The final answer, possibly cut. */
  output: string;
}

export interface FleetOps {
  spawn(
    req: {
      prompt: string;
      agent?: string | undefined;
      id?: string | undefined;
      worktree?: boolean | undefined;
      context?: 'none' | 'last_turn' | 'summary' | undefined;
      queue?: boolean | undefined;
    },
    signal: AbortSignal,
  ): Promise<{ id: string; waited?: boolean }>;
  list(): Promise<AgentSummary[]>;
  /** `tasks`: the task to wait for by id (default: each agent's current one). */
  wait(
    ids: string[],
    opts: { any: boolean; timeoutSecs?: number | undefined; signal: AbortSignal; tasks?: Record<string, number> },
  ): Promise<{ results: WaitResult[]; pending: string[] }>;
  /** The ids it ended (on every host), and one note per host it could not reach. */
  cancel(id: string): Promise<{ cancelled: string[]; notes: string[] }>;
}

/** Finished agents' answers as the model reads them, and who is still running. */
export function formatResults(r: { results: WaitResult[]; pending: string[] }): string {
  const parts = r.results.map(
    (x) =>
      `## ${x.id}: ${statusWithReason(x.status, x.exitReason)}\n${x.output.trim() || '(no answer)'}${x.outputPath ? `\n(answer file: ${x.outputPath})` : ''}`,
  );
  if (r.pending.length) parts.push(`Still running: ${r.pending.join(', ')}`);
  return parts.join('\n\n');
}
