import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentRecord } from '../../src/fleet/record.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/** `limits.max_running` counts agents that work, not windows. */

let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

const WORKING = new Set(['working', 'waiting_approval']);

/**
 * Samples the registry every 100 ms: the most agents ever seen working at once, and who was
 * ever queued. Records are read one file at a time, so one pass is no snapshot: an agent read
 * early may have gone idle, and another taken its slot, before a later file is read. Two
 * passes back to back count only agents working in both: each of them worked throughout the
 * moment between the passes, so the count is of agents working at one instant.
 */
function sampler(fleet: SpawnFleet): { stop(): void; maxWorking: number; queued: Set<string> } {
  const s = { maxWorking: 0, queued: new Set<string>(), stop: () => clearInterval(timer) };
  const working = (recs: AgentRecord[]) => new Set(recs.filter((r) => WORKING.has(r.status)).map((r) => r.id));
  const timer = setInterval(() => {
    let first: AgentRecord[];
    let second: AgentRecord[];
    try {
      first = fleet.records();
      second = fleet.records();
    } catch {
      return;
    }
    const before = working(first);
    s.maxWorking = Math.max(s.maxWorking, [...working(second)].filter((id) => before.has(id)).length);
    for (const r of [...first, ...second]) if (r.status === 'queued') s.queued.add(r.id);
  }, 100);
  return s;
}

describe('slots for work, not for windows', () => {
  it('12 interactive agents with max_running 4: all spawn (--queue), each finishes, at most 4 work at once, and mail to an idle one waits for a slot, then runs', async () => {
    f = spawnFleet({
      config: 'limits:\n  max_running: 4\n  max_spawns_per_tree: 32\n',
      definitions: { busy: '../workday/busy.yaml' },
    });
    const seen = sampler(f);
    try {
      const ids = Array.from({ length: 12 }, (_, i) => `w${i}`);
      const spawns = await Promise.all(
        ids.map((id) => f!.spawnAgent(['--queue', '--agent', 'busy', '--id', id, `task for ${id}`])),
      );
      for (const [i, r] of spawns.entries()) {
        expect(r.exitCode, r.stderr).toBe(0);
        expect(r.stdout).toBe(ids[i]);
      }
      // Some had to wait in line, and said so.
      expect(spawns.some((r) => /waiting for a slot 4\/4/.test(r.stderr))).toBe(true);
      await eventually(
        () => ids.every((id) => f!.record(id).lastTask?.status === 'completed' && f!.record(id).status === 'idle'),
        120_000,
        'all 12 tasks to finish',
      );
      for (const id of ids) expect(f.record(id).lastLine).toBe(`Answer: task-done-${id}`);
      expect(await f.windows()).toHaveLength(12);

      // Four idle agents get long work: they take the four slots.
      const sent = await Promise.all(ids.slice(0, 4).map((id) => f!.flotilla(['send', id, 'please do the long job'])));
      expect(sent.map((r) => r.exitCode)).toEqual([0, 0, 0, 0]);
      // Each long job runs until the test releases it, so the four overlap however slow the machine.
      await eventually(
        () => f!.records().filter((r) => WORKING.has(r.status)).length === 4,
        20_000,
        'four agents working',
      );
      // A message to a fifth waits, visibly, in its pane and in status…
      expect((await f.flotilla(['send', 'w4', 'hello from the test'])).exitCode).toBe(0);
      await eventually(() => f!.record('w4').status === 'queued', 15_000, 'w4 to wait for a slot');
      expect(f.record('w4').lastLine).toBe('waiting for a slot 4/4');
      await f.tmux.waitFor(f.record('w4').tmux!.paneId, /waiting for a slot 4\/4/, 10_000);
      const status = await f.flotilla(['status']);
      expect(
        status.stdout,
        `${status.stderr}\nlive: ${readdirSync(f.layout.liveIndexDir).join(' ')}\n${f
          .records()
          .map((r) => `${r.id} ${r.status}`)
          .join('\n')}`,
      ).toMatch(/w4.*queued.*waiting for a slot 4\/4/);
      // …then runs once a slot is free, and the model sees the message.
      writeFileSync(join(f.project, 'long-job.release'), '');
      await eventually(
        () => /^Mail: .*hello from the test/.test(f!.record('w4').lastLine),
        60_000,
        'w4 to handle its mail',
      );
      await eventually(
        () => ids.slice(0, 4).every((id) => f!.record(id).lastLine === 'Long job: long-done'),
        60_000,
        'the long jobs to end',
      );
    } finally {
      seen.stop();
    }
    expect(seen.maxWorking).toBeGreaterThan(0);
    expect(seen.maxWorking).toBeLessThanOrEqual(4);
    expect(seen.queued.has('w4')).toBe(true);
  }, 300_000);
});
