import { jsonLines, TurnList } from './session-file.js';
import type { SessionTurn } from './types.js';

/**
 * Gemini CLI's session file (`GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-….jsonl`)
 * as turns. The file is a log of updates to one conversation record: a first line with the
 * `sessionId`, then messages by `id` (a later line with the same id replaces the earlier one:
 * a `gemini` message is written again once its tool calls have results) and `$set` lines
 * (`messages` replaces the whole list). A `user` message is a prompt (Gemini's own
 * `<session_context>` preamble is not one); a `gemini` message is the model's text and its
 * `toolCalls`, each with its result; `info`, `warning` and `error` lines are the CLI's own.
 */
export function geminiSessionTurns(text: string): SessionTurn[] {
  const messages = new Map<string, Record<string, unknown>>();
  for (const e of jsonLines(text)) {
    const set = e.$set as { messages?: unknown } | undefined;
    if (set && Array.isArray(set.messages)) {
      messages.clear();
      for (const m of set.messages as Record<string, unknown>[]) if (typeof m?.id === 'string') messages.set(m.id, m);
    } else if (typeof e.id === 'string' && typeof e.type === 'string') {
      messages.set(e.id, e);
    }
  }
  const list = new TurnList();
  for (const m of messages.values()) {
    const ts = m.timestamp;
    if (m.type === 'user') {
      const words = partsText(m.content);
      if (!words.trimStart().startsWith('<session_context>')) list.user(ts, words);
    } else if (m.type === 'gemini') {
      list.assistantText(ts, partsText(m.content));
      for (const call of Array.isArray(m.toolCalls) ? (m.toolCalls as Record<string, unknown>[]) : []) {
        const id = String(call.id ?? '');
        list.toolCall(call.timestamp ?? ts, id, String(call.name ?? 'tool'), call.args ?? {});
        if (call.result !== undefined)
          list.toolResult(call.timestamp ?? ts, id, resultText(call.result), call.status === 'error');
      }
    }
  }
  return list.turns;
}

/** The `sessionId` of the file's first line (`gemini --resume` takes it). */
export function geminiSessionId(text: string): string | undefined {
  const first = jsonLines(text.slice(0, text.indexOf('\n') + 1 || undefined))[0];
  return typeof first?.sessionId === 'string' ? first.sessionId : undefined;
}

/**
 * A message's content: a string, or parts of which the `text` ones are words (function responses are the tool calls'
 * results).
 */
function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p) => (typeof (p as { text?: unknown })?.text === 'string' ? (p as { text: string }).text : ''))
    .filter(Boolean)
    .join('\n');
}

/** A tool call's result: the function responses' output (or error), as the model was given it. */
function resultText(result: unknown): string {
  if (!Array.isArray(result)) return typeof result === 'string' ? result : JSON.stringify(result);
  return result
    .map((r) => {
      const response = (r as { functionResponse?: { response?: Record<string, unknown> } })?.functionResponse?.response;
      if (!response) return typeof (r as { text?: unknown })?.text === 'string' ? (r as { text: string }).text : '';
      const out = response.output ?? response.error ?? response;
      return typeof out === 'string' ? out : JSON.stringify(out);
    })
    .join('\n');
}
