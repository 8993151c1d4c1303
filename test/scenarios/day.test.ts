import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAudit } from '../../src/audit/read.js';
import { listRecords } from '../../src/fleet/registry.js';
import { readTask } from '../../src/tasks/store.js';
import { eventually } from '../helpers/tmux.js';
import { Person } from './person.js';
import { openWorld, type World } from './world.js';

/**
 * A person's day on the defaults, one step after another on one fleet: each step
 * asserts what the person sees — panes, `status --json`, the board, files, `git log`, the
 * audit. Nothing is prepared but the world (world.ts); the product makes everything else.
 */

let world: World;
let person: Person;
let session = '';
const DESK = 'desk:0';
const pane = (window: string): string => `=${session}:${window}`;

beforeAll(async () => {
  world = await openWorld();
  person = new Person(world);
});
afterAll(async () => {
  await world?.dispose();
});

const status = (id: string): string | undefined => readTask(world.layout().board('fleet'), id)?.status;

describe('a day on the defaults', { timeout: 600_000 }, () => {
  it('1. clone the shop and open the fleet; the folder asks to be trusted and y trusts it', async () => {
    person.begins('clone and open the fleet');
    await person.type(DESK, `git clone -q ${world.forge} shop && cd shop`);
    await person.type(DESK, 'flotilla up --agent lead --detach');
    const asked = await person.sees(DESK, /Trust this folder and use them\? \[y\/N\]/);
    // What the folder's own definitions would do, named before the person says yes.
    expect(asked).toContain(`this folder (${world.project}) is not trusted yet`);
    expect(asked).toMatch(/permission_mode/);
    await person.type(DESK, 'y');
    const opened = await person.sees(DESK, /attach with: tmux/);
    expect(opened).toContain(`flotilla: trusted ${world.project}`);
    session = /opened session (\S+) with the dashboard and root agent/.exec(opened)?.[1] ?? '';
    expect(session).not.toBe('');
    await person.sees(pane('dashboard'), /lead-\w+/);
    // The lead waits for its first task in the root window.
    const lead = await eventually(() => listRecords(world.layout()).find((r) => r.name === 'lead' && r.status === 'idle'), 60_000, 'the lead idle');
    expect(lead).toMatchObject({ depth: 0, spawnedBy: 'human', runtime: 'flotilla' });
  });

  it('2. the lead puts six tasks on the board and starts four teammates, each in its own worktree, claiming work', async () => {
    person.begins('the lead plans and starts the team');
    await person.sees(pane('root'), /›/, false);
    await person.type(pane('root'), 'Ship 1.1 of the shop with the team.');
    await eventually(() => ['prices', 'changelog', 'catalog', 'deploy'].every((t) => status(t) === 'claimed'), 300_000, 'four tasks claimed');
    const board = await person.flotilla(['task', 'list']);
    expect(board.exitCode, board.stderr).toBe(0);
    for (const [task, who] of [['prices', 'claude-mate'], ['changelog', 'codex-mate'], ['catalog', 'gemini-mate'], ['deploy', 'mate']]) {
      expect(readTask(world.layout().board('fleet'), task!)).toMatchObject({ status: 'claimed', claimed_by: who });
    }
    expect(readTask(world.layout().board('fleet'), 'docs')).toMatchObject({ status: 'open', blocked_by: ['prices'] });
    const st = JSON.parse((await person.flotilla(['status', '--json'], { quiet: true })).stdout) as { id: string; runtime?: string; worktree?: string | null; work?: { branch: string } }[];
    for (const [id, runtime] of [['claude-mate', 'claude'], ['codex-mate', 'codex'], ['gemini-mate', 'gemini'], ['mate', 'flotilla']]) {
      const a = st.find((x) => x.id === id);
      expect(a, id).toMatchObject({ runtime, work: { branch: `flotilla/${id}` } });
      expect(existsSync(join(world.layout().root, 'state', 'worktrees', id!))).toBe(true);
    }
    expect(readAudit(world.layout(), { event: 'task_created' }).lines).toHaveLength(6);
  });
});
