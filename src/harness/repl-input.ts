import type { ApprovalAnswer } from '../approvals/types.js';

/** Reason recorded when a person answers `n` without one. */
export const DEFAULT_DENY_REASON = 'denied by a person in the pane';

/**
 * A person's answer to an approval question: `y`/`yes` once, `a`/`always` for this tool,
 * `n`/`no` optionally followed by a reason. Anything else asks again. A secret request (§11)
 * has no "always": only `y` or `n`.
 */
export function parseApprovalAnswer(
  line: string,
  requestId: string,
  kind: 'tool' | 'secret' = 'tool',
): ApprovalAnswer | { error: string } {
  const text = line.trim();
  const m = /^(\S+)\s*([\s\S]*)$/.exec(text);
  const word = (m?.[1] ?? '').toLowerCase();
  const rest = (m?.[2] ?? '').trim();
  if ((word === 'y' || word === 'yes') && rest === '') return { requestId, decision: 'approve', scope: 'once' };
  if (kind === 'secret' && word !== 'n' && word !== 'no')
    return { error: 'answer y (give the secret) or n / n <reason>' };
  if ((word === 'a' || word === 'always') && rest === '') return { requestId, decision: 'approve', scope: 'always' };
  if (word === 'n' || word === 'no')
    return { requestId, decision: 'deny', reason: rest === '' ? DEFAULT_DENY_REASON : rest };
  return { error: 'answer y (yes, once), a (always for this tool), n or n <reason>' };
}

/** What a Ctrl-C means at this moment. */
export type InterruptAction = 'abort' | 'exit' | 'clear_line';

/** Ctrl-C twice within this many milliseconds exits. */
export const DOUBLE_INTERRUPT_MS = 2000;

/**
 * Ctrl-C once while working aborts the turn; again within ~2 s, or on an empty line while
 * idle, exits; on a half-typed line while idle it clears the line (as a shell does).
 */
export class InterruptTracker {
  private last = Number.NEGATIVE_INFINITY;

  press(now: number, state: { busy: boolean; lineEmpty: boolean }): InterruptAction {
    const again = now - this.last <= DOUBLE_INTERRUPT_MS;
    this.last = now;
    if (again) return 'exit';
    if (state.busy) return 'abort';
    return state.lineEmpty ? 'exit' : 'clear_line';
  }
}
