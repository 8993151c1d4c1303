import { execa } from 'execa';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createRecord,
  endRecord,
  listRecords,
  readRecord,
  resolveAgent,
  updateRecord,
} from '../../src/fleet/registry.js';
import { agentRecordSchema } from '../../src/fleet/record-schema.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';

let fleet: TempFleet;
afterEach(() => fleet?.cleanup());

describe('registry', () => {
  it('enforces the status machine: legal moves pass, terminal states never change', () => {
    fleet = tempFleet();
    const l = fleet.layout;
    createRecord(l, recordInput('a-000001'));
    expect(() => updateRecord(l, 'a-000001', { status: 'working' })).toThrow(
      "agent 'a-000001' cannot go from 'spawning' to 'working'",
    );
    updateRecord(l, 'a-000001', { status: 'starting' });
    updateRecord(l, 'a-000001', { status: 'working' });
    updateRecord(l, 'a-000001', { status: 'waiting_approval' });
    updateRecord(l, 'a-000001', { status: 'idle' });
    updateRecord(l, 'a-000001', { status: 'completed', exitReason: 'done' });
    expect(() => updateRecord(l, 'a-000001', { status: 'working' })).toThrow("cannot go from 'completed' to 'working'");
    expect(() => updateRecord(l, 'a-000001', { status: 'crashed' })).toThrow("cannot go from 'completed' to 'crashed'");
    const again = endRecord(l, 'a-000001', { status: 'crashed' });
    expect(again.ended).toBe(false);
    expect(readRecord(l, 'a-000001')!.status).toBe('completed');
  });

  it('refuses a duplicate id', () => {
    fleet = tempFleet();
    createRecord(fleet.layout, recordInput('dup'));
    expect(() => createRecord(fleet.layout, recordInput('dup'))).toThrow(
      "agent id 'dup' is already in use — choose another --id",
    );
  });

  it('resolves unique prefixes, lists candidates when ambiguous, explains none', () => {
    fleet = tempFleet();
    for (const id of ['worker-aaa111', 'worker-aab222', 'lead-zzz999']) createRecord(fleet.layout, recordInput(id));
    expect(resolveAgent(fleet.layout, 'lead').id).toBe('lead-zzz999');
    expect(resolveAgent(fleet.layout, 'worker-aaa').id).toBe('worker-aaa111');
    expect(() => resolveAgent(fleet.layout, 'worker-aa')).toThrow(
      "'worker-aa' matches 2 agents: worker-aaa111, worker-aab222 — give more characters",
    );
    expect(() => resolveAgent(fleet.layout, 'zz')).toThrow(
      "no agent matches 'zz' — run 'flotilla status' to list agents",
    );
    expect(
      listRecords(fleet.layout)
        .map((r) => r.id)
        .sort(),
    ).toEqual(['lead-zzz999', 'worker-aaa111', 'worker-aab222']);
  });

  it('8 processes x 500 writes to the same and different records never leave a torn or invalid file', async () => {
    fleet = tempFleet();
    const l = fleet.layout;
    createRecord(l, recordInput('shared', { lastLine: 'worker start' }));
    for (let w = 0; w < 8; w++) createRecord(l, recordInput(`own-${w}`));
    const script = fileURLToPath(new URL('../fixtures/foundation/registry-writer.mjs', import.meta.url));
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, w) => execa(process.execPath, [script, l.root, String(w), '500'])),
    );
    for (const r of runs) expect(JSON.parse(r.stdout)).toEqual({ bad: 0, turns: 500 });
    for (const f of readdirSync(l.registryDir).filter((f) => f.endsWith('.json'))) {
      expect(agentRecordSchema.safeParse(JSON.parse(readFileSync(`${l.registryDir}/${f}`, 'utf8'))).success).toBe(true);
    }
    expect(readdirSync(l.registryTmp)).toEqual([]);
  });
});
