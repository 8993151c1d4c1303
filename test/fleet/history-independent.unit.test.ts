import { existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { admitSpawn } from '../../src/fleet/caps.js';
import { nodeIo, type FleetIo } from '../../src/fleet/fleet-io.js';
import { ensureIndex, liveRecords, recentRecords, subtreeRecords, treeUsage } from '../../src/fleet/live.js';
import { processStartTime } from '../../src/fleet/proc.js';
import { createRecord, endRecord, readRecord, updateRecord } from '../../src/fleet/registry.js';
import { admitSelf } from '../../src/harness/admit.js';
import type { Layout } from '../../src/layout/layout.js';
import { treeBudgetRefusal } from '../../src/spawn/budget.js';
import { fleetOpsFor } from '../../src/spawn/ops.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';

let fleet: TempFleet;
afterEach(() => fleet?.cleanup());

/** Counts every file the registry code reads through it. */
function countingIo(): FleetIo & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    readFile: (p) => {
      reads.push(p);
      return nodeIo.readFile(p);
    },
    readdir: (p) => {
      reads.push(p);
      return nodeIo.readdir(p);
    },
    exists: (p) => nodeIo.exists(p),
  };
}

const me = { pid: process.pid, pidStartTime: processStartTime(process.pid) };

/** An agent that ran and ended with some usage (through the registry, as a harness does). */
function finished(layout: Layout, id: string, rootId: string, tokens: number, parentId: string | null = null): void {
  createRecord(layout, recordInput(id, { rootId, parentId, depth: parentId ? 1 : 0, status: 'spawning' }));
  updateRecord(layout, id, { status: 'starting', ...me });
  updateRecord(layout, id, {
    status: 'working',
    usage: { inputTokens: tokens, outputTokens: 0, costUsd: tokens / 1000 },
  });
  endRecord(layout, id, { status: 'completed' });
}

/** A history (60 finished agents, 3 in the lead's own tree) and a live lead. */
function historyAndLead(layout: Layout): void {
  for (let i = 0; i < 60; i++)
    finished(layout, `old-${String(i).padStart(4, '0')}`, `old-${String(i - (i % 5)).padStart(4, '0')}`, 10);
  createRecord(
    layout,
    recordInput('lead', {
      status: 'working',
      ...me,
      mode: 'headless',
      usage: { inputTokens: 100, outputTokens: 0, costUsd: 0.1 },
    }),
  );
  for (const id of ['kid-a', 'kid-b', 'kid-c']) finished(layout, id, 'lead', 50, 'lead');
}

function finishedReads(layout: Layout, reads: string[]): string[] {
  return reads.filter((p) => /\/(old-\d+|kid-[abc])\.json$/.test(p) && p.startsWith(layout.registryDir));
}

const limits = { max_depth: 3, max_children: 2, max_spawns_per_tree: 32, max_running: 8 };

