import { describe, expect, it } from 'vitest';
import { readAudit } from '../../src/audit/read.js';
import { busFor } from '../../src/bus/open.js';
import { DEFAULT_FLEET_SETTINGS } from '../../src/bus/settings.js';
import { createRecord } from '../../src/fleet/registry.js';
import { recordInput } from '../helpers/records.js';
import { eventually } from '../helpers/tmux.js';
import { hostsOnBus } from '../spawn/bus-hosts.js';

/**
 * The lost notice (docs/design.md §17.8) when the silent host's record on the bus is behind:
 * b ended its agent's task and sent that task's completion (taking the fleet-wide once-marker),
 * but went silent before its record saying so reached the bus — as a vendor agent's turn-end
 * hook writes the record in a process without the bus, and its shim brings it over on its next
 * beat. The parent has the task's completion; it must still be told, once, that the agent is
 * gone — under the next task, whose marker nobody holds.
 */
const hosts = hostsOnBus('  lost_after_secs: 5\n');

describe(
  'the lost notice of an agent whose last completion went out before its record (real nats-server, two hosts by name)',
  { timeout: 300_000 },
  () => {
    it('reaches the parent once, for the task after the one already answered; the record on the bus names that task', async () => {
      const a = hosts.host('a', 'stale', { worker: 'worker.yaml' });
      const b = hosts.host('b', 'stale', { worker: 'worker.yaml' });
      const fromB = busFor(b.layout, {
        fleet: { ...DEFAULT_FLEET_SETTINGS, bus: hosts.url(), name: 'stale', host: 'b' },
      }).records;
      // b's parent (a registered process, no harness) and its child, at work on task 1 as the bus last heard.
      createRecord(b.layout, recordInput('far-parent', { host: 'b', status: 'working', mode: 'interactive' }));
      createRecord(
        b.layout,
        recordInput('far-child', {
          host: 'b',
          status: 'working',
          mode: 'interactive',
          parentId: 'far-parent',
          rootId: 'far-parent',
          depth: 1,
          task: 1,
        }),
      );
      for (const rec of b.records()) expect(await fromB.publish(rec)).toBe('published');
      // Task 1's completion went out (its marker is b's), then b fell silent before publishing `idle`.
      expect(await fromB.takeDone('far-child', 1, 'host')).toBe('won');
      expect(await fromB.beat()).toBe(true);

      // a's live agent beats for a and, past b's lost_after_secs, marks b's agents lost.
      expect((await a.spawnAgent(['--agent', 'worker', '--id', 'a-live', 'work'])).exitCode).toBe(0);
      type Mail = { kind: string; from: string; status: string; id: string };
      const notices = async (): Promise<Mail[]> => {
        const r = await b.flotilla(['inbox', 'far-parent', '--all', '--json']);
        expect(r.exitCode, r.stderr).toBe(0);
        return (JSON.parse(r.stdout) as Mail[]).filter((m) => m.kind === 'completion' && m.from === 'far-child');
      };
      let audit: Record<string, unknown>[] = [];
      await eventually(
        async () => (await notices()).length > 0,
        120_000,
        "the lost notice in the parent's inbox",
      ).catch((err: unknown) => {
        audit = readAudit(a.layout, { event: 'agent_lost' }).lines;
        throw new Error(`${String(err)}\n${JSON.stringify(audit)}`);
      });
      const told = await notices();
      expect(told.map((m) => m.status)).toEqual(['lost']);
      const view = busFor(a.layout, {
        fleet: { ...DEFAULT_FLEET_SETTINGS, bus: hosts.url(), name: 'stale', host: 'a' },
      }).records;
      const rec = await view.get('far-child');
      expect(rec).toMatchObject({ status: 'lost', task: 2, lastTask: { task: 2, status: 'lost' } });
      expect(readAudit(a.layout, { event: 'agent_lost' }).lines.filter((l) => l.agent === 'far-child')).toEqual([
        expect.objectContaining({ to: 'far-parent', told: true, task: 2 }),
      ]);
      // b's own end of task 2 (its harness healed, or its reaper) finds the marker the notice holds: nothing more goes
      // out.
      expect(await fromB.takeDone('far-child', 2, 'host')).toBe('lost');
    });
  },
);
