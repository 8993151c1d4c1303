import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { processStartTime } from '../../src/fleet/proc.js';
import { createRecord, updateRecord } from '../../src/fleet/registry.js';
import { deadPossible } from '../../src/lifecycle/dead-possible.js';
import { markFinishing } from '../../src/lifecycle/reserve.js';
import { recordInput } from '../helpers/records.js';
import { fixture, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

/** A pid and start time of a process that ran and is gone now: a harness that died. */
async function deadProcess(): Promise<{ pid: number; pidStartTime: string | null }> {
  const proc = execa('sleep', ['30']);
  const pid = proc.pid!;
  const pidStartTime = processStartTime(pid);
  proc.kill('SIGKILL');
  await proc.catch(() => undefined);
  return { pid, pidStartTime };
}

// A spawn loads the reaper only when something may be dead (§5.7): this is the check it asks.
describe('whether a spawn has dead agents to end (§5.7)', () => {
  it('says no for a new fleet and for one whose agents all run, yes once one has died', async () => {
    f = spawnFleet();
    expect(deadPossible(f.layout)).toBe(false);
    // This test process stands for a running harness.
    createRecord(
      f.layout,
      recordInput('live-aaaaaa', {
        status: 'working',
        pid: process.pid,
        pidStartTime: processStartTime(process.pid),
      }),
    );
    createRecord(f.layout, recordInput('done-aaaaaa', { status: 'completed' }));
    expect(deadPossible(f.layout)).toBe(false);
    createRecord(f.layout, recordInput('dead-aaaaaa', { status: 'working', ...(await deadProcess()) }));
    expect(deadPossible(f.layout)).toBe(true);
    // The fleet's cleanup kills every registered pid: this process must not be one of them.
    updateRecord(f.layout, 'live-aaaaaa', { status: 'completed', pid: null, pidStartTime: null });
  });

  it('says yes for a record still being opened and for an ending left half done', () => {
    f = spawnFleet();
    createRecord(f.layout, recordInput('pend-aaaaaa', { status: 'spawning' }));
    expect(deadPossible(f.layout)).toBe(true);
    // End it, or the fleet's close waits out its deadline for this spawn to settle.
    updateRecord(f.layout, 'pend-aaaaaa', { status: 'crashed', exitReason: 'test over' });
    expect(deadPossible(f.layout)).toBe(false);
    markFinishing(f.layout, 'pend-aaaaaa');
    expect(deadPossible(f.layout)).toBe(true);
  });

  it('a spawn still ends an agent that died before it, and opens its own', async () => {
    f = spawnFleet();
    createRecord(f.layout, recordInput('dead-aaaaaa', { status: 'working', cwd: f.project, ...(await deadProcess()) }));
    const r = await f.spawnAgent(['--oneshot', '--model', `script:${fixture('worker.yaml')}`, 'do it']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(f.record('dead-aaaaaa').status).toBe('crashed');
    expect(f.record('dead-aaaaaa').exitReason).toBe('process died');
    expect(f.records().map((x) => x.id)).toContain(r.stdout);
  });
});
