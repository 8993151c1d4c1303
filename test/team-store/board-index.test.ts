import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { isProcessAlive, processStartTime } from '../../src/fleet/proc.js';
import { createRecord } from '../../src/fleet/registry.js';
import { natsShared } from '../../src/bus/nats/shared.js';
import { DEFAULT_FLEET_SETTINGS } from '../../src/bus/settings.js';
import type { SharedKv } from '../../src/bus/shared.js';
import * as decide from '../../src/tasks/decide.js';
import type { Task } from '../../src/tasks/task.js';
import { addTaskKv, claimNextKv, claimTaskKv, finishTaskKv } from '../../src/team-store/board-kv.js';
import { natsServer, personBus, type NatsServer } from '../helpers/nats.js';
import { recordInput } from '../helpers/records.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * The board on a `nats://` bus indexes its unfinished tasks (docs/decisions.md "The board on the
 * bus indexes its unfinished tasks"): `claim --next`, `task list` and `status` read the
 * unfinished tasks and the finished ones' names, never a finished task's value; a board written
 * before the indexes reads right and is indexed by its first writer; an index entry a killed
 * writer left is checked against its task. The CLI runs as a person would; what it fetched is
 * counted by the server itself (its messages sent), not timed.
 */

let f: SpawnFleet | undefined;
let server: NatsServer | undefined;
let store: { kv: SharedKv; close(): Promise<void> } | undefined;
const savedEnv = { HOME: process.env.HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME };
afterEach(async () => {
  await store?.close();
  await f?.close();
  await server?.kill();
  f = undefined;
  server = undefined;
  store = undefined;
  Object.assign(process.env, savedEnv);
});

/** A fleet on its own nats-server, and this process's handle on its board bucket. */
async function fleetOnBus(): Promise<{ f: SpawnFleet; kv: SharedKv; server: NatsServer }> {
  server = await natsServer({ monitor: true });
  f = spawnFleet();
  personBus(f.env.XDG_CONFIG_HOME!, 'nats', server);
  // The board's code runs in this process too (to fill boards fast), as the fleet's person: their HOME, not the
  // runner's.
  process.env.HOME = f.env.HOME;
  process.env.XDG_CONFIG_HOME = f.env.XDG_CONFIG_HOME;
  store = natsShared(f.layout, { ...DEFAULT_FLEET_SETTINGS, bus: server.url }, 'board');
  return { f, kv: store.kv, server };
}

const noGate = async (): Promise<null> => null;

/**
 * Adds `finished` tasks to `board`, each claimed and done by a person through the board's own writes, then `open` open
 * ones.
 */
async function fill(fleet: SpawnFleet, kv: SharedKv, board: string, finished: number, open: number): Promise<void> {
  for (let i = 0; i < finished; i++) {
    const t = await addTaskKv(fleet.layout, kv, board, { title: `finished ${i}` }, 'human');
    await claimTaskKv(fleet.layout, kv, board, t.id, 'human');
    await finishTaskKv(fleet.layout, kv, board, t.id, 'human', 'done', `result ${i}`, noGate);
  }
  for (let i = 0; i < open; i++) await addTaskKv(fleet.layout, kv, board, { title: `open ${i}` }, 'human');
}

/** What one CLI run made the server send (every task value a read pulls is one message). */
async function sent(s: NatsServer, run: () => Promise<unknown>): Promise<number> {
  const before = await s.messagesSent();
  await run();
  return (await s.messagesSent()) - before;
}

interface Listing {
  counts: Record<string, number>;
  tasks: { id: string; status: string; waiting_on: string[] }[];
  recent: { id: string }[];
}

