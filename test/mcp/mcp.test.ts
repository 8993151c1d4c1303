import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { processStartTime } from '../../src/fleet/proc.js';
import { createRecord, listRecords, readRecord, updateRecord } from '../../src/fleet/registry.js';
import type { AgentRecord } from '../../src/fleet/record.js';
import { recordInput } from '../helpers/records.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';
import { connectMcp, type McpSession } from './helpers.js';

/**
 * `flotilla mcp` (§13) with the SDK's Client over stdio: every tool, who the client is
 * (a person outside any agent; the agent whose process it runs under), and the refusals.
 */

const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

let fleet: SpawnFleet | undefined;
const sessions: McpSession[] = [];

afterEach(async () => {
  for (const s of sessions.splice(0)) await s.close().catch(() => undefined);
  // The fleet's cleanup kills every registered pid: this process must not be one of them.
  if (fleet)
    for (const r of listRecords(fleet.layout))
      if (r.pid === process.pid) updateRecord(fleet.layout, r.id, { pid: null, pidStartTime: null });
  await fleet?.close();
  fleet = undefined;
});

async function open(f: SpawnFleet, extra: Record<string, string> = {}): Promise<McpSession> {
  const s = await connectMcp(f.layout.root, { ...f.env, ...extra }, f.project);
  sessions.push(s);
  return s;
}

/** Registers this test process as a live agent, so an MCP server it starts runs "inside" it. */
function registerSelf(f: SpawnFleet, id: string, over: Partial<AgentRecord> = {}): AgentRecord {
  return createRecord(
    f.layout,
    recordInput(id, {
      name: 'general',
      pid: process.pid,
      pidStartTime: processStartTime(process.pid),
      cwd: f.project,
      mode: 'interactive',
      status: 'working',
      startedAt: new Date().toISOString(),
      permissionMode: 'dont_ask',
      effectivePolicy: {
        tools: [
          'shell',
          'read',
          'send_message',
          'check_inbox',
          'spawn_agent',
          'list_agents',
          'wait_for_agents',
          'cancel_agent',
        ],
        permissionMode: 'dont_ask',
        secrets: [],
      },
      ...over,
    }),
  );
}

