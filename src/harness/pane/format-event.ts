import type { ApprovalRequest } from '../../approvals/types.js';
import type { SessionEvent } from '../session-types.js';
import { sanitize, truncate, type Style } from './ansi.js';
import { inboxNoticeLines } from './format-inbox.js';
import { formatToolCall, formatToolResult } from './format-tool.js';

/**
 * What one event adds to the pane. `text` continues the current line (streamed model text);
 * `line` is a whole line (ANSI allowed) that first ends any streamed text; `break` only ends
 * streamed text.
 */
export type PaneOutput = { kind: 'text'; text: string } | { kind: 'line'; text: string } | { kind: 'break' };

export interface FormatContext {
  style: Style;
  /** Terminal columns; lines are cut to fit one row. */
  width: number;
  /** The person's latest line: a task started from it is not echoed again. */
  lastHumanLine?: string;
}

const line = (text: string): PaneOutput => ({ kind: 'line', text });

/** Event → pane output. Pure; the writer (`PaneScreen`) owns the terminal. */
export function formatEvent(e: SessionEvent, ctx: FormatContext): PaneOutput[] {
  const { style, width } = ctx;
  const max = Math.max(20, width - 1);
  switch (e.type) {
    case 'text_delta': {
      const text = sanitize(e.text);
      return text === '' ? [] : [{ kind: 'text', text }];
    }
    case 'tool_call':
      return formatToolCall(e.call, style, width).map(line);
    case 'tool_result':
      return formatToolResult(e.call, e.result, style, width).map(line);
    case 'message_surfaced':
      // The person just typed a human injection; only inbox messages get a notice.
      return e.injection.source === 'inbox' ? inboxNoticeLines(e.injection.text, style, width).map(line) : [];
    case 'turn_end':
      return [{ kind: 'break' }];
    case 'notice': {
      const text = truncate(sanitize(e.text).replace(/\n+/g, ' '), max - 2);
      if (e.level === 'error') return [line(style.red(`✗ ${text}`))];
      if (e.level === 'warn') return [line(style.yellow(`! ${text}`))];
      return [line(style.dim(`• ${text}`))];
    }
    case 'approval_resolved': {
      const verb = e.decision === 'approve' ? 'approved' : 'denied';
      const by =
        e.by === 'timeout'
          ? 'timed out'
          : e.by === 'aborted'
            ? 'withdrawn: the turn was stopped'
            : e.by === 'cli'
              ? 'answered with flotilla approve/deny'
              : e.by === 'dashboard'
                ? 'answered in the dashboard'
                : 'answered here';
      const text = `approval ${e.requestId} ${verb} (${by})`;
      return [line(e.decision === 'approve' ? style.green(text) : style.yellow(text))];
    }
    case 'task_start': {
      const prompt = sanitize(e.prompt).trim();
      const echo = prompt === '' || prompt === ctx.lastHumanLine?.trim() ? '' : `: ${prompt.replace(/\n+/g, ' ')}`;
      return [{ kind: 'break' }, line(style.dim(truncate(`▸ task ${e.task}${echo}`, max)))];
    }
    case 'task_end': {
      const r = e.result;
      const why = r.exitReason ? `: ${sanitize(r.exitReason).replace(/\n+/g, ' ')}` : '';
      const text = truncate(`${r.status === 'completed' ? '✓' : '✗'} task ${r.task} ${r.status}${why}`, max);
      const colored =
        r.status === 'completed' ? style.green(text) : r.status === 'cancelled' ? style.yellow(text) : style.red(text);
      return [{ kind: 'break' }, line(colored)];
    }
    case 'turn_start':
    case 'usage':
    case 'status':
    case 'approval':
    case 'done':
      // Shown elsewhere: the status line (turns, tokens, state), the approval question, task_end.
      return [];
  }
}

/**
 * The question line of an approval: `Allow shell: $ rm -rf build ?`, or for a secret request
 * `Give secret 'github-token' for 300 s? reason: push the tag`.
 */
export function formatApprovalQuestion(req: ApprovalRequest, style: Style, width: number): string {
  const text =
    req.kind === 'secret'
      ? `Give secret '${req.key ?? '?'}' to ${req.agentId} for ${req.ttlSecs ?? '?'} s?${req.reason ? ` reason: ${req.reason}` : ''}${req.warning ? ` (${req.warning})` : ''}`
      : `Allow ${req.tool}: ${req.summary} ?`;
  return style.yellow(style.bold(truncate(sanitize(text).replace(/\n+/g, ' '), Math.max(20, width - 1))));
}

/** The prompt while an approval waits for an answer. */
export const APPROVAL_PROMPT = '[y]es once / [a]lways for this tool / [n]o (reason) › ';
/** The prompt while a secret request waits: the value is read in this pane's process on `y`. */
export const SECRET_PROMPT = '[y]es, give it / [n]o (reason) › ';
