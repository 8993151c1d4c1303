import { errorMessage } from '../../errors.js';
import type { ChatActions } from './actions.js';
import { CHAT_USAGE, type ChatCommand } from './parse.js';

/** What each chat command does, for `/help`. */
const HELP_ROWS: [string, string][] = [
  [CHAT_USAGE.list, 'agent definitions you can spawn'],
  [CHAT_USAGE.spawn, 'start a child agent in a new tmux window'],
  [CHAT_USAGE.bg, 'start a child agent in the background (no window)'],
  [CHAT_USAGE.at, 'shorthand for /agent spawn, for a known definition'],
  [CHAT_USAGE.status, 'the agent tree: state, turns, tokens'],
  [CHAT_USAGE.cancel, 'cancel an agent'],
  [CHAT_USAGE.resume, 'start a new agent from an old transcript'],
  [CHAT_USAGE.approve, 'approve a pending request'],
  [CHAT_USAGE.deny, 'deny a pending request'],
  [CHAT_USAGE.output, "print a finished agent's final answer"],
  [CHAT_USAGE.collect, 'print all finished answers not yet collected'],
  [CHAT_USAGE.send, 'send a message to an agent, parent, root or human'],
  [CHAT_USAGE.inbox, "this agent's messages"],
  [CHAT_USAGE.tasks, "this agent's task board: open, claimed and lately finished tasks"],
  [CHAT_USAGE.taskAdd, 'add a task to the board (as you, for the team to claim)'],
  [CHAT_USAGE.task, 'show, done, fail, cancel or release a task (as a person)'],
  [CHAT_USAGE.exit, 'end this agent (when idle; Ctrl-D does the same)'],
];

export const CHAT_HELP = [
  'chat commands (they act for you; the model does not see them):',
  ...HELP_ROWS.map(([form, what]) => `  ${form.padEnd(36)} ${what}`),
  'anything else goes to the agent. Ctrl-C aborts the current turn; Ctrl-C twice exits.',
].join('\n');

/** Marks a line printed for a failed action, so the pane can color it. */
export const CHAT_ERROR_PREFIX = '✗ ';

/**
 * Runs one chat command and returns the text to print. Never throws: an action's error
 * (an ambiguous prefix, an unknown agent) becomes one line starting with `✗ `.
 * `exit` is the pane's own business and yields ''.
 */
export async function runChat(cmd: ChatCommand, actions: ChatActions): Promise<string> {
  try {
    return await dispatch(cmd, actions);
  } catch (err) {
    return (
      CHAT_ERROR_PREFIX +
      errorMessage(err)
        .replace(/\s*\n\s*/g, ' ')
        .trim()
    );
  }
}

function dispatch(cmd: ChatCommand, a: ChatActions): Promise<string> {
  switch (cmd.type) {
    case 'list':
      return a.list();
    case 'spawn':
      return a.spawn(cmd.name, cmd.prompt, { background: cmd.background });
    case 'status':
      return a.status();
    case 'cancel':
      return a.cancel(cmd.prefix);
    case 'resume':
      return a.resume(cmd.prefix, cmd.prompt);
    case 'approve':
      return a.approve(cmd.id);
    case 'deny':
      return a.deny(cmd.id, cmd.reason);
    case 'output':
      return a.output(cmd.id);
    case 'collect':
      return a.collect();
    case 'send':
      return a.send(cmd.to, cmd.text);
    case 'inbox':
      return a.inbox();
    case 'tasks':
      return a.tasks();
    case 'task':
      return a.task(cmd.action, cmd.arg, cmd.text);
    case 'help':
      return Promise.resolve(CHAT_HELP);
    case 'exit':
      return Promise.resolve('');
  }
}
