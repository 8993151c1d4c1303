import { basename } from 'node:path';
import { jsonLines, TurnList } from './session-file.js';
import type { SessionTurn } from './types.js';

/**
 * Claude Code's session file (`CLAUDE_CONFIG_DIR/projects/<folder>/<session id>.jsonl`) as
 * turns: a `user` line is a prompt (string content) or tool results (`tool_result` blocks);
 * an `assistant` line is one content block of a model message (`text`, `tool_use`,
 * `thinking`); text a hook added to a turn (the mail the turn-start hook hands over) is a
 * `hook_additional_context` attachment. Claude's own bookkeeping (`isMeta` lines, snapshots,
 * system lines, other attachments) is not a turn.
 */
export function claudeSessionTurns(text: string): SessionTurn[] {
  const list = new TurnList();
  for (const e of jsonLines(text)) {
    if (e.isSidechain === true || e.isMeta === true) continue;
    const ts = e.timestamp;
    if (e.type === 'attachment') {
      const a = e.attachment as { type?: string; content?: unknown } | undefined;
      if (a?.type === 'hook_additional_context') list.user(ts, contentText(a.content));
      continue;
    }
    const content = (e.message as { content?: unknown } | undefined)?.content;
    if (e.type === 'user') {
      if (typeof content === 'string') { list.user(ts, content); continue; }
      for (const block of blocks(content)) {
        if (block.type === 'text') list.user(ts, String(block.text ?? ''));
        else if (block.type === 'tool_result') list.toolResult(ts, String(block.tool_use_id ?? ''), contentText(block.content), block.is_error === true);
      }
    } else if (e.type === 'assistant') {
      for (const block of blocks(content)) {
        if (block.type === 'text') list.assistantText(ts, String(block.text ?? ''));
        else if (block.type === 'tool_use') list.toolCall(ts, String(block.id ?? ''), String(block.name ?? 'tool'), block.input ?? {});
      }
    }
  }
  return list.turns;
}

/** The file is named by its session id, which `claude --resume` takes. */
export function claudeSessionId(file: string): string | undefined {
  const id = basename(file).replace(/\.jsonl$/, '');
  return /^[0-9a-f-]{36}$/i.test(id) ? id : undefined;
}

function blocks(content: unknown): Record<string, unknown>[] {
  return Array.isArray(content) ? content.filter((b): b is Record<string, unknown> => typeof b === 'object' && b !== null) : [];
}

/** A tool result's or attachment's content: a string, or text blocks. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c) => (typeof c === 'string' ? c : typeof (c as { text?: unknown })?.text === 'string' ? (c as { text: string }).text : '')).join('\n');
  return '';
}
