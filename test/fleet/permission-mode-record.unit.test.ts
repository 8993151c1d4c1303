import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createRecord, readRecord } from '../../src/fleet/registry.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';

let fleet: TempFleet;
afterEach(() => fleet?.cleanup());

/** Rewrites one agent's record on disk, as a hand edit or another version's bug would. */
function edit(id: string, change: (json: Record<string, unknown>) => void): string {
  const file = fleet.layout.registryFile(id);
  const json = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  change(json);
  writeFileSync(file, JSON.stringify(json));
  return file;
}

describe("a record's permission mode is parsed once, where the record is read", () => {
  it('reads a known mode as that mode', () => {
    fleet = tempFleet();
    createRecord(fleet.layout, recordInput('lead-aaaaaa', { permissionMode: 'accept_edits' }));
    expect(readRecord(fleet.layout, 'lead-aaaaaa')?.permissionMode).toBe('accept_edits');
  });

  it('refuses an unknown mode with an error naming the file, never reading it as default', () => {
    fleet = tempFleet();
    createRecord(fleet.layout, recordInput('lead-aaaaaa'));
    const file = edit('lead-aaaaaa', (j) => {
      j.permissionMode = 'yolo';
    });
    expect(() => readRecord(fleet.layout, 'lead-aaaaaa')).toThrow(file);
    expect(() => readRecord(fleet.layout, 'lead-aaaaaa')).toThrow(/permissionMode: expected one of plan, default/);
  });

  it('refuses an unknown mode in the effective policy too', () => {
    fleet = tempFleet();
    createRecord(fleet.layout, recordInput('lead-aaaaaa'));
    const file = edit('lead-aaaaaa', (j) => {
      (j.effectivePolicy as Record<string, unknown>).permissionMode = 'acceptEdits';
    });
    expect(() => readRecord(fleet.layout, 'lead-aaaaaa')).toThrow(file);
    expect(() => readRecord(fleet.layout, 'lead-aaaaaa')).toThrow(/effectivePolicy\.permissionMode/);
  });

  it('will not write a record with an unknown mode', () => {
    fleet = tempFleet();
    expect(() =>
      createRecord(fleet.layout, recordInput('lead-aaaaaa', { permissionMode: 'sometimes' as 'default' })),
    ).toThrow(/permissionMode/);
  });
});
