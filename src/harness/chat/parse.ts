/**
 * The chat-command parser (§6): a typed line → a command for `runChat`, `not_chat` (give the
 * line to the model unchanged) or `usage` (print a one-line hint; never a model call).
 * Pure: the known definition names are passed in.
 */

import { byCodeUnit } from '../../compare.js';

export type ChatCommand =
  | { type: 'list' }
  | { type: 'spawn'; name: string; prompt: string; background: boolean }
  | { type: 'status' }
  | { type: 'cancel'; prefix: string }
  | { type: 'resume'; prefix: string; prompt: string }
  | { type: 'approve'; id: string }
  | { type: 'deny'; id: string; reason?: string }
  | { type: 'output'; id: string }
  | { type: 'collect' }
  | { type: 'send'; to: string; text: string }
  | { type: 'inbox' }
  | { type: 'tasks' }
  | { type: 'task'; action: TaskChatAction; arg: string; text: string }
  | { type: 'help' }
  | { type: 'exit' };

/** What `/task` does: add a task, or act on one by id (§15). */
export type TaskChatAction = 'add' | 'show' | 'done' | 'fail' | 'cancel' | 'release';
const TASK_ACTIONS: readonly TaskChatAction[] = ['add', 'show', 'done', 'fail', 'cancel', 'release'];

/**
 * `error`: a command that cannot run as typed (an unknown definition), printed as one `✗` line; never given to the
 * model.
 */
export type ChatParse =
  ChatCommand | { type: 'not_chat' } | { type: 'usage'; message: string } | { type: 'error'; message: string };

/** The usage line of each form, shown when it is typed wrong and by `/help`. */
export const CHAT_USAGE = {
  list: '/agent list',
  spawn: '/agent spawn <name> <prompt>',
  bg: '/agent bg <name> <prompt>',
  at: '@<name> <prompt>',
  status: '/agent status',
  cancel: '/agent cancel <id-prefix>',
  resume: '/agent resume <id-prefix> <prompt>',
  approve: '/agent approve <id>',
  deny: '/agent deny <id> [reason]',
  output: '/agent output <id>',
  collect: '/agent collect',
  send: '/send <to> <text>',
  inbox: '/inbox',
  tasks: '/tasks',
  taskAdd: '/task add <title>',
  task: '/task <action> <id> [text]',
  help: '/help',
  exit: '/exit',
} as const;

const usage = (form: keyof typeof CHAT_USAGE): ChatParse => ({ type: 'usage', message: `usage: ${CHAT_USAGE[form]}` });

const AGENT_SUBCOMMANDS = 'list, spawn, bg, status, cancel, resume, approve, deny, output, collect';

export function parseChat(line: string, knownDefinitions: readonly string[]): ChatParse {
  const text = line.trim();
  if (text.startsWith('@')) return parseAt(text, knownDefinitions);
  if (!text.startsWith('/')) return { type: 'not_chat' };

  const [command, rest] = splitWord(text);
  // A path such as `/src/main.ts explain this` is meant for the model, not a command.
  if (command.indexOf('/', 1) !== -1) return { type: 'not_chat' };
  switch (command) {
    case '/help':
      return rest === '' ? { type: 'help' } : usage('help');
    case '/exit':
      return rest === '' ? { type: 'exit' } : usage('exit');
    case '/inbox':
      return rest === '' ? { type: 'inbox' } : usage('inbox');
    case '/send': {
      const [to, body] = splitWord(rest);
      return to !== '' && body !== '' ? { type: 'send', to, text: body } : usage('send');
    }
    case '/tasks':
      return rest === '' ? { type: 'tasks' } : usage('tasks');
    case '/task':
      return parseTask(rest);
    case '/agent':
    case '/agents':
      return parseAgent(rest, knownDefinitions);
    default:
      return { type: 'usage', message: `unknown command ${command} — type /help for the list` };
  }
}