describe('the board on nats:// reads its unfinished tasks only', { timeout: 600_000 }, () => {
  it('claim --next and task list fetch as much with 300 finished tasks as with none', async () => {
    const { f, kv, server } = await fleetOnBus();
    await fill(f, kv, 'fresh', 0, 2);
    await fill(f, kv, 'long', 300, 2);

    const claimFresh = await sent(server, async () => {
      const r = await f.flotilla(['task', 'claim', '--next', '--board', 'fresh']);
      expect(r.stdout.trim()).toBe('t1');
    });
    const claimLong = await sent(server, async () => {
      const r = await f.flotilla(['task', 'claim', '--next', '--board', 'long']);
      expect(r.stdout.trim()).toBe('t301');
    });
    // Before the index, the long board's claim fetched its 302 values (one message each).
    expect(claimLong).toBeLessThanOrEqual(claimFresh + 2);

    let listed: Listing | undefined;
    const listFresh = await sent(server, () => f.flotilla(['task', 'list', '--board', 'fresh', '--json']));
    const listLong = await sent(server, async () => {
      listed = JSON.parse((await f.flotilla(['task', 'list', '--board', 'long', '--json'])).stdout) as Listing;
    });
    // Its ten most recent finished tasks are read by key: ten messages, not three hundred.
    expect(listLong).toBeLessThanOrEqual(listFresh + 10 + 2);
    expect(listed!.counts).toEqual({ open: 1, claimed: 1, done: 300, failed: 0, cancelled: 0 });
    expect(listed!.tasks.map((t) => [t.id, t.status])).toEqual([
      ['t301', 'claimed'],
      ['t302', 'open'],
    ]);
    expect(listed!.recent.map((t) => t.id)).toEqual(Array.from({ length: 10 }, (_, i) => `t${291 + i}`));

    // The full history is still there for whoever asks for it.
    const all = JSON.parse(
      (await f.flotilla(['task', 'list', '--board', 'long', '--all', '--json'])).stdout,
    ) as Listing;
    expect(all.tasks).toHaveLength(302);
    const shown = JSON.parse((await f.flotilla(['task', 'show', 't7', '--board', 'long', '--json'])).stdout) as Task;
    expect(shown).toMatchObject({ status: 'done', result: 'result 6' });
  });

  it('a board written before the index reads right, and its first claim indexes it', async () => {
    const { f, kv } = await fleetOnBus();
    // The previous version's layout, written as it wrote it: one key per task and the counter, nothing else.
    const old = (id: string, spec: decide.NewTask, then: (t: Task) => Task = (t) => t): Promise<number | null> =>
      kv.create(`old.${id}`, JSON.stringify(then(decide.newTask('old', id, decide.checkNewTask(spec), spec, 'human'))));
    for (let i = 1; i <= 5; i++)
      await old(`t${i}`, { title: `done ${i}` }, (t) =>
        decide.ended(
          decide.claimed(t, 'human', () => undefined),
          'done',
          'ok',
        ),
      );
    await old('t6', { title: 'dropped' }, (t) => decide.ended(t, 'cancelled', 'not needed'));
    await old('t7', { title: 'held by a person' }, (t) => decide.claimed(t, 'human', () => undefined));
    await old('t8', { title: 'after t1', blockedBy: ['t1'] });
    await old('t9', { title: 'after t8', blockedBy: ['t8'] });
    await old('t10', { title: 'the urgent one', priority: 'urgent' });
    await kv.create('old.=seq', '10');

    const before = JSON.parse((await f.flotilla(['task', 'list', '--board', 'old', '--json'])).stdout) as Listing;
    expect(before.counts).toEqual({ open: 3, claimed: 1, done: 5, failed: 0, cancelled: 1 });
    expect(before.tasks.map((t) => [t.id, t.waiting_on])).toEqual([
      ['t10', []],
      ['t7', []],
      ['t8', []],
      ['t9', ['t8']],
    ]);
    expect(await kv.get('=indexed')).toBeNull();

    expect((await f.flotilla(['task', 'claim', '--next', '--board', 'old'])).stdout.trim()).toBe('t10');
    expect(await kv.get('=indexed')).not.toBeNull();
    expect((await kv.keys('old.=open.*')).length).toBe(4);
    expect((await kv.keys('old.=end.*')).length).toBe(6);
    expect((await f.flotilla(['task', 'claim', '--next', '--board', 'old'])).stdout.trim()).toBe('t8');
    expect((await f.flotilla(['task', 'done', 't8', 'ok', '--board', 'old'])).exitCode).toBe(0);
    expect((await f.flotilla(['task', 'add', 'one more', '--board', 'old'])).stdout.trim()).toBe('t11');

    const after = JSON.parse((await f.flotilla(['task', 'list', '--board', 'old', '--json'])).stdout) as Listing;
    expect(after.counts).toEqual({ open: 2, claimed: 2, done: 6, failed: 0, cancelled: 1 });
    expect(after.tasks.map((t) => [t.id, t.status, t.waiting_on])).toEqual([
      ['t10', 'claimed', []],
      ['t7', 'claimed', []],
      ['t9', 'open', []],
      ['t11', 'open', []],
    ]);
    expect(after.recent.map((t) => t.id).at(-1)).toBe('t8');
  });

  it('entries a killed writer left are checked against their tasks: a finished task reads finished, and the next claim repairs it', async () => {
    const { f, kv } = await fleetOnBus();
    await fill(f, kv, 'b', 0, 3);
    // A writer killed after its finishing write, before its index work: the task says done, its open entry is still
    // there.
    const t1 = (await kv.get('b.t1'))!;
    const task = JSON.parse(t1.value) as Task;
    await kv.update(
      'b.t1',
      JSON.stringify(
        decide.ended(
          decide.claimed(task, 'human', () => undefined),
          'done',
          'ok',
        ),
      ),
      t1.revision,
    );
    // An add killed between its entry and its task, long ago: an entry with no task behind it.
    await kv.create(`b.=open.2-${String(Date.now() - 600_000).padStart(15, '0')}-t99`, '');

    const listed = JSON.parse((await f.flotilla(['task', 'list', '--board', 'b', '--json'])).stdout) as Listing;
    expect(listed.counts).toEqual({ open: 2, claimed: 0, done: 1, failed: 0, cancelled: 0 });
    expect(listed.recent.map((t) => t.id)).toEqual(['t1']);

    expect((await f.flotilla(['task', 'claim', '--next', '--board', 'b'])).stdout.trim()).toBe('t2');
    // Repaired on the way: t1 has its end entry and no open one, the orphan entry is gone.
    expect((await kv.keys('b.=open.*')).map((k) => k.split('-').at(-1)).sort()).toEqual(['t2', 't3']);
    expect((await kv.keys('b.=end.*')).map((k) => k.split('-').at(-1))).toEqual(['t1']);
  });

  it('a claimant SIGKILLed holding the first task: claim --next reads its task open and takes it, the index unchanged', async () => {
    const { f, kv } = await fleetOnBus();
    await fill(f, kv, 'b', 2, 2);
    // The claimant: a real process registered as a live agent of this host, as a harness is.
    const holder = execa('sleep', ['600'], { reject: false });
    createRecord(
      f.layout,
      recordInput('cl-1', { status: 'working', pid: holder.pid!, pidStartTime: processStartTime(holder.pid!) }),
    );
    expect((await claimNextKv(f.layout, kv, 'b', 'cl-1'))?.id).toBe('t3');
    holder.kill('SIGKILL');
    await holder;
    await eventually(() => !isProcessAlive(holder.pid!), 10_000, 'the claimant to be gone');

    const listed = JSON.parse((await f.flotilla(['task', 'list', '--board', 'b', '--json'])).stdout) as Listing;
    expect(listed.counts).toEqual({ open: 2, claimed: 0, done: 2, failed: 0, cancelled: 0 });
    expect((await f.flotilla(['task', 'claim', '--next', '--board', 'b'])).stdout.trim()).toBe('t3');
    const shown = JSON.parse((await f.flotilla(['task', 'show', 't3', '--board', 'b', '--json'])).stdout) as Task;
    expect(shown.claimed_by).toBe('human');
    expect(shown.notes.map((n) => n.text)).toEqual([expect.stringMatching(/^reopened: its claimant cl-1 /)]);
    expect((await kv.keys('b.=open.*')).map((k) => k.split('-').at(-1)).sort()).toEqual(['t3', 't4']);
  });
});
