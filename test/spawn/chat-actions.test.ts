import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createRecord } from '../../src/fleet/registry.js';
import { chatActionsFor } from '../../src/harness/chat-actions.js';
import { recordInput } from '../helpers/records.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom, spawnFleet, type SpawnFleet } from './helpers.js';

let f: SpawnFleet | undefined;
const saved = { socket: process.env.FLOTILLA_TMUX_SOCKET, tmux: process.env.TMUX };
afterEach(async () => {
  for (const [k, v] of [['FLOTILLA_TMUX_SOCKET', saved.socket], ['TMUX', saved.tmux]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await f?.close();
  f = undefined;
});

describe('pane chat commands backed by the fleet', () => {
  it('/agent spawn, /agent status, /send, /inbox and /agent cancel act with the pane\'s agent as parent', async () => {
    f = spawnFleet({ definitions: { sleeper: 'sleeper.yaml' } });
    const policy = { tools: ['shell', 'read', 'spawn_agent', 'wait_for_agents', 'list_agents', 'cancel_agent', 'send_message', 'check_inbox'], permissionMode: 'dont_ask', secrets: [] };
    const me = createRecord(f.layout, recordInput('pane-aaaaaa', { status: 'idle', cwd: f.project, effectivePolicy: policy, permissionMode: 'dont_ask' }));
    const { config } = loadConfig({ layout: f.layout, env: f.env, userFile: null });
    // The spawner's environment is this test's: point it at the private tmux server.
    process.env.FLOTILLA_TMUX_SOCKET = f.tmux.socket;
    delete process.env.TMUX;
    const chat = await chatActionsFor(f.layout, config, me);
    expect(await chat.definitions()).toContain('sleeper');
    const started = await chat.spawn('sleeper', 'sleep a while', { background: false });
    expect(started).toMatch(/^started sleeper-[a-z0-9]{6} \(sleeper\) in window @\d+; its result comes back here$/);
    const id = /started (\S+)/.exec(started)![1]!;
    expect(f.record(id).parentId).toBe('pane-aaaaaa');
    await eventually(() => f!.record(id).status === 'working', 15_000, 'child working');
    const status = await chat.status();
    expect(status.split('\n').slice(1).map((l) => l.trim().split(/\s+/)[0])).toEqual(['pane-aaaaaa', id]);
    expect(await chat.send(id.slice(0, 9), 'hello child')).toMatch(new RegExp(`^sent \\S+ to ${id}$`));
    expect(await chat.inbox()).toBe('no messages');
    await expect(chat.cancel('zz')).rejects.toThrow(/no agent matches 'zz'/);
    expect(await chat.cancel(id)).toBe(`cancelled ${id}`);
    expect(f.record(id).status).toBe('cancelled');
    expect(f.record(id).exitReason).toBe('cancelled (SIGTERM)');
    expect(completionsFrom(f, 'pane-aaaaaa', id)).toHaveLength(1);
    expect(await chat.inbox()).toMatch(new RegExp(`^● \\S+  ${id}  completion  ${id} cancelled`));
  });
});
