import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Runtime, SessionTurn } from './types.js';

/**
 * What Claude Code and Gemini CLI session files share: JSON lines, a model message's token
 * usage on its line (Claude repeats it on each content block's line), so each message id is
 * counted once and its last line wins.
 */
export function usageByMessage(
  text: string,
  marker: string,
  read: (entry: Record<string, unknown>) => { id: string | undefined; input: number; output: number } | undefined,
): { inputTokens: number; outputTokens: number; turns: number } {
  const seen = new Map<string, { input: number; output: number }>();
  for (const line of text.split('\n')) {
    if (!line.includes(marker)) continue;
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    const u = read(entry);
    if (u) seen.set(u.id ?? String(seen.size), { input: u.input, output: u.output });
  }
  let inputTokens = 0;
  let outputTokens = 0;
  for (const u of seen.values()) {
    inputTokens += u.input;
    outputTokens += u.output;
  }
  return { inputTokens, outputTokens, turns: seen.size };
}

/** The one line pasted into an idle CLI's pane for new mail (the turn-start hook attaches the mail itself). */
export function wakeNotice(count: number): string {
  return `[flotilla] ${count} new inbox message${count === 1 ? '' : 's'} — they are attached below as data.`;
}

/**
 * Each line of a session file that parses as a JSON object (a half-written last line, or a damaged one, is left out).
 */
export function jsonLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const v = JSON.parse(line) as unknown;
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) out.push(v as Record<string, unknown>);
    } catch {
      /* not a whole line */
    }
  }
  return out;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** A session's messages in the AI SDK's shapes, built one part at a time as a CLI's lines give them. */
export class TurnList {
  readonly turns: SessionTurn[] = [];
  private readonly names = new Map<string, string>();

  user(ts: unknown, text: string): void {
    if (text.trim()) this.turns.push({ ts: str(ts), message: { role: 'user', content: text } });
  }

  assistantText(ts: unknown, text: string): void {
    if (text.trim())
      this.turns.push({ ts: str(ts), message: { role: 'assistant', content: [{ type: 'text', text }] } });
  }

  toolCall(ts: unknown, id: string, name: string, input: unknown): void {
    this.names.set(id, name);
    this.turns.push({
      ts: str(ts),
      message: { role: 'assistant', content: [{ type: 'tool-call', toolCallId: id, toolName: name, input }] },
    });
  }

  toolResult(ts: unknown, id: string, output: string, isError = false, name?: string): void {
    const toolName = name ?? this.names.get(id) ?? 'tool';
    this.turns.push({
      ts: str(ts),
      message: {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: id,
            toolName,
            output: { type: isError ? 'error-text' : 'text', value: output },
          },
        ],
      },
    });
  }
}

/** A tool call's input as the CLI wrote it: JSON text (Codex's `arguments`) is parsed, anything else kept. */
export function toolInput(v: unknown): unknown {
  if (typeof v !== 'string') return v ?? {};
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
}

/**
 * The newest file named like the CLI's session files under its folder in `configDir` (undefined before the CLI wrote
 * one).
 */
export function newestSessionFile(runtime: Pick<Runtime, 'sessionFiles'>, configDir: string): string | undefined {
  let best: { path: string; mtime: number } | undefined;
  const walk = (dir: string, depth: number): void => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (depth < 5) walk(path, depth + 1);
        continue;
      }
      if (!e.isFile() || !runtime.sessionFiles.name.test(e.name)) continue;
      let mtime = 0;
      try {
        mtime = statSync(path).mtimeMs;
      } catch {
        continue;
      }
      if (!best || mtime > best.mtime || (mtime === best.mtime && path > best.path)) best = { path, mtime };
    }
  };
  walk(join(configDir, runtime.sessionFiles.under), 0);
  return best?.path;
}
