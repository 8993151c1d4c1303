import { describe, expect, it } from 'vitest';
import { parseChat, type ChatParse } from '../../src/harness/chat/parse.js';

const KNOWN = ['worker', 'reviewer'];

describe('parseChat', () => {
  const table: [string, ChatParse][] = [
    ['/agent list', { type: 'list' }],
    ['/agents list', { type: 'list' }],
    [
      '/agent spawn worker find the TODOs',
      { type: 'spawn', name: 'worker', prompt: 'find the TODOs', background: false },
    ],
    [
      '/agent bg worker find  the TODOs ',
      { type: 'spawn', name: 'worker', prompt: 'find  the TODOs', background: true },
    ],
    ['@worker find the TODOs', { type: 'spawn', name: 'worker', prompt: 'find the TODOs', background: false }],
    [
      '  @reviewer check src/x.ts\nplease',
      { type: 'spawn', name: 'reviewer', prompt: 'check src/x.ts\nplease', background: false },
    ],
    ['/agent status', { type: 'status' }],
    ['/agent cancel wor', { type: 'cancel', prefix: 'wor' }],
    [
      '/agent resume worker-ab continue from step 3',
      { type: 'resume', prefix: 'worker-ab', prompt: 'continue from step 3' },
    ],
    ['/agent approve 0lz3k2abcd', { type: 'approve', id: '0lz3k2abcd' }],
    ['/agent deny 0lz3k2abcd', { type: 'deny', id: '0lz3k2abcd' }],
    ['/agent deny 0lz3k2abcd too risky', { type: 'deny', id: '0lz3k2abcd', reason: 'too risky' }],
    ['/agent output worker-ab12cd', { type: 'output', id: 'worker-ab12cd' }],
    ['/agent collect', { type: 'collect' }],
    ['/send parent done with part 1', { type: 'send', to: 'parent', text: 'done with part 1' }],
    ['/inbox', { type: 'inbox' }],
    ['/help', { type: 'help' }],
    ['/exit', { type: 'exit' }],
    // Not chat: the text goes to the model unchanged.
    ['explain src/main.ts', { type: 'not_chat' }],
    ['@src/main.ts explain', { type: 'not_chat' }],
    // An unknown definition is an error listing the known ones, never a message to the model.
    [
      '@unknown do it',
      {
        type: 'error',
        message: "no agent definition named 'unknown' — you can spawn: reviewer, worker (/agent list shows them)",
      },
    ],
    [
      '/agent spawn unknown do it',
      {
        type: 'error',
        message: "no agent definition named 'unknown' — you can spawn: reviewer, worker (/agent list shows them)",
      },
    ],
    [
      '/agent bg unknown do it',
      {
        type: 'error',
        message: "no agent definition named 'unknown' — you can spawn: reviewer, worker (/agent list shows them)",
      },
    ],
    // A path or a file name is not a definition's name: the model gets it.
    ['@src/main.ts explain', { type: 'not_chat' }],
    ['@notes.md summarize', { type: 'not_chat' }],
    ['@ hello', { type: 'not_chat' }],
    ['/src/main.ts explain this', { type: 'not_chat' }],
    ['email me @worker later', { type: 'not_chat' }],
    // Malformed: a one-line usage hint, never a model call.
    ['/agent cancel', { type: 'usage', message: 'usage: /agent cancel <id-prefix>' }],
    ['/agent cancel a b', { type: 'usage', message: 'usage: /agent cancel <id-prefix>' }],
    ['/agent spawn worker', { type: 'usage', message: 'usage: /agent spawn <name> <prompt>' }],
    ['/agent bg', { type: 'usage', message: 'usage: /agent bg <name> <prompt>' }],
    ['@worker', { type: 'usage', message: 'usage: @<name> <prompt>' }],
    ['/agent resume worker-ab', { type: 'usage', message: 'usage: /agent resume <id-prefix> <prompt>' }],
    ['/agent approve', { type: 'usage', message: 'usage: /agent approve <id>' }],
    ['/agent deny', { type: 'usage', message: 'usage: /agent deny <id> [reason]' }],
    ['/agent output', { type: 'usage', message: 'usage: /agent output <id>' }],
    ['/agent list all', { type: 'usage', message: 'usage: /agent list' }],
    ['/agent status now', { type: 'usage', message: 'usage: /agent status' }],
    ['/agent collect x', { type: 'usage', message: 'usage: /agent collect' }],
    ['/send parent', { type: 'usage', message: 'usage: /send <to> <text>' }],
    ['/send', { type: 'usage', message: 'usage: /send <to> <text>' }],
    ['/inbox now', { type: 'usage', message: 'usage: /inbox' }],
    ['/exit now', { type: 'usage', message: 'usage: /exit' }],
    ['/help me', { type: 'usage', message: 'usage: /help' }],
    // The task board (§15).
    ['/tasks', { type: 'tasks' }],
    ['/tasks all', { type: 'usage', message: 'usage: /tasks' }],
    ['/task add', { type: 'usage', message: 'usage: /task add <title>' }],
    ['/task done', { type: 'usage', message: 'usage: /task done <id> [text]' }],
    ['/task show t1 now', { type: 'usage', message: 'usage: /task show <id>' }],
    [
      '/task frob t1',
      {
        type: 'usage',
        message:
          'usage: /task add <title>, or /task <show|done|fail|cancel|release> <id> [text] — /tasks shows the board',
      },
    ],
    ['/task fail t2 the tests do not pass', { type: 'task', action: 'fail', arg: 't2', text: 'the tests do not pass' }],
  ];

  it.each(table)('%j', (line, expected) => {
    expect(parseChat(line, KNOWN)).toEqual(expected);
  });

  it('an unknown command or subcommand gets a one-line hint', () => {
    const unknown = parseChat('/frobnicate all', KNOWN);
    expect(unknown).toEqual({ type: 'usage', message: 'unknown command /frobnicate — type /help for the list' });
    const sub = parseChat('/agent kill x', KNOWN);
    expect(sub.type).toBe('usage');
    expect(sub.type === 'usage' && sub.message).toMatch(
      /^unknown subcommand '\/agent kill': use one of list, spawn, bg, .*\/help/,
    );
    const bare = parseChat('/agent', KNOWN);
    expect(bare.type === 'usage' && bare.message).toMatch(
      /^usage: \/agent <list\|spawn\|bg\|status\|cancel\|resume\|approve\|deny\|output\|collect>/,
    );
    for (const r of [unknown, sub, bare]) expect(r.type === 'usage' && r.message.includes('\n')).toBe(false);
  });

  it('@name is a spawn only for a definition the caller knows', () => {
    expect(parseChat('@worker go', [])).toEqual({
      type: 'error',
      message:
        "no agent definition named 'worker' — there are none — add one in .flotilla/agents/<name>.md (/agent list shows them)",
    });
    expect(
      parseChat('@b go', ['c', 'a']).type === 'error' &&
        (parseChat('@b go', ['c', 'a']) as { message: string }).message,
    ).toContain('you can spawn: a, c');
    expect(parseChat('@worker go', ['worker']).type).toBe('spawn');
  });
});
