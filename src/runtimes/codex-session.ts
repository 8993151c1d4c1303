import { jsonLines, toolInput, TurnList } from './session-file.js';
import type { SessionTurn } from './types.js';

/**
 * Codex's rollout file (`CODEX_HOME/sessions/…/rollout-<time>-<thread>.jsonl`) as turns: its
 * `response_item` lines are what the model was sent and answered — `message` (user,
 * assistant, and `developer` for text a hook added; Codex's own instructions, tagged blocks
 * such as `<environment_context>`, are not a turn), `function_call` / `custom_tool_call` and their `…_output`. The
 * `event_msg` lines
 * repeat them for Codex's screen and are left out.
 */
export function codexSessionTurns(text: string): SessionTurn[] {
  const list = new TurnList();
  for (const e of jsonLines(text)) {
    if (e.type !== 'response_item') continue;
    const p = (e.payload ?? {}) as Record<string, unknown>;
    const ts = e.timestamp;
    switch (p.type) {
      case 'message': {
        const words = Array.isArray(p.content)
          ? (p.content as { text?: unknown }[]).map((c) => (typeof c.text === 'string' ? c.text : '')).join('\n')
          : '';
        if (p.role === 'assistant') list.assistantText(ts, words);
        else if (p.role === 'user' && !words.trimStart().startsWith('<environment_context>')) list.user(ts, words);
        // Text a turn-start hook added (the mail handed over) is a developer message; Codex's own instructions are
        // tagged blocks.
        else if (p.role === 'developer' && !words.trimStart().startsWith('<')) list.user(ts, words);
        break;
      }
      case 'function_call':
      case 'custom_tool_call':
        list.toolCall(ts, String(p.call_id ?? ''), String(p.name ?? 'tool'), toolInput(p.arguments ?? p.input));
        break;
      case 'function_call_output':
      case 'custom_tool_call_output':
        list.toolResult(ts, String(p.call_id ?? ''), outputText(p.output));
        break;
    }
  }
  return list.turns;
}

/** The thread id from the rollout's `session_meta` line (`codex resume` takes it). */
export function codexSessionId(text: string): string | undefined {
  for (const e of jsonLines(text.slice(0, text.indexOf('\n') + 1 || undefined))) {
    const p = e.payload as { id?: unknown } | undefined;
    if (e.type === 'session_meta' && typeof p?.id === 'string') return p.id;
  }
  return undefined;
}

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output))
    return output
      .map((o) => (typeof (o as { text?: unknown }).text === 'string' ? (o as { text: string }).text : ''))
      .join('\n');
  const content = (output as { content?: unknown } | null)?.content;
  return typeof content === 'string' ? content : JSON.stringify(output ?? '');
}
