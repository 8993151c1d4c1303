import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { TOOLS } from '../../src/tools/registry.js';
import type { WorkspaceOptions } from '../../src/tools/spec.js';
import { CANONICAL_TOOLS, canonicalToolName, isKnownTool, TOOL_ALIASES } from '../../src/policy/tool-names.js';
import { runTool } from '../../src/tools/run-tool.js';
import { ctxFor } from './process-helpers.js';

describe('tool names', () => {
  it.each([
    ['Bash', 'shell'],
    ['bash', 'shell'],
    ['Bash(cargo *)', 'shell'],
    [' Read ', 'read'],
    ['MultiEdit', 'edit'],
    ['multiedit', 'edit'],
    ['Edit(src/**)', 'edit'],
    ['Glob', 'glob'],
    ['GREP', 'grep'],
    ['shell', 'shell'],
    ['send_message', 'send_message'],
    ['LS', 'glob'],
    ['Task', 'spawn_agent'],
    ['WebFetch', 'webfetch'],
  ])('%s → %s', (name, canonical) => {
    expect(canonicalToolName(name)).toBe(canonical);
  });

  it('maps every Claude alias onto a built-in name', () => {
    for (const target of Object.values(TOOL_ALIASES)) expect(CANONICAL_TOOLS).toContain(target);
    expect(isKnownTool('Bash(git *)')).toBe(true);
    expect(isKnownTool('WebFetch')).toBe(false);
  });
});

/** The registry's tools made from workspace settings alone: the six built-ins, as the harness makes them. */
const createBuiltinTools = (w: WorkspaceOptions) => TOOLS.flatMap((t) => t.create({ workspace: w }) ?? []);

describe('the workspace tools', () => {
  let fleet: TempFleet;
  beforeEach(() => {
    fleet = tempFleet('flotilla-builtin-');
  });
  afterEach(() => fleet.cleanup());

  it('returns the six workspace tools, wired with scope and env', async () => {
    const memory = fleet.layout.projectMemory('tester');
    const tools = createBuiltinTools({
      cwd: fleet.project,
      protectedRoots: [fleet.layout.root],
      writableWithin: [memory],
      shellTimeoutSecs: 30,
      env: { ...process.env, FROM_HARNESS: 'yes' },
    });
    expect(tools.map((t) => t.name)).toEqual(['shell', 'read', 'write', 'edit', 'glob', 'grep']);
    for (const t of tools) expect(CANONICAL_TOOLS).toContain(t.name);
    expect(Object.fromEntries(tools.map((t) => [t.name, t.klass]))).toEqual({
      shell: 'exec',
      read: 'read',
      write: 'write',
      edit: 'write',
      glob: 'read',
      grep: 'read',
    });

    const byName = (n: string) => tools.find((t) => t.name === n)!;
    const ctx = ctxFor(fleet.project);
    const o = { maxOutputBytes: 30_000 };
    expect((await runTool(byName('shell'), { command: 'echo $FROM_HARNESS' }, ctx, o)).output).toBe(
      'yes\n[exit code 0]',
    );
    expect((await runTool(byName('write'), { path: '.flotilla/state/x', content: '' }, ctx, o)).isError).toBe(true);
    await runTool(byName('write'), { path: join(memory, 'MEMORY.md'), content: 'remember\n' }, ctx, o);
    expect(readFileSync(join(memory, 'MEMORY.md'), 'utf8')).toBe('remember\n');
  });

  it('every tool has a description with an example and an input example its schema accepts', () => {
    const tools = createBuiltinTools({
      cwd: fleet.project,
      protectedRoots: [],
      writableWithin: [],
      shellTimeoutSecs: 5,
      env: {},
    });
    for (const t of tools) {
      expect(t.description).toMatch(/Example: \{/);
      expect(t.inputSchema.safeParse(t.inputExample).success).toBe(true);
    }
  });
});
