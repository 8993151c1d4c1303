import { basename } from 'node:path';
import { jsonLines, TurnList } from './session-file.js';
import type { SessionTurn } from './types.js';

/**
 * Claude Code's session file (`CLAUDE_CONFIG_DIR/projects/<folder>/<session id>.jsonl`) as
 * turns: a `user` line is a prompt (string content) or tool results (`tool_result` blocks);
 * an `assistant` line is one content block of a model message (`text`, `tool_use`,
 * `thinking`); text a hook added to a turn (the mail the turn-start hook hands over) is a
 * `hook_additional_context` attachment. Claude's own bookkeeping (`isMeta` lines, snapshots,
 * system lines, other attachments) is not a turn. Lines are read in the conversation's order
 * (each names its `parentUuid`), not the file's: Claude Code may write a prompt's line after
 * the model's first lines.
 */
export function claudeSessionTurns(text: string): SessionTurn[] {
  const list = new TurnList();
  for (const e of conversationOrder(jsonLines(text))) {
    if (e.isSidechain === true || e.isMeta === true) continue;
    const ts = e.timestamp;
    if (e.type === 'attachment') {
      const a = e.attachment as { type?: string; content?: unknown } | undefined;
      if (a?.type === 'hook_additional_context') list.user(ts, contentText(a.content));
      continue;
    }
    const content = (e.message as { content?: unknown } | undefined)?.content;
    if (e.type === 'user') {
      if (typeof content === 'string') {
        list.user(ts, content);
        continue;
      }
      for (const block of blocks(content)) {
        if (block.type === 'text') list.user(ts, String(block.text ?? ''));
        else if (block.type === 'tool_result')
          list.toolResult(ts, String(block.tool_use_id ?? ''), contentText(block.content), block.is_error === true);
      }
    } else if (e.type === 'assistant') {
      for (const block of blocks(content)) {
        if (block.type === 'text') list.assistantText(ts, String(block.text ?? ''));
        else if (block.type === 'tool_use')
          list.toolCall(ts, String(block.id ?? ''), String(block.name ?? 'tool'), block.input ?? {});
      }
    }
  }
  return list.turns;
}

/** Every line after the line it names as its parent; otherwise in file order. */
function conversationOrder(lines: Record<string, unknown>[]): Record<string, unknown>[] {
  const byUuid = new Map<string, Record<string, unknown>>();
  for (const e of lines) if (typeof e.uuid === 'string') byUuid.set(e.uuid, e);
  const out: Record<string, unknown>[] = [];
  const placed = new Set<Record<string, unknown>>();
  for (const e of lines) {
    // The line's ancestors not yet placed, nearest first; a cycle (a damaged file) stops the walk.
    const chain = new Set<Record<string, unknown>>();
    for (
      let a: Record<string, unknown> | undefined = e;
      a && !placed.has(a) && !chain.has(a);
      a = typeof a.parentUuid === 'string' ? byUuid.get(a.parentUuid) : undefined
    )
      chain.add(a);
    for (const a of [...chain].reverse()) {
      placed.add(a);
      out.push(a);
    }
  }
  return out;
}

/** The file is named by its session id, which `claude --resume` takes. */
export function claudeSessionId(file: string): string | undefined {
  const id = basename(file).replace(/\.jsonl$/, '');
  return /^[0-9a-f-]{36}$/i.test(id) ? id : undefined;
}

function blocks(content: unknown): Record<string, unknown>[] {
  return Array.isArray(content)
    ? content.filter((b): b is Record<string, unknown> => typeof b === 'object' && b !== null)
    : [];
}

/** A tool result's or attachment's content: a string, or text blocks. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((c) =>
        typeof c === 'string'
          ? c
          : typeof (c as { text?: unknown })?.text === 'string'
            ? (c as { text: string }).text
            : '',
      )
      .join('\n');
  return '';
}
