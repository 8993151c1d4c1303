import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ancestors } from '../../src/fleet/proc.js';
import { startedByHarness, trackToolGroups } from '../../src/lifecycle/tool-groups.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { eventually } from '../helpers/tmux.js';

/** docs/security-trust.md "Secrets", step 5: what a grant's end may signal is what the harness started. */

let fleet: TempFleet;
const children: ChildProcess[] = [];
const orphans: number[] = [];
beforeEach(() => {
  fleet = tempFleet();
});
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  for (const pid of orphans.splice(0))
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  fleet.cleanup();
});

function start(args: string[], detached = false): ChildProcess {
  const c = spawn(args[0]!, args.slice(1), { stdio: 'ignore', detached });
  children.push(c);
  return c;
}

describe('startedByHarness', () => {
  it("takes the harness's descendants, and not the harness itself", async () => {
    const child = start(['sh', '-c', 'sleep 71 & wait']);
    const grandchild = await eventually(
      () => {
        const pids = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim();
        return pids ? Number(pids.split(' ')[0]) : undefined;
      },
      30_000,
      'the sleep to start',
    );
    expect(startedByHarness(fleet.layout, 'agent-a', child.pid!)).toBe(true);
    expect(startedByHarness(fleet.layout, 'agent-a', grandchild)).toBe(true);
    expect(startedByHarness(fleet.layout, 'agent-a', process.pid)).toBe(false);
  });

  it('leaves a process it did not start; takes one in a tool group it recorded, even one that left its parent, until the group ends', async () => {
    // A stand-in harness: the test process is not it, so the test's own children are not its descendants.
    const harness = start(['sleep', '72']);
    const stranger = start(['sleep', '73']);
    const file = join(fleet.project, 'orphan.pid');
    // A tool command's group: its leader lives on; the subshell's sleep is orphaned (no longer under the leader) but
    // stays in the group.
    const leader = start(['sh', '-c', `(sleep 74 & echo $! > ${file}); exec sleep 75`], true);
    const orphan = await eventually(
      () => (existsSync(file) && Number(readFileSync(file, 'utf8'))) || undefined,
      30_000,
      'the orphan to start',
    );
    orphans.push(orphan);
    await eventually(() => !ancestors(orphan).includes(leader.pid!), 30_000, 'the orphan to be reparented');
    const byHarness = (pid: number) => startedByHarness(fleet.layout, 'agent-b', pid, harness.pid);

    expect(byHarness(stranger.pid!)).toBe(false);
    expect(byHarness(leader.pid!)).toBe(false);
    expect(byHarness(orphan)).toBe(false);

    const groups = trackToolGroups(fleet.layout, 'agent-b');
    groups.started(leader.pid!);
    expect(byHarness(leader.pid!)).toBe(true);
    expect(byHarness(orphan)).toBe(true);
    expect(byHarness(stranger.pid!)).toBe(false);
    // Another agent's record says nothing of this one's groups.
    expect(startedByHarness(fleet.layout, 'agent-c', orphan, harness.pid)).toBe(false);

    groups.ended(leader.pid!);
    expect(byHarness(orphan)).toBe(false);
  });
});
