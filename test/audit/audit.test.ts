import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { AUDIT_LINE_MAX, auditLine } from '../../src/audit/audit.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { flotilla } from '../helpers/cli.js';

let fleet: TempFleet;
afterEach(() => fleet?.cleanup());

describe('audit trail', () => {
  it('keeps every line under 4 KiB and marks what it truncated', () => {
    const line = auditLine({ event: 'tool_call', agent: 'a', command: 'z'.repeat(9000), tool: 'shell' });
    expect(Buffer.byteLength(line)).toBeLessThan(AUDIT_LINE_MAX);
    const parsed = JSON.parse(line) as { truncated: string[]; tool: string; command: string };
    expect(parsed.truncated).toEqual(['command']);
    expect(parsed.tool).toBe('shell');
    expect(parsed.command.endsWith('…')).toBe(true);
  });

  it('8 processes x 1,000 events appended concurrently: every line parses, none >= 4 KiB, none lost', async () => {
    fleet = tempFleet();
    const script = fileURLToPath(new URL('../fixtures/foundation/audit-writer.mjs', import.meta.url));
    await Promise.all(
      Array.from({ length: 8 }, (_, w) => execa(process.execPath, [script, fleet.layout.root, String(w), '1000'])),
    );
    const text = readFileSync(fleet.layout.auditFile, 'utf8');
    const lines = text.split('\n').filter(Boolean);
    expect(lines).toHaveLength(8000);
    const seen = new Set<string>();
    for (const raw of lines) {
      expect(Buffer.byteLength(raw) + 1).toBeLessThan(AUDIT_LINE_MAX);
      const e = JSON.parse(raw) as { agent: string; seq: number };
      seen.add(`${e.agent}:${e.seq}`);
    }
    expect(seen.size).toBe(8000);
  });

  it('flotilla audit filters by agent and event and prints JSON', async () => {
    fleet = tempFleet();
    const script = fileURLToPath(new URL('../fixtures/foundation/audit-writer.mjs', import.meta.url));
    await execa(process.execPath, [script, fleet.layout.root, '1', '3']);
    await execa(process.execPath, [script, fleet.layout.root, '2', '2']);
    const r = await flotilla(['--root', fleet.layout.root, 'audit', '--agent', 'w2', '--event', 'tool_call', '--json']);
    expect(r.exitCode).toBe(0);
    const events = String(r.stdout)
      .split('\n')
      .map((l) => JSON.parse(l) as { agent: string; seq: number });
    expect(events.map((e) => `${e.agent}:${e.seq}`)).toEqual(['w2:0', 'w2:1']);
  });
});
