import { audit } from '../audit/audit.js';
import { toLastLine } from '../fleet/record-status.js';
import type { Layout } from '../layout/layout.js';
import type { LoopEvent, ModelMessage } from '../loop/types.js';
import type { ToolCall } from '../tools/types.js';
import type { RecordKeeper } from './record-keeper.js';
import type { InboxPort } from './session-deps.js';
import type { TurnRecorder } from './turn-recorder.js';

/** Where one agent's loop events are kept: its record, the audit trail, its transcript. */
export interface EventBooks {
  layout: Layout;
  agent: string;
  keeper: RecordKeeper;
  recorder: TurnRecorder;
  inbox: InboxPort;
  /** The record's turn count when the open task began: `max_turns` is per task (§6). */
  taskTurnsStart: number;
}

/** What the record, the audit trail and the transcript take from one loop event (its `done` is the session's). */
export async function keepLoopEvent(e: LoopEvent, b: EventBooks): Promise<void> {
  const { keeper } = b;
  switch (e.type) {
    case 'turn_start':
      keeper.set({
        turns: keeper.current.turns + 1,
        taskTurns: keeper.current.turns + 1 - b.taskTurnsStart,
      });
      break;
    case 'tool_call':
      // The audit's tool_call line is the gate's: written once the call is decided (harness/gate.ts).
      keeper.set({ lastLine: toLastLine(toolLine(e.call)) });
      break;
    case 'tool_result':
      audit(b.layout, {
        event: 'tool_result',
        agent: b.agent,
        tool: e.call.name,
        is_error: !!e.result.isError,
        duration_ms: Math.round(e.durationMs),
        ...(e.result.meta ?? {}),
      });
      break;
    case 'message_surfaced':
      b.recorder.surface(e.message, e.injection);
      if (e.injection.source === 'human')
        audit(b.layout, {
          event: 'human_input',
          agent: b.agent,
          source: 'human',
          chars: e.injection.text.length,
        });
      break;
    case 'usage':
      keeper.addUsage(e.inputTokens, e.outputTokens);
      break;
    case 'turn_end': {
      await b.recorder.record(e.messages);
      await b.inbox.claimPending();
      const text = lastAssistantText(e.messages);
      if (text) keeper.set({ lastLine: toLastLine(text) });
      // The turn boundary: one record write for the whole turn.
      keeper.flush();
      break;
    }
  }
}

/** A tool call as the record's last line: the command, the path, or the tool's name. */
function toolLine(call: ToolCall): string {
  const input = (call.input ?? {}) as Record<string, unknown>;
  return typeof input.command === 'string'
    ? `$ ${input.command}`
    : typeof input.path === 'string'
      ? `${call.name} ${input.path}`
      : call.name;
}

function lastAssistantText(messages: ModelMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'assistant') continue;
    if (typeof m.content === 'string') return m.content;
    const text = m.content
      .filter((p) => p.type === 'text')
      .map((p) => (p as { text: string }).text)
      .join('');
    if (text.trim()) return text;
  }
  return '';
}
