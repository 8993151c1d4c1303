import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { acquireSlot, countHeld, heldSlots, holdSlot, parseSlotEnv, reserveSlot } from '../../src/fleet/slots.js';
import { isProcessAlive } from '../../src/fleet/proc.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { eventually } from '../helpers/tmux.js';
import { compileSources, type CompiledSources } from './helpers/compile.js';
import { startFixture, type Fixture } from './helpers/fixture.js';

let compiled: CompiledSources;
let fleet: TempFleet;
const started: Fixture[] = [];
const harnessPids: number[] = [];

beforeAll(() => {
  compiled = compileSources(['src/fleet/slots.ts', 'src/layout/layout.ts']);
});
afterAll(() => compiled.cleanup());
afterEach(async () => {
  for (const f of started.splice(0)) f.kill('SIGKILL');
  for (const pid of harnessPids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  fleet?.cleanup();
});

function run(script: string, args: string[]): Fixture {
  const f = startFixture(script, args, { ...process.env, FLOTILLA_TEST_SRC: compiled.srcDir });
  started.push(f);
  return f;
}

async function outcome(f: Fixture): Promise<string> {
  return f.waitLine(/^(acquired \d+|full)$/);
}

describe('concurrency slots', () => {
  it('20 simultaneous processes against a cap of 4: exactly 4 acquire, on distinct slots', async () => {
    fleet = tempFleet();
    const procs = Array.from({ length: 20 }, () => run('slot-acquire.mjs', [fleet.layout.root, '4']));
    const results = await Promise.all(procs.map(outcome));
    const acquired = results.filter((r) => r.startsWith('acquired'));
    expect(acquired).toHaveLength(4);
    expect(new Set(acquired)).toEqual(new Set(['acquired 0', 'acquired 1', 'acquired 2', 'acquired 3']));
    expect(await countHeld(fleet.layout, 4)).toBe(4);
    expect(await acquireSlot(fleet.layout, 4)).toBeNull();
  });

  it('SIGKILL of a holder frees its slot at once', async () => {
    fleet = tempFleet();
    const holders = [
      run('slot-acquire.mjs', [fleet.layout.root, '2']),
      run('slot-acquire.mjs', [fleet.layout.root, '2']),
    ];
    const results = await Promise.all(holders.map(outcome));
    expect(results.sort()).toEqual(['acquired 0', 'acquired 1']);
    expect(await outcome(run('slot-acquire.mjs', [fleet.layout.root, '2']))).toBe('full');

    const victim = holders[0]!;
    const victimSlot = Number((await outcome(victim)).split(' ')[1]);
    victim.kill('SIGKILL');
    await victim.exited;
    // No waiting, no cleanup: the kernel unbound the name when the process died.
    expect(await outcome(run('slot-acquire.mjs', [fleet.layout.root, '2']))).toBe(`acquired ${victimSlot}`);
  });

  it('a holder that exits normally frees its slot; a slot released in-process is free again', async () => {
    fleet = tempFleet();
    const holder = run('slot-acquire.mjs', [fleet.layout.root, '1']);
    expect(await outcome(holder)).toBe('acquired 0');
    expect(await heldSlots(fleet.layout, 3)).toEqual([0]);
    holder.child.stdin!.end();
    expect(await holder.exited).toBe(0);
    const mine = await acquireSlot(fleet.layout, 1);
    expect(mine?.index).toBe(0);
    mine!.release();
    expect(await countHeld(fleet.layout, 1)).toBe(0);
  });

  it('a harness that asks before the spawner waits for the handoff is kept waiting, then gets the slot', async () => {
    fleet = tempFleet();
    const r = (await reserveSlot(fleet.layout, 2))!;
    const events: string[] = [];
    const held = holdSlot(fleet.layout, r.index, r.token).then((hold) => {
      events.push('harness holds');
      return hold;
    });
    // The spawner is still writing the child's record (launch.ts): the harness must not be
    // answered, or its own first write could race that one.
    await new Promise((resolve) => setTimeout(resolve, 500));
    events.push('spawner waits');
    expect(await r.waitForHandoff(30_000)).toBe(true);
    const hold = await held;
    expect(events).toEqual(['spawner waits', 'harness holds']);
    expect(await heldSlots(fleet.layout, 2)).toEqual([r.index]);
    hold.release();
  });

  it('a reservation counts as held, and a released reservation frees the slot', async () => {
    fleet = tempFleet();
    const r = await reserveSlot(fleet.layout, 2);
    expect(r?.index).toBe(0);
    expect(parseSlotEnv(r!.envValue)).toEqual({ index: 0, token: r!.token, fleet: null });
    expect(parseSlotEnv(`${r!.envValue}:3`)).toEqual({ index: 0, token: r!.token, fleet: 3 });
    expect(await reserveSlot(fleet.layout, 1)).toBeNull();
    expect(await countHeld(fleet.layout, 2)).toBe(1);
    expect(await r!.waitForHandoff(50)).toBe(false);
    expect(await countHeld(fleet.layout, 2)).toBe(0);
  });

  it('hands a reservation to the harness process with no gap: a hammering third process never gets in', async () => {
    fleet = tempFleet();
    // Slot 0 is taken for good; slot 1 goes through five spawner → harness handoffs.
    const keeper = run('slot-acquire.mjs', [fleet.layout.root, '2']);
    expect(await outcome(keeper)).toBe('acquired 0');
    const hammer = run('slot-hammer.mjs', [fleet.layout.root, '2']);
    for (let i = 0; i < 5; i++) {
      const status = join(fleet.project, `harness-${i}.txt`);
      // The harness waits 300 ms before holding, like a slow Node start: only the
      // spawner's reservation covers the slot then.
      const spawner = run('slot-spawner.mjs', [fleet.layout.root, '2', status, '300']);
      expect(await spawner.waitLine(/^(reserved \d+|full)$/)).toBe('reserved 1');
      hammer.send('resume');
      await hammer.waitLine(new RegExp(`^running$`));
      hammer.lines.splice(0);
      spawner.send('go');
      expect(await spawner.waitLine(/^handed /)).toBe('handed true');
      expect(await spawner.exited).toBe(0);
      const held = await eventually(
        () => {
          try {
            return readFileSync(status, 'utf8');
          } catch {
            return undefined;
          }
        },
        15_000,
        'harness status',
      );
      const [word, slot, pid] = held.trim().split(' ');
      harnessPids.push(Number(pid));
      expect([word, slot]).toEqual(['holding', '1']);
      hammer.send('pause');
      const [, attempts, got] = (await hammer.waitLine(/^paused /)).split(' ');
      expect(Number(attempts)).toBeGreaterThan(0);
      expect(Number(got)).toBe(0);
      expect(hammer.lines.filter((l) => l.startsWith('GOT'))).toEqual([]);
      // Free slot 1 for the next round.
      process.kill(Number(pid), 'SIGKILL');
      await eventually(() => !isProcessAlive(Number(pid)), 15_000, 'harness death');
    }
  });

  it('control: a spawner that lets go before the harness holds leaves a gap the hammer finds', async () => {
    fleet = tempFleet();
    const keeper = run('slot-acquire.mjs', [fleet.layout.root, '2']);
    expect(await outcome(keeper)).toBe('acquired 0');
    const hammer = run('slot-hammer.mjs', [fleet.layout.root, '2']);
    const spawner = run('slot-spawner.mjs', [fleet.layout.root, '2', join(fleet.project, 'unused.txt'), '0']);
    expect(await spawner.waitLine(/^reserved /)).toBe('reserved 1');
    hammer.send('resume');
    await hammer.waitLine(/^running$/);
    spawner.send('release');
    expect(await hammer.waitLine(/^GOT /)).toBe('GOT 1');
  });
});
