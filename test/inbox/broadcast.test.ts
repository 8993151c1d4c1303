import { execa, type ResultPromise } from 'execa';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { processStartTime } from '../../src/fleet/proc.js';
import { createRecord } from '../../src/fleet/registry.js';
import type { AgentRecordInput } from '../../src/fleet/record.js';
import { addTask } from '../../src/tasks/board.js';
import { CLI } from '../helpers/cli.js';
import { natsServer, personBus } from '../helpers/nats.js';
import { recordInput } from '../helpers/records.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * `flotilla send --to children | tree | board:NAME | all` (docs/design.md §4, "Broadcast"):
 * real CLI processes, each sending as the agent among its ancestors (a registered `sh` that
 * stays alive), reading the copies from the real Maildirs.
 */

let f: SpawnFleet | undefined;
const procs: ResultPromise[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) p.kill('SIGKILL');
  await f?.close();
  f = undefined;
});

/** A live agent: a real `sh` waiting for the test, registered with its pid and start time. */
function agent(id: string, over: Partial<AgentRecordInput> = {}): void {
  const p = execa('sh', ['-c', 'while [ ! -e end ]; do sleep 0.2; done'], {
    cwd: f!.project,
    env: f!.env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
  });
  procs.push(p);
  createRecord(
    f!.layout,
    recordInput(id, {
      status: 'working',
      pid: p.pid!,
      pidStartTime: processStartTime(p.pid!),
      cwd: f!.project,
      ...over,
    }),
  );
}

/** A root `lead` with children a, b and grandchild a1; a second tree `other` with child o1; an ended child `gone`. */
function twoTrees(): void {
  agent('lead');
  agent('a', { parentId: 'lead', rootId: 'lead', depth: 1 });
  agent('b', { parentId: 'lead', rootId: 'lead', depth: 1 });
  agent('a1', { parentId: 'a', rootId: 'lead', depth: 2 });
  agent('other');
  agent('o1', { parentId: 'other', rootId: 'other', depth: 1 });
  createRecord(
    f!.layout,
    recordInput('gone', {
      parentId: 'lead',
      rootId: 'lead',
      depth: 1,
      status: 'completed',
      finishedAt: new Date().toISOString(),
    }),
  );
}

/**
 * `flotilla send` run by agent `as` (a child of its registered sh, so lineage finds it) or by a
 * person (`as` undefined).
 */
async function send(
  as: string | undefined,
  args: string[],
): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  if (!as) return f!.flotilla(['send', ...args]);
  const script = `exec "$NODE" "$CLI" send "$@"`;
  // The sender runs under a registered sh: start one for it that runs the command instead of idling.
  const p = execa('sh', ['-c', `while [ ! -e go.${as} ]; do sleep 0.05; done; ${script}`, 'sh', ...args], {
    cwd: f!.project,
    env: { ...f!.env, NODE: process.execPath, CLI, FLOTILLA_AGENT_ID: as },
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
  });
  procs.push(p);
  const { readRecord, overwriteRecord } = await import('../../src/fleet/registry.js');
  // The sender's record now names this sh as its process (the idle one is killed with the test).
  overwriteRecord(f!.layout, { ...readRecord(f!.layout, as)!, pid: p.pid!, pidStartTime: processStartTime(p.pid!) });
  writeFileSync(`${f!.project}/go.${as}`, '');
  const r = await p;
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/**
 * `flotilla <args>` run by agent `as` as `send` runs it; its record names its idle sh again afterwards, so it stays
 * live.
 */