function parseAgent(args: string, known: readonly string[]): ChatParse {
  const [sub, rest] = splitWord(args);
  const [first, remainder] = splitWord(rest);
  switch (sub) {
    case 'list':
    case 'status':
    case 'collect':
      return rest === '' ? { type: sub } : usage(sub);
    case 'spawn':
    case 'bg':
      if (first === '' || remainder === '') return usage(sub);
      if (!known.includes(first)) return unknownDefinition(first, known);
      return { type: 'spawn', name: first, prompt: remainder, background: sub === 'bg' };
    case 'cancel':
      return first !== '' && remainder === '' ? { type: 'cancel', prefix: first } : usage('cancel');
    case 'resume':
      return first !== '' && remainder !== '' ? { type: 'resume', prefix: first, prompt: remainder } : usage('resume');
    case 'approve':
      return first !== '' && remainder === '' ? { type: 'approve', id: first } : usage('approve');
    case 'deny':
      if (first === '') return usage('deny');
      return remainder === '' ? { type: 'deny', id: first } : { type: 'deny', id: first, reason: remainder };
    case 'output':
      return first !== '' && remainder === '' ? { type: 'output', id: first } : usage('output');
    case '':
      return {
        type: 'usage',
        message: `usage: /agent <${AGENT_SUBCOMMANDS.replaceAll(', ', '|')}> — type /help for details`,
      };
    default:
      return {
        type: 'usage',
        message: `unknown subcommand '/agent ${sub}': use one of ${AGENT_SUBCOMMANDS} — type /help for details`,
      };
  }
}

function parseTask(args: string): ChatParse {
  const [sub, rest] = splitWord(args);
  if (sub === 'add') return rest === '' ? usage('taskAdd') : { type: 'task', action: 'add', arg: rest, text: '' };
  if (!(TASK_ACTIONS as readonly string[]).includes(sub)) {
    return {
      type: 'usage',
      message: `usage: ${CHAT_USAGE.taskAdd}, or /task <${TASK_ACTIONS.slice(1).join('|')}> <id> [text] — /tasks shows the board`,
    };
  }
  const [id, text] = splitWord(rest);
  if (id === '' || (sub === 'show' && text !== ''))
    return { type: 'usage', message: `usage: /task ${sub} <id>${sub === 'show' ? '' : ' [text]'}` };
  return { type: 'task', action: sub as TaskChatAction, arg: id, text };
}

/** A word that can only mean a definition: the id pattern (§1), so `@src/main.ts` or `@notes.md` is not one. */
const DEFINITION_WORD = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/**
 * `@<name> <prompt>` spawns a known definition. An unknown name is an error listing the
 * known ones — a typo must not reach the model as a plain message; `@src/main.ts explain`
 * (a path, a file) still goes to the model.
 */
function parseAt(text: string, known: readonly string[]): ChatParse {
  const [word, prompt] = splitWord(text);
  const name = word.slice(1);
  if (name === '') return { type: 'not_chat' };
  if (!known.includes(name)) return DEFINITION_WORD.test(name) ? unknownDefinition(name, known) : { type: 'not_chat' };
  if (prompt === '') return usage('at');
  return { type: 'spawn', name, prompt, background: false };
}

/** `no agent definition named 'x' — you can spawn: a, b, c`. */
function unknownDefinition(name: string, known: readonly string[]): ChatParse {
  const names = [...known].sort(byCodeUnit);
  const which = names.length
    ? `you can spawn: ${names.join(', ')}`
    : 'there are none — add one in .flotilla/agents/<name>.md';
  return { type: 'error', message: `no agent definition named '${name}' — ${which} (/agent list shows them)` };
}

/** The first whitespace-separated word and the rest of the line (inner spacing kept), both trimmed. */
function splitWord(s: string): [string, string] {
  const t = s.trimStart();
  const m = /^(\S*)\s*([\s\S]*)$/.exec(t);
  return [m?.[1] ?? '', (m?.[2] ?? '').trimEnd()];
}
