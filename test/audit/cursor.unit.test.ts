import { appendFileSync, rmSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { audit, closeAudit } from '../../src/audit/audit.js';
import { moveCursor, owedLines } from '../../src/audit/cursor.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

/**
 * Which of this host's audit lines a bus still lacks (docs/decisions-hosts.md "The audit log on the
 * bus"): whole lines after the cursor, each under an id fixed by its place in the file.
 */
let fleet: TempFleet;
afterEach(() => {
  closeAudit();
  fleet?.cleanup();
});

const events = (o: ReturnType<typeof owedLines>) => o?.lines.map((l) => (JSON.parse(l.text) as { task: string }).task);

describe('the audit cursor', () => {
  it('gives the lines after the cursor once the bus took the ones before, with ids that do not change', () => {
    fleet = tempFleet();
    for (const task of ['t1', 't2', 't3']) audit(fleet.layout, { event: 'task_created', task });
    const first = owedLines(fleet.layout)!;
    expect(events(first)).toEqual(['t1', 't2', 't3']);
    moveCursor(fleet.layout, first.file, first.lines[1]!.end);
    audit(fleet.layout, { event: 'task_created', task: 't4' });
    const next = owedLines(fleet.layout)!;
    expect(events(next)).toEqual(['t3', 't4']);
    // The same line, read again, has the same id: a second send is dropped by the stream.
    expect(next.lines[0]!.id).toBe(first.lines[2]!.id);
    moveCursor(fleet.layout, next.file, next.to);
    expect(owedLines(fleet.layout)!.lines).toEqual([]);
  });

  it('never moves back: a slower shipper that read an older cursor leaves the newer one', () => {
    fleet = tempFleet();
    for (const task of ['t1', 't2']) audit(fleet.layout, { event: 'task_created', task });
    const o = owedLines(fleet.layout)!;
    moveCursor(fleet.layout, o.file, o.to);
    moveCursor(fleet.layout, o.file, o.lines[0]!.end);
    expect(owedLines(fleet.layout)!.lines).toEqual([]);
  });

  it('passes over a foreign line and a torn one, and keeps a last line without its LF for later', () => {
    fleet = tempFleet();
    audit(fleet.layout, { event: 'task_created', task: 'before' });
    appendFileSync(
      fleet.layout.auditFile,
      'not an audit line\n[1,2]\n{"ts":"2026-11-26T10:00:00.000Z","event":"task_cre',
    );
    audit(fleet.layout, { event: 'task_created', task: 'swallowed' });
    audit(fleet.layout, { event: 'task_created', task: 'after' });
    appendFileSync(
      fleet.layout.auditFile,
      '{"ts":"2026-11-26T10:00:01.000Z","event":"task_created","task":"unfinished"',
    );
    const o = owedLines(fleet.layout)!;
    expect(events(o)).toEqual(['before', 'after']);
    moveCursor(fleet.layout, o.file, o.to);
    appendFileSync(fleet.layout.auditFile, '}\n');
    expect(events(owedLines(fleet.layout))).toEqual(['unfinished']);
  });

  it('starts over, under new ids, when the file was removed and begun again', () => {
    fleet = tempFleet();
    writeFileSync(fleet.layout.auditFile, '{"ts":"2026-11-26T10:00:00.000Z","event":"task_created","task":"old"}\n');
    const old = owedLines(fleet.layout)!;
    moveCursor(fleet.layout, old.file, old.to);
    rmSync(fleet.layout.auditFile);
    writeFileSync(fleet.layout.auditFile, '{"ts":"2026-11-26T11:00:00.000Z","event":"task_created","task":"new"}\n');
    const fresh = owedLines(fleet.layout)!;
    expect(events(fresh)).toEqual(['new']);
    expect(fresh.lines[0]!.id).not.toBe(old.lines[0]!.id);
  });

  it('has nothing to give without a file', () => {
    fleet = tempFleet();
    expect(owedLines(fleet.layout)).toBeNull();
  });
});
