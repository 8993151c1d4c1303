import type { ToolCall, ToolResult } from '../../tools/types.js';
import { formatBytes, sanitize, truncate, type Style } from './ansi.js';

/** Output lines of a shell command shown in the pane before "… (N more lines)". */
export const SHELL_PREVIEW_LINES = 5;

type Input = Record<string, unknown>;

const asInput = (v: unknown): Input => (typeof v === 'object' && v !== null ? (v as Input) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const oneLine = (s: string): string => {
  const lines = sanitize(s).split('\n');
  return lines.length > 1 ? `${lines[0]} …` : (lines[0] ?? '');
};

/**
 * The compact line shown when a tool starts: `$ git status`, `read src/x.ts`,
 * `write src/x.ts (1.2 KB)`, `send_message → lead-3kd9p1`. Empty for tools whose line needs
 * the result (spawn_agent shows the new id).
 */
export function formatToolCall(call: ToolCall, style: Style, width: number): string[] {
  const text = toolCallText(call);
  return text === undefined ? [] : [style.cyan(truncate(text, Math.max(20, width - 1)))];
}

function toolCallText(call: ToolCall): string | undefined {
  const i = asInput(call.input);
  switch (call.name) {
    case 'shell':
      return `$ ${oneLine(str(i.command) ?? '')}`;
    case 'read': {
      const from = typeof i.offset === 'number' ? ` (from line ${i.offset})` : '';
      return `read ${oneLine(str(i.path) ?? '?')}${from}`;
    }
    case 'write': {
      const content = str(i.content);
      return `write ${oneLine(str(i.path) ?? '?')}${content === undefined ? '' : ` (${formatBytes(Buffer.byteLength(content))})`}`;
    }
    case 'edit':
      return `edit ${oneLine(str(i.path) ?? '?')}`;
    case 'glob':
      return `glob ${oneLine(str(i.pattern) ?? '?')}`;
    case 'grep': {
      const path = str(i.path);
      return `grep ${oneLine(str(i.pattern) ?? '?')}${path ? ` in ${oneLine(path)}` : ''}`;
    }
    case 'send_message': {
      const summary = str(i.summary);
      return `send_message → ${oneLine(str(i.to) ?? '?')}${summary ? `: ${oneLine(summary)}` : ''}`;
    }
    case 'spawn_agent':
      return undefined;
    case 'cancel_agent':
      return `cancel_agent ${oneLine(str(i.id) ?? '?')}`;
    case 'merge_work':
      return `merge_work ${oneLine(str(i.id) ?? '?')}`;
    case 'wait_for_agents':
      return `wait_for_agents ${Array.isArray(i.ids) ? i.ids.map(String).join(' ') : ''}`.trimEnd();
    case 'task_create':
      return `task_create ${oneLine(str(i.title) ?? '?')}`;
    case 'task_claim':
      return `task_claim ${oneLine(str(i.id) ?? 'next')}`;
    case 'task_update':
      return `task_update ${oneLine(str(i.id) ?? '?')} ${oneLine(str(i.action) ?? '?')}`;
    default: {
      const args = JSON.stringify(call.input ?? {});
      return args === '{}' ? call.name : `${call.name} ${oneLine(args)}`;
    }
  }
}

// The shell tool's footer (src/tools/shell.ts): `[exit code N]`, `[timed out …]`, `[cancelled …]`, `[killed …]`.
const SHELL_FOOTER = /^\[(exit code|timed out|cancelled|killed by signal|processes it started)/;

/** Lines shown when a tool finishes: shell output preview, the new agent's id, or the error in red. */
export function formatToolResult(call: ToolCall, result: ToolResult, style: Style, width: number): string[] {
  const max = Math.max(20, width - 1);
  if (call.name === 'shell') return shellResultLines(result, style, max);
  if (result.isError) {
    const lines = sanitize(result.output)
      .split('\n')
      .filter((l) => l.trim() !== '');
    return [style.red(truncate(`✗ ${call.name}: ${lines[0] ?? 'failed'}`, max))];
  }
  if (call.name === 'spawn_agent') return [style.cyan(truncate(`spawn_agent → ${spawnedId(result)}`, max))];
  return [];
}

function shellResultLines(result: ToolResult, style: Style, max: number): string[] {
  const all = sanitize(result.output).replace(/\n+$/, '').split('\n');
  const footer: string[] = [];
  while (all.length > 0 && SHELL_FOOTER.test(all.at(-1) ?? '')) footer.unshift(all.pop()!);
  const body = all.length === 1 && all[0] === '(no output)' ? [] : all;
  const lines = body.slice(0, SHELL_PREVIEW_LINES).map((l) => style.dim(truncate(`  ${l}`, max)));
  if (body.length > SHELL_PREVIEW_LINES) lines.push(style.dim(`  … (${body.length - SHELL_PREVIEW_LINES} more lines)`));
  for (const f of footer) {
    // A clean exit needs no line; anything else is worth a person's attention.
    if (f === '[exit code 0]') continue;
    lines.push(style.red(truncate(`  ${f}`, max)));
  }
  if (result.isError && footer.length === 0) lines.push(style.red('  ✗ shell failed'));
  return lines;
}

const AGENT_ID = /\b[a-zA-Z0-9][a-zA-Z0-9_-]*-[a-z0-9]{6}\b/;

/** The new agent's id: from the result's meta when the tool gives it, else the first id-shaped word. */
function spawnedId(result: ToolResult): string {
  const meta = result.meta ?? {};
  // spawn_agent's own key is `child`: the answer text (with wait) may name other agents first.
  for (const key of ['child', 'id', 'agentId', 'childId']) {
    const v = meta[key];
    if (typeof v === 'string' && v !== '') return v;
  }
  return AGENT_ID.exec(result.output)?.[0] ?? oneLine(result.output);
}
