import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { rmSync } from 'node:fs';
import { readProvenAnswer } from '../../src/fleet/answer-proof.js';
import { createRecord } from '../../src/fleet/registry.js';
import { chatActionsFor } from '../../src/harness/chat/fleet-actions.js';
import { recordInput } from '../helpers/records.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom, spawnFleet, type SpawnFleet } from './helpers.js';

let f: SpawnFleet | undefined;
const saved = { socket: process.env.FLOTILLA_TMUX_SOCKET, tmux: process.env.TMUX };
afterEach(async () => {
  for (const [k, v] of [
    ['FLOTILLA_TMUX_SOCKET', saved.socket],
    ['TMUX', saved.tmux],
  ] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await f?.close();
  f = undefined;
});

describe('pane chat commands backed by the fleet', () => {
  it("/agent spawn, /agent status, /send, /inbox and /agent cancel act with the pane's agent as parent", async () => {
    f = spawnFleet({ definitions: { sleeper: 'sleeper.yaml' } });
    const policy = {
      tools: [
        'shell',
        'read',
        'spawn_agent',
        'wait_for_agents',
        'list_agents',
        'cancel_agent',
        'send_message',
        'check_inbox',
      ],
      permissionMode: 'dont_ask' as const,
      secrets: [],
    };
    const me = createRecord(
      f.layout,
      recordInput('pane-aaaaaa', {
        status: 'idle',
        cwd: f.project,
        effectivePolicy: policy,
        permissionMode: 'dont_ask',
      }),
    );
    const { config } = await loadConfig({ layout: f.layout, env: f.env, userFile: null });
    // The spawner's environment is this test's: point it at the private tmux server.
    process.env.FLOTILLA_TMUX_SOCKET = f.tmux.socket;
    delete process.env.TMUX;
    const pane = await chatActionsFor(f.layout, config, me);
    const chat = pane.actions;
    expect(await chat.definitions()).toContain('sleeper');
    const started = await chat.spawn('sleeper', 'sleep a while', { background: false });
    expect(started).toMatch(/^started sleeper-[a-z0-9]{6} \(sleeper\) in window @\d+; its result comes back here$/);
    const id = /started (\S+)/.exec(started)![1]!;
    expect(f.record(id).parentId).toBe('pane-aaaaaa');
    await eventually(() => f!.record(id).status === 'working', 15_000, 'child working');
    const status = await chat.status();
    expect(
      status
        .split('\n')
        .slice(1)
        .map((l) => l.trim().split(/\s+/)[0]),
    ).toEqual(['pane-aaaaaa', id]);
    expect(await chat.send(id.slice(0, 9), 'hello child')).toMatch(new RegExp(`^sent \\S+ to ${id}$`));
    expect(await chat.inbox()).toBe('no messages');
    await expect(chat.cancel('zz')).rejects.toThrow(/no agent matches 'zz'/);
    expect(await chat.cancel(id)).toBe(`cancelled ${id}`);
    expect(f.record(id).status).toBe('cancelled');
    expect(f.record(id).exitReason).toBe('cancelled (SIGTERM)');
    expect(completionsFrom(f, 'pane-aaaaaa', id)).toHaveLength(1);
    expect(await chat.inbox()).toMatch(new RegExp(`^● \\S+  ${id}  completion  ${id} cancelled`));
  });

  it('/agent output, /agent collect, /agent approve and /agent deny answer for the person at the pane', async () => {
    f = spawnFleet();
    const { config } = await loadConfig({ layout: f.layout, env: f.env, userFile: null });
    const me = createRecord(f.layout, recordInput('pane-bbbbbb', { status: 'idle', cwd: f.project }));
    const done = createRecord(f.layout, recordInput('done-cccccc', { status: 'completed', cwd: f.project }));
    const { writeOutput } = await import('../../src/transcript/output.js');
    const { updateRecord } = await import('../../src/fleet/registry.js');
    const out = writeOutput(f.layout, done.id, 'the final answer', 10_000);
    updateRecord(f.layout, done.id, {
      lastTask: {
        task: 1,
        status: 'completed',
        exitReason: null,
        finishedAt: new Date().toISOString(),
        outputPath: out.path,
      },
    });
    const chat = (await chatActionsFor(f.layout, config, me)).actions;
    expect(await chat.output('done')).toBe('done-cccccc:\nthe final answer');
    expect(await chat.collect()).toContain('the final answer');
    expect(await chat.collect()).toBe('nothing new to collect');

    // Two pending requests from a working agent; the pane answers them (the harness itself is the caller here).
    // A live process stands in for the asking harness (the fleet's close stops it).
    const { spawn } = await import('node:child_process');
    const stand = spawn('sleep', ['60'], { stdio: 'ignore' });
    const asker = createRecord(
      f.layout,
      recordInput('asker-dddddd', {
        status: 'working',
        cwd: f.project,
        pid: stand.pid!,
        pidStartTime: (await import('../../src/fleet/proc.js')).processStartTime(stand.pid!),
      }),
    );
    const { deliver } = await import('../../src/inbox/deliver.js');
    for (const request_id of ['0000000000req000001', '0000000000req000002']) {
      await deliver(f.layout, {
        from: asker.id,
        to: 'human',
        kind: 'approval_request',
        request_id,
        tool: 'shell',
        summary: 'asks to run $ ls',
        body: 'asks',
      });
    }
    // The test plays the waiting harness: it takes an answer only once its writer is proven (fleet/answer-proof.ts).
    const take = async (requestId: string) => {
      const file = f!.layout.approvalAnswer(requestId);
      const proven = await eventually(
        () => readProvenAnswer(f!.layout, file) ?? undefined,
        10_000,
        `the answer to ${requestId}`,
      );
      rmSync(file, { force: true });
      if (!proven.ok) throw new Error(`answer refused: ${proven.reason}`);
      return proven;
    };
    const [approved, first] = await Promise.all([chat.approve('0000000000req000001'), take('0000000000req000001')]);
    expect(approved).toBe('approved 0000000000req000001 (asker-dddddd)');
    expect(first.route).toBe('chat');
    const [denied, second] = await Promise.all([
      chat.deny('0000000000req000002', 'not now'),
      take('0000000000req000002'),
    ]);
    expect(denied).toBe('denied 0000000000req000002 (asker-dddddd)');
    expect(second.body).toMatchObject({ decision: 'deny', reason: 'not now' });
  });
});
