import { z } from 'zod';
import { FlotillaError } from '../errors.js';
import type { ToolResult } from './types.js';

/**
 * What the task board's tools (docs/design.md §15) do to the board. Their operations are injected, bound to the
 * caller's identity
 * by whoever builds the tools (the harness: its agent; `flotilla mcp`: the client's identity),
 * so a model never says who it is. A refusal (taken, blocked, not yours) comes back as an
 * error result the model can act on: who holds the task, what it waits on.
 */
export interface TaskToolOps {
  create(t: {
    board: string;
    title: string;
    body?: string;
    priority?: 'urgent' | 'high' | 'normal' | 'low';
    labels?: string[];
    blockedBy?: string[];
    id?: string;
  }): Promise<TaskView>;
  list(board: string, all: boolean): Promise<string>;
  /** `id` null: the first claimable task; null back when there is none. */
  claim(board: string, id: string | null): Promise<TaskView | null>;
  update(board: string, id: string, action: 'done' | 'failed' | 'release' | 'cancel', text: string): Promise<TaskView>;
  wait(board: string, timeoutSecs: number | undefined, signal: AbortSignal): Promise<string>;
  /** The board used when a call names none: the caller's own (§15). */
  defaultBoard: string;
}

/** What a tool reports about one task. */
export interface TaskView {
  id: string;
  board: string;
  title: string;
  body: string;
  status: string;
  blocked_by: string[];
  claimed_by: string | null;
  notes: { text: string }[];
}

/** The board a call names; none means the caller's own. */
export const boardField = z.string().optional().describe("The board (default: your team's board)");

/** One task as the model reads it. */
export function describeTask(t: TaskView): string {
  const lines = [`${t.id} [${t.status}${t.claimed_by ? ` by ${t.claimed_by}` : ''}] ${t.title}`];
  if (t.blocked_by.length > 0) lines.push(`blocked by: ${t.blocked_by.join(', ')}`);
  if (t.body) lines.push('', t.body);
  const last = t.notes.at(-1);
  if (last) lines.push('', `note: ${last.text}`);
  return lines.join('\n');
}

/**
 * A refusal as the model reads it: the board's one line without its CLI hint, and the tool
 * call that would help instead.
 */
export function refused(err: unknown, hint: string): ToolResult {
  if (!(err instanceof FlotillaError) || err.exitCode !== 1) throw err;
  const line = err.message.split(' — ')[0]!.replace(/^refused: /, '');
  return { output: `Refused: ${line}.${hint ? ` ${hint}` : ''}`, isError: true, meta: { refused: err.code } };
}

/** The board a call names, else the caller's own. */
export function boardOf(ops: TaskToolOps, given: string | undefined): string {
  return given?.trim() || ops.defaultBoard;
}
