import type { ModelMessage, ToolModelMessage, ToolResultPart } from 'ai';
import type { TranscriptEntry } from './entries.js';

/** What the model reads in place of a result the old agent never recorded. */
export const MISSING_RESULT_TEXT =
  'no result was recorded: the agent stopped before this tool call finished; run it again if it is still needed';

/**
 * Rebuilds the conversation for resume (§8): messages as recorded, surfaced inbox messages
 * and human input as the user turns they were, in order (mail a tool handed over is in
 * that tool's result already). Approvals and the end marker are
 * records for people, not conversation.
 *
 * A transcript cut short mid-tool (crash, cancel) ends with tool calls that have no results;
 * providers reject such a history, so each gets an error result saying what happened.
 */
export function historyFromTranscript(entries: readonly TranscriptEntry[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  let pending: { toolCallId: string; toolName: string }[] = [];
  const settle = (): void => {
    if (pending.length === 0) return;
    const content: ToolResultPart[] = pending.map((c) => ({
      type: 'tool-result',
      toolCallId: c.toolCallId,
      toolName: c.toolName,
      output: { type: 'error-text', value: MISSING_RESULT_TEXT },
    }));
    out.push({ role: 'tool', content } satisfies ToolModelMessage);
    pending = [];
  };
  for (const entry of entries) {
    if (entry.type === 'message') {
      const m = entry.message;
      if (m.role === 'tool') {
        const answered = new Set(m.content.map((p) => (p.type === 'tool-result' ? p.toolCallId : '')));
        pending = pending.filter((c) => !answered.has(c.toolCallId));
        out.push(m);
        continue;
      }
      settle();
      out.push(m);
      if (m.role === 'assistant' && Array.isArray(m.content)) {
        for (const part of m.content) {
          if (part.type === 'tool-call' && !part.providerExecuted)
            pending.push({ toolCallId: part.toolCallId, toolName: part.toolName });
        }
      }
    } else if (entry.type === 'surfaced') {
      // Read in a tool result that is itself in the history: not a turn of its own.
      if (entry.source === 'inbox' && entry.via === 'tool') continue;
      settle();
      out.push({ role: 'user', content: entry.text });
    }
  }
  settle();
  return out;
}
