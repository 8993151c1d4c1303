import { describe, expect, it } from 'vitest';
import { FlotillaError } from '../../src/errors.js';
import { resolvePrefix } from '../../src/fleet/ids.js';
import { notYetAvailable, unavailableChatActions, type ChatActions } from '../../src/harness/chat/actions.js';
import { parseChat, type ChatCommand } from '../../src/harness/chat/parse.js';
import { CHAT_HELP, runChat } from '../../src/harness/chat/run.js';

/** Actions that record what they were asked and echo it back. */
function recording(): { actions: ChatActions; seen: unknown[][] } {
  const seen: unknown[][] = [];
  const rec =
    (name: string) =>
    (...args: unknown[]) => {
      seen.push([name, ...args]);
      return Promise.resolve(`${name} ok`);
    };
  const actions: ChatActions = {
    definitions: () => Promise.resolve(['worker']),
    list: rec('list'),
    spawn: rec('spawn'),
    status: rec('status'),
    cancel: rec('cancel'),
    resume: rec('resume'),
    approve: rec('approve'),
    deny: rec('deny'),
    output: rec('output'),
    collect: rec('collect'),
    send: rec('send'),
    inbox: rec('inbox'),
    tasks: rec('tasks'),
    task: rec('task'),
  };
  return { actions, seen };
}

const cmd = (line: string): ChatCommand => {
  const c = parseChat(line, ['worker']);
  if (c.type === 'not_chat' || c.type === 'usage' || c.type === 'error') throw new Error(`not a command: ${line}`);
  return c;
};

describe('runChat', () => {
  it.each([
    ['/agent list', ['list']],
    ['/agent spawn worker go', ['spawn', 'worker', 'go', { background: false }]],
    ['/agent bg worker go', ['spawn', 'worker', 'go', { background: true }]],
    ['@worker go', ['spawn', 'worker', 'go', { background: false }]],
    ['/agent status', ['status']],
    ['/agent cancel wo', ['cancel', 'wo']],
    ['/agent resume wo again', ['resume', 'wo', 'again']],
    ['/agent approve r1', ['approve', 'r1']],
    ['/agent deny r1 no way', ['deny', 'r1', 'no way']],
    ['/agent deny r1', ['deny', 'r1', undefined]],
    ['/agent output w1', ['output', 'w1']],
    ['/agent collect', ['collect']],
    ['/send root hi there', ['send', 'root', 'hi there']],
    ['/inbox', ['inbox']],
    ['/tasks', ['tasks']],
    ['/task add write the  parser', ['task', 'add', 'write the  parser', '']],
    ['/task done t3 parser written', ['task', 'done', 't3', 'parser written']],
    ['/task show t3', ['task', 'show', 't3', '']],
    ['/task release t3', ['task', 'release', 't3', '']],
  ])('%s calls the matching action', async (line, expected) => {
    const { actions, seen } = recording();
    expect(await runChat(cmd(line), actions)).toBe(`${expected[0] as string} ok`);
    expect(seen).toEqual([expected]);
  });

  it('/help prints the command list without calling an action', async () => {
    const { actions, seen } = recording();
    const text = await runChat(cmd('/help'), actions);
    expect(text).toBe(CHAT_HELP);
    for (const form of [
      '/agent spawn <name> <prompt>',
      '@<name> <prompt>',
      '/agent deny <id> [reason]',
      '/send <to> <text>',
      '/inbox',
      '/tasks',
      '/task add <title>',
      '/exit',
    ]) {
      expect(text).toContain(form);
    }
    expect(seen).toEqual([]);
  });

  it('an action that throws becomes one line, never a crash', async () => {
    const { actions } = recording();
    actions.cancel = (prefix) => Promise.resolve(resolvePrefix(prefix, ['worker-zz1111', 'worker-zz2222']));
    expect(await runChat(cmd('/agent cancel worker-zz'), actions)).toBe(
      "✗ 'worker-zz' matches 2 agents: worker-zz1111, worker-zz2222 — give more characters",
    );
    actions.status = () => Promise.reject(new FlotillaError('registry unreadable:\n  bad json'));
    expect(await runChat(cmd('/agent status'), actions)).toBe('✗ registry unreadable: bad json');
    actions.inbox = () => {
      throw new TypeError('boom');
    };
    expect(await runChat(cmd('/inbox'), actions)).toBe('✗ boom');
  });

  it('notYetAvailable names the command; the unavailable base answers with it', async () => {
    expect(notYetAvailable('/agent resume')).toBe('/agent resume is not yet available');
    const base = unavailableChatActions(['worker']);
    expect(await base.definitions()).toEqual(['worker']);
    expect(await runChat(cmd('/agent resume w again'), base)).toBe('/agent resume is not yet available');
    expect(await runChat(cmd('/send root hi'), base)).toBe('/send is not yet available');
  });
});
