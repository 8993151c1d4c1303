import type { ModelMessage, ToolResultPart } from 'ai';
import type { TranscriptEntry, TranscriptHeader } from './entries.js';

export interface FormatOptions {
  /** ANSI colours (a TTY). */
  color: boolean;
  /** Lines of each tool result shown (default 3). */
  outputLines?: number;
}

type Paint = (s: string) => string;
interface Style {
  dim: Paint;
  bold: Paint;
  red: Paint;
  green: Paint;
  yellow: Paint;
  cyan: Paint;
  magenta: Paint;
  lines: number;
}

function style(opts: FormatOptions): Style {
  const sgr = (code: string): Paint => (opts.color ? (s) => `\x1b[${code}m${s}\x1b[0m` : (s) => s);
  return {
    dim: sgr('2'),
    bold: sgr('1'),
    red: sgr('31'),
    green: sgr('32'),
    yellow: sgr('33'),
    cyan: sgr('36'),
    magenta: sgr('35'),
    lines: opts.outputLines ?? 3,
  };
}

/**
 * Pretty-prints a transcript for `flotilla transcript <id>` (§2): who said what, tool calls
 * as compact lines (`$ git status` and the first lines of output), surfaced inbox messages,
 * and input typed by a person marked as such.
 */
export function formatTranscript(
  records: readonly (TranscriptHeader | TranscriptEntry)[],
  opts: FormatOptions,
): string {
  return records.map((r) => formatEntry(r, opts)).join('');
}

/** One record as text ending in a newline; `--follow` prints entries as they arrive with it. */
export function formatEntry(record: TranscriptHeader | TranscriptEntry, opts: FormatOptions): string {
  const s = style(opts);
  if (record.type === 'header') {
    const parts = [
      record.agent_id,
      record.def_name,
      record.model,
      record.parent_id && `child of ${record.parent_id}`,
      record.resumed_from && `resumed from ${record.resumed_from}`,
    ];
    return (
      s.bold(
        `━━ ${parts
          .filter(Boolean)
          .map((p) => clean(String(p)))
          .join(' · ')} · started ${record.created_at}`,
      ) + '\n'
    );
  }
  const time = s.dim(record.ts.slice(11, 19));
  switch (record.type) {
    case 'message':
      return formatMessage(record.message, time, s);
    case 'surfaced':
      if (record.source === 'human')
        return `${time} ${s.yellow(s.bold('human'))} ${s.dim('(typed by a person)')}\n${indent(clean(record.text))}\n`;
      if (record.via === 'tool')
        return `${time} ${s.magenta(`inbox: ${record.ids.length} message${record.ids.length === 1 ? '' : 's'} read through a tool`)} ${s.dim(record.ids.join(', '))}\n`;
      return `${time} ${s.magenta(`inbox: ${record.ids.length} message${record.ids.length === 1 ? '' : 's'}`)} ${s.dim(record.ids.join(', '))}\n${excerpt(record.text, s.lines + 2, s)}`;
    case 'approval': {
      const verdict = record.decision === 'approved' ? s.green('approved') : s.red('denied');
      const why = record.reason ? ` — ${clean(record.reason)}` : '';
      return `${time} ${s.cyan('approval')} ${clean(record.subject)}: ${verdict} by ${clean(record.by)}${why}\n`;
    }
    case 'end': {
      const status = record.status === 'completed' ? s.green(record.status) : s.red(record.status);
      return s.bold(`━━ end: `) + status + (record.exit_reason ? ` (${clean(record.exit_reason)})` : '') + ` ${time}\n`;
    }
  }
}