describe('hot paths independent of the fleet history', () => {
  it('the budget check counts ended agents of the tree without reading their records', () => {
    fleet = tempFleet();
    historyAndLead(fleet.layout);
    const io = countingIo();
    expect(treeUsage(fleet.layout, 'lead', io)).toEqual({ tokens: 250, costUsd: expect.closeTo(0.25, 6) });
    const refused = treeBudgetRefusal(
      fleet.layout,
      'lead',
      { max_tokens_per_tree: 250, max_cost_usd_per_tree: null },
      io,
    );
    expect(refused?.bracket).toBe('[flotilla:budget root=lead tokens=250 max=250]');
    expect(
      treeBudgetRefusal(fleet.layout, 'lead', { max_tokens_per_tree: 251, max_cost_usd_per_tree: null }, io),
    ).toBeNull();
    expect(finishedReads(fleet.layout, io.reads)).toEqual([]);
    // Nor does it list the registry: its size must not matter.
    expect(io.reads).not.toContain(fleet.layout.registryDir);
  });

  it('spawn admission and the harness self-check read no finished record', async () => {
    fleet = tempFleet();
    historyAndLead(fleet.layout);
    const config = (await loadConfig({ layout: fleet.layout, env: {}, userFile: null })).config;
    const io = countingIo();
    const lead = readRecord(fleet.layout, 'lead')!;
    const admission = await admitSpawn(
      fleet.layout,
      limits,
      { id: 'kid-new', parent: lead, rootId: 'lead' },
      liveRecords(fleet.layout, io),
    );
    try {
      createRecord(fleet.layout, recordInput('kid-new', { parentId: 'lead', rootId: 'lead', depth: 1 }));
      // The spawner's side of the handoff runs beside the harness's, as in launch.ts.
      const [hold] = await Promise.all([
        admitSelf(
          fleet.layout,
          { ...config, budget: { max_tokens_per_tree: 1000, max_cost_usd_per_tree: null } },
          readRecord(fleet.layout, 'kid-new')!,
          admission.slot.envValue,
          io,
        ),
        admission.slot.waitForHandoff(30_000),
      ]);
      hold.release();
    } finally {
      admission.slot.release();
    }
    expect(io.reads.length).toBeGreaterThan(0);
    expect(finishedReads(fleet.layout, io.reads)).toEqual([]);
  });

  it('finished children do not count against max_children; live ones do', async () => {
    fleet = tempFleet();
    historyAndLead(fleet.layout);
    const lead = readRecord(fleet.layout, 'lead')!;
    for (const id of ['kid-x', 'kid-y'])
      createRecord(fleet.layout, recordInput(id, { parentId: 'lead', rootId: 'lead', depth: 1 }));
    await expect(admitSpawn(fleet.layout, limits, { id: 'kid-z', parent: lead, rootId: 'lead' })).rejects.toMatchObject(
      { code: 'children-limit' },
    );
  });

  it('rebuilds missing indexes from the records, and drops a live entry a crash left behind', () => {
    fleet = tempFleet();
    historyAndLead(fleet.layout);
    rmSync(fleet.layout.indexDir, { recursive: true, force: true });
    expect(treeUsage(fleet.layout, 'lead')).toEqual({ tokens: 250, costUsd: expect.closeTo(0.25, 6) });
    expect(liveRecords(fleet.layout).map((r) => r.id)).toEqual(['lead']);
    // A harness that died between its terminal write and removing its live entry.
    writeFileSync(fleet.layout.liveIndex('kid-a'), '');
    const io = countingIo();
    expect(liveRecords(fleet.layout, io).map((r) => r.id)).toEqual(['lead']);
    expect(treeUsage(fleet.layout, 'lead')).toEqual({ tokens: 250, costUsd: expect.closeTo(0.25, 6) });
    const again = countingIo();
    liveRecords(fleet.layout, again);
    expect(finishedReads(fleet.layout, again.reads)).toEqual([]);
  });

  it('keeps a fresh live entry whose record is not written yet (a spawn in progress), drops an old one', () => {
    fleet = tempFleet();
    historyAndLead(fleet.layout);
    liveRecords(fleet.layout);
    // A spawner marks the agent live, then writes its record: a reader in between must not drop it.
    writeFileSync(fleet.layout.liveIndex('kid-new'), '');
    expect(liveRecords(fleet.layout).map((r) => r.id)).toEqual(['lead']);
    createRecord(fleet.layout, recordInput('kid-new', { parentId: 'lead', rootId: 'lead', depth: 1 }));
    expect(liveRecords(fleet.layout).map((r) => r.id)).toEqual(['lead', 'kid-new']);
    // An entry left long ago by a record since removed goes.
    writeFileSync(fleet.layout.liveIndex('kid-gone'), '');
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(fleet.layout.liveIndex('kid-gone'), old, old);
    liveRecords(fleet.layout);
    expect(existsSync(fleet.layout.liveIndex('kid-gone'))).toBe(false);
    expect(existsSync(fleet.layout.liveIndex('kid-new'))).toBe(true);
  });

  it('a usage line written before a crash is not counted twice once the agent is reaped', () => {
    fleet = tempFleet();
    createRecord(
      fleet.layout,
      recordInput('solo', { status: 'working', ...me, usage: { inputTokens: 70, outputTokens: 0, costUsd: null } }),
    );
    // The line of an ending that crashed before its terminal write: the record is still live.
    mkdirSync(dirname(fleet.layout.treeUsage('solo')), { recursive: true });
    writeFileSync(fleet.layout.treeUsage('solo'), 'solo 70 -\n', { flag: 'a' });
    expect(treeUsage(fleet.layout, 'solo').tokens).toBe(70);
    endRecord(fleet.layout, 'solo', { status: 'crashed' });
    expect(treeUsage(fleet.layout, 'solo').tokens).toBe(70);
  });

  it("list_agents and cancel_agent read the agent's own subtree, never the rest of the history", async () => {
    fleet = tempFleet();
    historyAndLead(fleet.layout);
    finished(fleet.layout, 'grandkid', 'lead', 5, 'kid-a');
    // These records were written without a spawn: the children index comes from a rebuild.
    rmSync(fleet.layout.indexDir, { recursive: true, force: true });
    ensureIndex(fleet.layout);
    const io = countingIo();
    expect(subtreeRecords(fleet.layout, 'lead', io).map((r) => r.id)).toEqual(['kid-a', 'kid-b', 'kid-c', 'grandkid']);
    expect(io.reads.filter((p) => /\/old-\d+\.json$/.test(p))).toEqual([]);
    expect(io.reads).not.toContain(fleet.layout.registryDir);

    const config = (await loadConfig({ layout: fleet.layout, env: {}, userFile: null })).config;
    const ops = fleetOpsFor(fleet.layout, config, readRecord(fleet.layout, 'lead')!);
    expect((await ops.list()).map((r) => [r.id, r.status])).toEqual([
      ['kid-a', 'completed'],
      ['kid-b', 'completed'],
      ['kid-c', 'completed'],
      ['grandkid', 'completed'],
    ]);
    await expect(ops.cancel('old-0007')).rejects.toMatchObject({ code: 'not-yours' });
  });

  it('status lists the live agents and the last ones to finish, and counts the rest', () => {
    fleet = tempFleet();
    historyAndLead(fleet.layout);
    const { records, hidden } = recentRecords(fleet.layout, 10);
    expect(records).toHaveLength(11);
    expect(records.map((r) => r.id)).toEqual(expect.arrayContaining(['lead', 'kid-a', 'kid-b', 'kid-c', 'old-0059']));
    expect(hidden).toBe(63 + 1 - 11);
  });
});