async function asAgent(as: string, args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const { readRecord, overwriteRecord } = await import('../../src/fleet/registry.js');
  const idle = readRecord(f!.layout, as)!;
  const script = `exec "$NODE" "$CLI" "$@"`;
  const p = execa('sh', ['-c', script, 'sh', ...args], {
    cwd: f!.project,
    env: { ...f!.env, NODE: process.execPath, CLI, FLOTILLA_AGENT_ID: as },
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
  });
  procs.push(p);
  overwriteRecord(f!.layout, { ...idle, pid: p.pid!, pidStartTime: processStartTime(p.pid!) });
  const r = await p;
  overwriteRecord(f!.layout, { ...readRecord(f!.layout, as)!, pid: idle.pid, pidStartTime: idle.pidStartTime });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** Broadcast copies in an inbox: their broadcast ids, one per copy. */
const copies = (owner: string, word: string): string[] =>
  f!
    .mail(owner)
    .filter((m) => (m.body ?? '').includes(word))
    .map((m) => m.broadcast_id ?? '(none)');

describe('broadcast (§4)', () => {
  it('--to children and --to tree: one copy to each running agent of the group, one broadcast id, never the sender, never an ended agent', async () => {
    f = spawnFleet();
    twoTrees();
    const kids = await send('lead', ['--to', 'children', 'kids-note-4410']);
    expect(kids.exitCode, kids.stderr).toBe(0);
    const kidsId = kids.stdout.trim();
    expect(kids.stderr).toContain(`broadcast ${kidsId} to children: 2 copies (a, b)`);
    expect(copies('a', 'kids-note-4410')).toEqual([kidsId]);
    expect(copies('b', 'kids-note-4410')).toEqual([kidsId]);
    for (const none of ['lead', 'a1', 'other', 'o1', 'gone']) expect(copies(none, 'kids-note-4410')).toEqual([]);

    // A grandchild reaches its whole tree, its root and its aunt included, and nothing outside it.
    const tree = await send('a1', ['--to', 'tree', '--json', 'tree-note-7730']);
    expect(tree.exitCode, tree.stderr).toBe(0);
    const sent = JSON.parse(tree.stdout) as {
      broadcast_id: string;
      target: string;
      copies: { id: string; to: string; from: string; broadcast_id: string }[];
    };
    expect(sent.target).toBe('tree');
    expect(sent.copies.map((c) => c.to).sort()).toEqual(['a', 'b', 'lead']);
    expect(new Set(sent.copies.map((c) => c.id)).size).toBe(3);
    for (const c of sent.copies) expect(c).toMatchObject({ from: 'a1', broadcast_id: sent.broadcast_id });
    for (const to of ['a', 'b', 'lead']) expect(copies(to, 'tree-note-7730')).toEqual([sent.broadcast_id]);
    for (const none of ['a1', 'other', 'o1', 'gone']) expect(copies(none, 'tree-note-7730')).toEqual([]);
  });

  it('a person may broadcast to all; an agent may not unless inbox.broadcast_all says agents may', async () => {
    f = spawnFleet();
    twoTrees();
    const refused = await send('a', ['--to', 'all', 'all-note-1']);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain('only a person may broadcast to all agents (inbox.broadcast_all: people)');
    for (const id of ['lead', 'b', 'a1', 'other', 'o1']) expect(copies(id, 'all-note-1')).toEqual([]);

    const person = await f.flotilla(['send', '--to', 'all', 'all-note-2']);
    expect(person.exitCode, person.stderr).toBe(0);
    for (const id of ['lead', 'a', 'b', 'a1', 'other', 'o1'])
      expect(copies(id, 'all-note-2')).toEqual([person.stdout.trim()]);
    expect(copies('gone', 'all-note-2')).toEqual([]);

    writeFileSync(
      f.layout.configFile,
      'agents:\n  default_permission_mode: dont_ask\ninbox:\n  broadcast_all: agents\n',
    );
    const allowed = await send('a', ['--to', 'all', 'all-note-3']);
    expect(allowed.exitCode, allowed.stderr).toBe(0);
    for (const id of ['lead', 'b', 'a1', 'other', 'o1'])
      expect(copies(id, 'all-note-3')).toEqual([allowed.stdout.trim()]);
    expect(copies('a', 'all-note-3')).toEqual([]);
  });

  it('board:NAME reaches the agents that created or claimed its tasks; an agent with no part in the board is refused', async () => {
    f = spawnFleet();
    twoTrees();
    await addTask(f.layout, 'api', { title: 'write the parser' }, 'a');
    await addTask(f.layout, 'api', { title: 'test the parser' }, 'o1');
    const { claimTask } = await import('../../src/tasks/board.js');
    await claimTask(f.layout, 'api', 't1', 'b');

    const stranger = await send('a1', ['--to', 'board:api', 'board-note-1']);
    expect(stranger.exitCode).toBe(1);
    expect(stranger.stderr).toContain("a1 has no part in board 'api'");
    expect(['a', 'b', 'o1'].flatMap((id) => copies(id, 'board-note-1'))).toEqual([]);

    const member = await send('a', ['--to', 'board:api', 'board-note-2']);
    expect(member.exitCode, member.stderr).toBe(0);
    for (const id of ['b', 'o1']) expect(copies(id, 'board-note-2')).toEqual([member.stdout.trim()]);
    for (const none of ['a', 'lead', 'a1', 'other']) expect(copies(none, 'board-note-2')).toEqual([]);

    const lines = readFileSync(f.layout.auditFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.event === 'policy_denied' && l.target === 'board:api');
    expect(lines).toHaveLength(1);
  });

  it('board:NAME reaches the agents spawned for the board too, and one of them may broadcast to it; the default board names no one by itself', async () => {
    f = spawnFleet();
    twoTrees();
    // Spawned for the board (--board api, or a definition's board:): on their records, no task yet.
    agent('w1', { parentId: 'lead', rootId: 'lead', depth: 1, board: 'api' });
    agent('w2', { board: 'api' });
    agent('w3', { board: 'web' });
    await addTask(f.layout, 'api', { title: 'write the parser' }, 'o1');

    const fromMember = await send('w1', ['--to', 'board:api', 'board-note-3']);
    expect(fromMember.exitCode, fromMember.stderr).toBe(0);
    for (const id of ['w2', 'o1']) expect(copies(id, 'board-note-3')).toEqual([fromMember.stdout.trim()]);
    for (const none of ['w1', 'w3', 'lead', 'a', 'b', 'a1', 'other']) expect(copies(none, 'board-note-3')).toEqual([]);

    const person = await f.flotilla(['send', '--to', 'board:api', 'board-note-4']);
    expect(person.exitCode, person.stderr).toBe(0);
    for (const id of ['w1', 'w2', 'o1']) expect(copies(id, 'board-note-4')).toEqual([person.stdout.trim()]);

    // An agent of no named board is on the fleet's board for its tools, but board:fleet is not a way to reach everyone.
    const viaFleet = await send('a', ['--to', 'board:fleet', 'board-note-5']);
    expect(viaFleet.exitCode).toBe(1);
    expect(viaFleet.stderr).toContain("a has no part in board 'fleet'");
  });

  it("board:NAME on nats:// reads the fleet's board on the bus, not this host's files", async () => {
    const server = await natsServer();
    try {
      f = spawnFleet();
      personBus(f.env.XDG_CONFIG_HOME!, 'nats', server);
      twoTrees();
      expect((await asAgent('a', ['task', 'add', '--board', 'api', 'write the parser'])).stdout).toBe('t1');
      expect((await asAgent('o1', ['task', 'add', '--board', 'api', 'test the parser'])).stdout).toBe('t2');
      expect((await asAgent('b', ['task', 'claim', '--board', 'api', 't1'])).stdout).toBe('t1');
      expect(existsSync(f.layout.board('api').dir)).toBe(false);

      const stranger = await asAgent('a1', ['send', '--to', 'board:api', 'board-note-6']);
      expect(stranger.exitCode).toBe(1);
      expect(stranger.stderr).toContain("a1 has no part in board 'api'");
      const member = await asAgent('a', ['send', '--to', 'board:api', 'board-note-7']);
      expect(member.exitCode, member.stderr).toBe(0);
      expect(member.stderr).toContain('board:api: 2 copies (b, o1)');
    } finally {
      await server.kill();
    }
  });

  it('an empty group is an error, not a silent success; a bad board name is a usage error', async () => {
    f = spawnFleet();
    twoTrees();
    const none = await send('a1', ['--to', 'children', 'x']);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toContain("no one to broadcast to: 'children' has no running agent besides the sender");
    const bad = await f.flotilla(['send', '--to', 'board:Bad Name', 'x']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("invalid board name 'Bad Name'");
    const noTo = await f.flotilla(['send']);
    expect(noTo.exitCode).toBe(2);
  });
});