function formatMessage(m: ModelMessage, time: string, s: Style): string {
  if (m.role === 'system') return `${time} ${s.dim('system')}\n${excerpt(m.content, s.lines, s)}`;
  if (m.role === 'user') {
    const text =
      typeof m.content === 'string'
        ? m.content
        : m.content.map((p) => (p.type === 'text' ? p.text : `[${p.type}]`)).join('\n');
    return `${time} ${s.bold('user')}\n${indent(clean(text))}\n`;
  }
  if (m.role === 'tool') {
    return m.content.map((p) => (p.type === 'tool-result' ? formatResult(p, s) : '')).join('');
  }
  if (typeof m.content === 'string') return `${time} ${s.cyan('assistant')}\n${indent(clean(m.content))}\n`;
  let out = '';
  let headed = false;
  for (const p of m.content) {
    if (p.type === 'text' && p.text.trim()) {
      out += (headed ? '' : `${time} ${s.cyan('assistant')}\n`) + indent(clean(p.text)) + '\n';
      headed = true;
    } else if (p.type === 'reasoning' && p.text.trim()) {
      out += s.dim(`  (thinking) ${oneLine(p.text, 100)}`) + '\n';
    } else if (p.type === 'tool-call') {
      out += `  ${s.bold(toolLine(p.toolName, p.input))}\n`;
    } else if (p.type === 'tool-result') {
      out += formatResult(p, s);
    }
  }
  return out;
}

/** `$ git status` for shell, `read src/x.ts` for file tools, else the name and compact input. */
function toolLine(name: string, input: unknown): string {
  const args = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  const str = (k: string): string | undefined => (typeof args[k] === 'string' ? (args[k] as string) : undefined);
  const command = str('command');
  if ((name === 'shell' || name === 'Bash') && command !== undefined) return `$ ${oneLine(command, 200)}`;
  const target = str('path') ?? str('pattern') ?? str('to') ?? str('prompt');
  if (target !== undefined) return `→ ${name} ${oneLine(target, 120)}`;
  return `→ ${name} ${oneLine(JSON.stringify(input) ?? '', 120)}`;
}

function formatResult(p: ToolResultPart, s: Style): string {
  const o = p.output;
  switch (o.type) {
    case 'text':
      return excerpt(o.value, s.lines, s);
    case 'error-text':
      return excerpt(o.value, s.lines, s, s.red);
    case 'json':
      return excerpt(JSON.stringify(o.value, null, 1), s.lines, s);
    case 'error-json':
      return excerpt(JSON.stringify(o.value, null, 1), s.lines, s, s.red);
    case 'execution-denied':
      return `    ${s.red(`denied${o.reason ? `: ${clean(o.reason)}` : ''}`)}\n`;
    default:
      return `    ${s.dim(`[${o.type} result]`)}\n`;
  }
}

/** The first `n` lines of a text, indented under its tool call, with a count of the rest. */
function excerpt(text: string, n: number, s: Style, paint: Paint = (x) => x): string {
  const lines = clean(text).replace(/\n+$/, '').split('\n');
  if (lines.length === 1 && lines[0] === '') return `    ${s.dim('(no output)')}\n`;
  const shown = lines
    .slice(0, n)
    .map((l) => `    ${paint(l.length > 200 ? l.slice(0, 199) + '…' : l)}\n`)
    .join('');
  const rest = lines.length - n;
  return shown + (rest > 0 ? `    ${s.dim(`… ${rest} more line${rest === 1 ? '' : 's'}`)}\n` : '');
}

function indent(text: string): string {
  return text
    .replace(/\n+$/, '')
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}

function oneLine(text: string, max: number): string {
  const flat = clean(text)
    .replace(/\s*\n\s*/g, ' ⏎ ')
    .trim();
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat;
}

/**
 * Drops control characters (keeping newline and tab) so recorded tool output cannot move
 * the reader's cursor or recolour their terminal.
 */
function clean(text: string): string {
  let out = '';
  for (const ch of text.replace(/\r\n/g, '\n')) {
    const c = ch.charCodeAt(0);
    const control = (c < 32 && c !== 9 && c !== 10) || (c >= 127 && c < 160);
    if (!control) out += ch;
  }
  return out;
}
