import { mkdirSync, renameSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeIo, type FleetIo } from '../../src/fleet/fleet-io.js';
import { recentRecords } from '../../src/fleet/live.js';
import { countRecords } from '../../src/fleet/record-count.js';
import { createRecord, endRecord } from '../../src/fleet/registry.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';

let fleet: TempFleet;
afterEach(() => fleet?.cleanup());

/** Records every directory listed through it. */
function listingIo(): FleetIo & { listed: string[] } {
  const listed: string[] = [];
  return {
    listed,
    readFile: nodeIo.readFile,
    readdir: (p) => {
      listed.push(p);
      return nodeIo.readdir(p);
    },
    exists: nodeIo.exists,
  };
}

function ended(id: string): void {
  createRecord(fleet.layout, recordInput(id, { status: 'working' }));
  endRecord(fleet.layout, id, { status: 'completed' });
}

/** As if the registry's last change was a minute ago (a fleet at rest). */
function settle(): void {
  const past = new Date(Date.now() - 60_000);
  utimesSync(fleet.layout.registryDir, past, past);
}

describe('the registry count behind status\'s "… N finished" line', () => {
  it('counts a settled registry without listing it again, and sees every later change', () => {
    fleet = tempFleet();
    for (let i = 0; i < 30; i++) ended(`old-${i}`);
    settle();
    const io = listingIo();
    expect(countRecords(fleet.layout, io)).toBe(30);
    expect(io.listed).toEqual([fleet.layout.registryDir]);
    expect(countRecords(fleet.layout, io)).toBe(30);
    expect(io.listed).toHaveLength(1);

    // A new agent, a removed record, a record set aside: each changes the answer at once.
    ended('new-1');
    expect(countRecords(fleet.layout, io)).toBe(31);
    settle();
    expect(countRecords(fleet.layout, io)).toBe(31);
    unlinkSync(fleet.layout.registryFile('old-0'));
    expect(countRecords(fleet.layout, io)).toBe(30);
    settle();
    expect(countRecords(fleet.layout, io)).toBe(30);
    mkdirSync(`${fleet.layout.registryDir}/corrupt`, { recursive: true });
    renameSync(fleet.layout.registryFile('old-1'), `${fleet.layout.registryDir}/corrupt/old-1.json`);
    expect(countRecords(fleet.layout, io)).toBe(29);
  });

  it('keeps no count for a registry that changed in the last moments (a change in the same clock tick would not move its mtime)', () => {
    fleet = tempFleet();
    for (let i = 0; i < 5; i++) ended(`old-${i}`);
    const io = listingIo();
    expect(countRecords(fleet.layout, io)).toBe(5);
    expect(countRecords(fleet.layout, io)).toBe(5);
    expect(io.listed).toHaveLength(2);
  });

  it('a damaged or foreign count file is ignored and replaced', () => {
    fleet = tempFleet();
    for (let i = 0; i < 7; i++) ended(`old-${i}`);
    settle();
    const file = `${fleet.layout.indexDir}/record-count`;
    for (const junk of ['', 'garbage', '1 2 3\nminus\n', '\0\0\0']) {
      writeFileSync(file, junk);
      expect(countRecords(fleet.layout)).toBe(7);
    }
    const io = listingIo();
    expect(countRecords(fleet.layout, io)).toBe(7);
    expect(io.listed).toEqual([]);
  });

  it("status's hidden count at rest comes from the kept count, and is still exact", () => {
    fleet = tempFleet();
    for (let i = 0; i < 40; i++) ended(`old-${String(i).padStart(2, '0')}`);
    settle();
    expect(recentRecords(fleet.layout, 10).hidden).toBe(30);
    const io = listingIo();
    expect(recentRecords(fleet.layout, 10, io).hidden).toBe(30);
    expect(io.listed).not.toContain(fleet.layout.registryDir);
  });

  it('an empty fleet, or one with no registry yet, counts 0', () => {
    fleet = tempFleet();
    expect(countRecords(fleet.layout)).toBe(0);
    rmSync(fleet.layout.registryDir, { recursive: true });
    expect(countRecords(fleet.layout)).toBe(0);
  });
});
