import { TOOLS } from '../../tools/registry.js';
import type { PaneInput, PaneStyle, ToolSpec } from '../../tools/spec.js';
import type { ToolCall, ToolResult } from '../../tools/types.js';
import { formatBytes, sanitize, truncate, type Style } from './ansi.js';

type Input = Record<string, unknown>;

const asInput = (v: unknown): Input => (typeof v === 'object' && v !== null ? (v as Input) : {});
const oneLine = (s: string): string => {
  const lines = sanitize(s).split('\n');
  return lines.length > 1 ? `${lines[0]} …` : (lines[0] ?? '');
};

const byName = new Map<string, ToolSpec>(TOOLS.map((t) => [t.name, t]));

/**
 * The compact line shown when a tool starts: each tool's own (its `paneLine` in src/tools/),
 * `$ git status`, `read src/x.ts`, `write src/x.ts (1.2 KB)`, `send_message → lead-3kd9p1`;
 * else its name and arguments. Empty for tools whose line needs the result.
 */
export function formatToolCall(call: ToolCall, style: Style, width: number): string[] {
  const text = toolCallText(call);
  return text === undefined ? [] : [style.cyan(truncate(text, Math.max(20, width - 1)))];
}

function toolCallText(call: ToolCall): string | undefined {
  const spec = byName.get(call.name);
  if (spec?.paneLine) return spec.paneLine(paneInput(asInput(call.input)));
  const args = JSON.stringify(call.input ?? {});
  return args === '{}' ? call.name : `${call.name} ${oneLine(args)}`;
}

function paneInput(raw: Input): PaneInput {
  const str = (key: string): string | undefined => (typeof raw[key] === 'string' ? raw[key] : undefined);
  return {
    raw,
    text: (key, fallback) => oneLine(str(key) ?? fallback),
    optional: (key) => {
      const v = str(key);
      return v ? oneLine(v) : undefined;
    },
    size: (key) => {
      const v = str(key);
      return v === undefined ? undefined : formatBytes(Buffer.byteLength(v));
    },
  };
}

/**
 * Lines shown when a tool finishes: the tool's own (shell's output preview, the new agent's id), else an error in red.
 */
export function formatToolResult(call: ToolCall, result: ToolResult, style: Style, width: number): string[] {
  const max = Math.max(20, width - 1);
  const pane: PaneStyle = {
    dim: style.dim,
    red: style.red,
    cyan: style.cyan,
    fit: (s) => truncate(s, max),
    sanitize,
    oneLine,
  };
  const own = byName.get(call.name)?.paneResult?.(result, pane);
  if (own) return own;
  if (result.isError) {
    const lines = sanitize(result.output)
      .split('\n')
      .filter((l) => l.trim() !== '');
    return [style.red(truncate(`✗ ${call.name}: ${lines[0] ?? 'failed'}`, max))];
  }
  return [];
}