function auditLines(f: SpawnFleet): Record<string, unknown>[] {
  return readFileSync(f.layout.auditFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('flotilla mcp as a person (no agent among its ancestors)', { timeout: 300_000 }, () => {
  it('offers the fleet tools; send_message and check_inbox use the human inbox; list_agents sees the fleet', async () => {
    fleet = spawnFleet();
    const f = fleet;
    createRecord(f.layout, recordInput('other-aaaaaa', { status: 'working' }));
    const s = await open(f);
    // The server announces the package's version (src/versions.ts), not a literal of its own.
    expect(s.client.getServerVersion()?.version).toBe(PACKAGE_VERSION);
    const names = (await s.client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual([
      'cancel_agent',
      'check_inbox',
      'lease_paths',
      'list_agents',
      'merge_work',
      'send_message',
      'spawn_agent',
      'task_claim',
      'task_create',
      'task_list',
      'task_update',
      'wait_for_agents',
      'wait_for_tasks',
    ]);
    // A person's lease over MCP is the person's (docs/design.md §16).
    const leased = await s.call('lease_paths', { paths: ['notes.md'], why: 'over mcp' });
    expect(JSON.stringify(leased)).toContain('leased to human until you release it: ');

    const sent = await s.call('send_message', { to: 'human', body: 'note to self', summary: 'self note' });
    expect(sent).toMatchObject({ isError: false });
    expect(f.mail('human')).toEqual([expect.objectContaining({ from: 'human', to: 'human', summary: 'self note' })]);

    const peeked = await s.call('check_inbox', { peek: true });
    expect(peeked.text).toContain('note to self');
    expect(f.mail('human')[0]!.file).toMatch(/^new\//);
    const read = await s.call('check_inbox');
    // The model sees real framing, not the scrubbed look-alike (`&lt;inbox-message`).
    expect(read.text).toMatch(/^<inbox-message [^>]*from="human"[^>]*>\nnote to self\n<\/inbox-message>$/);
    expect(f.mail('human')[0]!.file).toMatch(/^cur\//);
    expect((await s.call('check_inbox')).text).toBe('No unread messages.');

    expect((await s.call('list_agents')).text).toContain('other-aaaaaa');
    const events = auditLines(f).filter((l) => l.via === 'mcp');
    expect(events).toContainEqual(
      expect.objectContaining({ event: 'tool_call', agent: 'human', tool: 'send_message' }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({ event: 'tool_result', agent: 'human', tool: 'check_inbox', is_error: false }),
    );
  });

  it('spawn_agent opens a root agent (depth 0, spawned by human); wait_for_agents returns its answer; cancel_agent ends one', async () => {
    fleet = spawnFleet({ definitions: { worker: 'worker.yaml', sleeper: 'sleeper.yaml' } });
    const f = fleet;
    const s = await open(f);
    const started = await s.call('spawn_agent', { prompt: 'do it', agent: 'worker', id: 'w-mcp' });
    expect(started).toMatchObject({ isError: false });
    expect(f.record('w-mcp')).toMatchObject({ depth: 0, parentId: null, spawnedBy: 'human' });
    const waited = await s.call('wait_for_agents', { ids: ['w-mcp'] });
    expect(waited.text).toContain('## w-mcp: completed');
    expect(waited.text).toContain('Answer: result-of-w-mcp');

    await s.call('spawn_agent', { prompt: 'sleep', agent: 'sleeper', id: 's-mcp' });
    await eventually(() => f.record('s-mcp').status === 'working', 120_000, 'sleeper working');
    const cancelled = await s.call('cancel_agent', { id: 's-mcp' });
    expect(cancelled.text).toContain('Cancelled s-mcp');
    await eventually(() => f.record('s-mcp').status === 'cancelled', 120_000, 'sleeper cancelled');
    await eventually(() => completionsFrom(f, 'human', 's-mcp').length === 1, 120_000, 'one completion');
  });

  it('refuses what the harness refuses: unknown recipients, invalid input (written for the model), unknown tools, unknown agents', async () => {
    fleet = spawnFleet();
    const s = await open(fleet);
    const unknown = await s.call('send_message', { to: 'nobody', body: 'x' });
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toContain("unknown recipient 'nobody'");
    const invalid = await s.call('send_message', { to: 'human' });
    expect(invalid.isError).toBe(true);
    expect(invalid.text).toMatch(/Invalid input for send_message[\s\S]*body/);
    const parent = await s.call('send_message', { to: 'parent', body: 'x' });
    expect(parent.text).toContain('a person sending from a shell has none');
    expect((await s.call('shell', { command: 'id' })).text).toContain('not a Flotilla fleet tool');
    expect((await s.call('cancel_agent', { id: 'zz' })).isError).toBe(true);
    expect(fleet.mail('human')).toEqual([]);
  });
});

describe('flotilla mcp inside an agent (a registered harness among its ancestors)', { timeout: 300_000 }, () => {
  it('is that agent: mail goes out from its id to its parent; a spawn is its child at depth + 1; list_agents is its subtree', async () => {
    fleet = spawnFleet({ definitions: { worker: 'worker.yaml' } });
    const f = fleet;
    createRecord(f.layout, recordInput('boss-aaaaaa', { status: 'working', cwd: f.project }));
    createRecord(f.layout, recordInput('stranger-bbbbbb', { status: 'working' }));
    const me = registerSelf(f, 'me-cccccc', {
      parentId: 'boss-aaaaaa',
      rootId: 'boss-aaaaaa',
      depth: 1,
      spawnedBy: 'agent',
    });
    const s = await open(f, { FLOTILLA_AGENT_ID: me.id });

    const sent = await s.call('send_message', { to: 'parent', body: 'progress: half done' });
    expect(sent.text).toContain('to boss-aaaaaa');
    expect(f.mail('boss-aaaaaa')).toEqual([
      expect.objectContaining({ from: 'me-cccccc', to: 'boss-aaaaaa', kind: 'message' }),
    ]);

    const spawned = await s.call('spawn_agent', { prompt: 'do it', agent: 'worker', id: 'kid-mcp', wait: true });
    expect(spawned.text).toContain('Answer: result-of-kid-mcp');
    expect(f.record('kid-mcp')).toMatchObject({
      parentId: 'me-cccccc',
      rootId: 'boss-aaaaaa',
      depth: 2,
      spawnedBy: 'agent',
    });
    // The child's completion comes to my inbox, read: the wait gave my model its answer (handed on is read).
    await eventually(
      () => completionsFrom(f, 'me-cccccc', 'kid-mcp').filter((m) => m.file!.startsWith('cur/')).length === 1,
      120_000,
      "the child's completion in my inbox, read",
    );
    expect(completionsFrom(f, 'me-cccccc', 'kid-mcp')).toHaveLength(1);
    expect((await s.call('check_inbox')).text).toBe('No unread messages.');

    const listed = (await s.call('list_agents')).text;
    expect(listed).toContain('kid-mcp');
    expect(listed).not.toContain('stranger-bbbbbb');
    const notMine = await s.call('cancel_agent', { id: 'stranger-bbbbbb' });
    expect(notMine).toMatchObject({ isError: true });
    expect(notMine.text).toContain('is not one of your agents');
    expect(auditLines(f)).toContainEqual(
      expect.objectContaining({ event: 'tool_call', agent: 'me-cccccc', tool: 'spawn_agent', via: 'mcp' }),
    );
  });

  it('works the task board as that agent: claims under its id, finishes only its own claim, creates on its board (§15)', async () => {
    fleet = spawnFleet();
    const f = fleet;
    // Before this process is an agent, the CLI acts as a person: t2 is a person's claim.
    await f.flotilla(['task', 'add', 'parse the input', '--board', 'team', '--body', 'every line of input.txt']);
    await f.flotilla(['task', 'add', 'held by a person', '--board', 'team']);
    expect((await f.flotilla(['task', 'claim', 't2', '--board', 'team'])).exitCode).toBe(0);
    const tools = ['task_create', 'task_list', 'task_claim', 'task_update', 'wait_for_tasks'];
    registerSelf(f, 'mate-gggggg', {
      board: 'team',
      effectivePolicy: { tools, permissionMode: 'dont_ask', secrets: [] },
    });
    const s = await open(f);
    expect((await s.client.listTools()).tools.map((t) => t.name).sort()).toEqual([...tools].sort());
    expect((await s.call('task_list')).text).toMatch(/^board team: 1 open, 1 claimed/);
    const claimed = await s.call('task_claim');
    expect(claimed.text).toContain('You claimed task t1.');
    expect(claimed.text).toContain('every line of input.txt');
    const taken = await s.call('task_claim', { id: 't2' });
    expect(taken).toMatchObject({ isError: true });
    expect(taken.text).toMatch(/^Refused: task t2 is already claimed by human/);
    const notMine = await s.call('task_update', { id: 't2', action: 'done', result: 'mine now' });
    expect(notMine).toMatchObject({ isError: true });
    expect(notMine.text).toContain('only its claimant (human) or a person may mark done task t2');
    expect((await s.call('task_update', { id: 't1', action: 'done', result: '12 lines parsed' })).text).toBe(
      'Task t1 is now done.',
    );
    expect((await s.call('task_create', { title: 'check the parse', blocked_by: ['t1'] })).text).toBe(
      'Added task t3 to board team.',
    );
    const { readTask } = await import('../../src/tasks/store.js');
    const board = f.layout.board('team');
    expect(readTask(board, 't1')).toMatchObject({
      status: 'done',
      claimed_by: 'mate-gggggg',
      result: '12 lines parsed',
    });
    expect(readTask(board, 't2')).toMatchObject({ status: 'claimed', claimed_by: 'human', result: null });
    expect(readTask(board, 't3')).toMatchObject({ status: 'open', created_by: 'mate-gggggg' });
    const wait = await s.call('wait_for_tasks', { timeout_secs: 0.5 });
    expect(wait.text).toBe('Still busy after 0.5 s.\nboard team: 1 open, 1 claimed, 1 done, 0 failed, 0 cancelled');
    expect(auditLines(f)).toContainEqual(
      expect.objectContaining({ event: 'task_claimed', agent: 'mate-gggggg', task: 't1' }),
    );
  });

  it('without FLOTILLA_AGENT_ID it is still that agent (ancestry, not the environment, decides)', async () => {
    fleet = spawnFleet();
    registerSelf(fleet, 'me-dddddd');
    const s = await open(fleet);
    await s.call('send_message', { to: 'human', body: 'hello' });
    expect(fleet.mail('human')).toEqual([expect.objectContaining({ from: 'me-dddddd' })]);
  });

  it('refuses a spawn past the depth limit with the bracketed line, and leaves no record', async () => {
    fleet = spawnFleet({ config: 'limits:\n  max_depth: 1\n', definitions: { worker: 'worker.yaml' } });
    const f = fleet;
    createRecord(f.layout, recordInput('top-aaaaaa', { status: 'working' }));
    registerSelf(f, 'deep-eeeeee', { parentId: 'top-aaaaaa', rootId: 'top-aaaaaa', depth: 1, spawnedBy: 'agent' });
    const s = await open(f);
    const r = await s.call('spawn_agent', { prompt: 'x', agent: 'worker', id: 'too-deep' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('[flotilla:depth-limit depth=2 max=1]');
    expect(readRecord(f.layout, 'too-deep')).toBeUndefined();
    expect(auditLines(f)).toContainEqual(
      expect.objectContaining({ event: 'spawn_refused', agent: 'deep-eeeeee', code: 'depth-limit' }),
    );
  });

  it("offers only the fleet tools the agent's policy allows, refuses the rest (audited), and runs nothing in plan mode", async () => {
    fleet = spawnFleet();
    const f = fleet;
    registerSelf(f, 'narrow-ffffff', {
      effectivePolicy: { tools: ['send_message', 'check_inbox'], permissionMode: 'dont_ask', secrets: [] },
    });
    const s = await open(f);
    expect((await s.client.listTools()).tools.map((t) => t.name).sort()).toEqual(['check_inbox', 'send_message']);
    const r = await s.call('spawn_agent', { prompt: 'x' });
    expect(r).toMatchObject({ isError: true });
    expect(r.text).toContain("'spawn_agent' is not among this agent's tools");
    expect(auditLines(f)).toContainEqual(
      expect.objectContaining({ event: 'policy_denied', agent: 'narrow-ffffff', tool: 'spawn_agent', via: 'mcp' }),
    );
    await s.close();

    const rec = readRecord(f.layout, 'narrow-ffffff')!;
    updateRecord(f.layout, rec.id, { permissionMode: 'plan' });
    const planned = await open(f);
    const p = await planned.call('send_message', { to: 'human', body: 'x' });
    expect(p.text).toContain('plan mode');
    expect(f.mail('human')).toEqual([]);
  });

  it('refuses to serve under a forged FLOTILLA_AGENT_ID (an agent that is not an ancestor)', async () => {
    fleet = spawnFleet();
    createRecord(fleet.layout, recordInput('victim-gggggg', { status: 'working' }));
    await expect(open(fleet, { FLOTILLA_AGENT_ID: 'victim-gggggg' })).rejects.toThrow(
      /FLOTILLA_AGENT_ID names 'victim-gggggg', which is not an ancestor/,
    );
  });
});
