import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listRecords } from '../../src/fleet/registry.js';
import { flotilla } from '../helpers/cli.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { fixture, scriptCalls } from '../helpers/scripts.js';

// `bypass_permissions` (every tool call runs without asking) is a person's decision,
// written in a config file. An agent can set environment variables for the commands it runs,
// so a mode reached through the environment must be refused unless a file allows it.

let fleet: TempFleet;
let calls: string;
let env: NodeJS.ProcessEnv;
const model = `script:${fixture('harness/shell-then-answer.yaml')}`;
const REFUSED =
  'permission_mode bypass_permissions (from agents.default_permission_mode) is refused by config (permissions.permission_mode) — set agents.allow_bypass_permissions: true in .flotilla/config.yaml';
const byEnv = {
  FLOTILLA_AGENTS_DEFAULT_PERMISSION_MODE: 'bypass_permissions',
  FLOTILLA_AGENTS_ALLOW_BYPASS_PERMISSIONS: 'true',
};

beforeEach(() => {
  fleet = tempFleet('flotilla-bypass-');
  execFileSync('git', ['init', '-q', fleet.project]);
  mkdirSync(fleet.layout.agentsDir, { recursive: true });
  writeFileSync(
    join(fleet.layout.agentsDir, 'writer.md'),
    '---\nname: writer\ndescription: Writes files\n---\nYou write.\n',
  );
  calls = join(fleet.project, 'calls.jsonl');
  const home = join(fleet.project, 'home');
  env = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'xdg'),
    FLOTILLA_ROOT: fleet.layout.root,
    FLOTILLA_SCRIPT_LOG: calls,
  };
});
afterEach(() => fleet.cleanup());

const run = (args: string[], extra: NodeJS.ProcessEnv) =>
  flotilla(['run', '--model', model, ...args], {
    cwd: fleet.project,
    input: 'count the lines',
    env: { ...env, ...extra },
  });

describe('bypass_permissions from the environment', () => {
  it.each([
    ['the built-in general definition', [] as string[]],
    ['a definition file without a mode', ['--agent', 'writer']],
  ])(
    'is refused for %s, even with FLOTILLA_AGENTS_ALLOW_BYPASS_PERMISSIONS=true, before any model call',
    async (_what, args) => {
      const r = await run(args, byEnv);
      expect(r.exitCode).not.toBe(0);
      expect(r.stderr).toContain(
        "env FLOTILLA_AGENTS_ALLOW_BYPASS_PERMISSIONS: 'agents.allow_bypass_permissions' is ignored — only a config file",
      );
      expect(r.stderr).toContain(REFUSED);
      expect(r.stdout).toBe('');
      expect(scriptCalls(calls)).toEqual([]);
      expect(listRecords(fleet.layout).filter((rec) => rec.permissionMode === 'bypass_permissions')).toEqual([]);
    },
  );

  it('is refused by agents show, and agents list names the refusal', async () => {
    const show = await flotilla(['agents', 'show', 'writer', '--json'], {
      cwd: fleet.project,
      env: { ...env, ...byEnv },
    });
    expect(show.exitCode).toBe(1);
    expect(show.stderr).toContain(REFUSED);
    const list = await flotilla(['agents', 'list'], { cwd: fleet.project, env: { ...env, ...byEnv } });
    expect(String(list.stdout)).not.toMatch(/\n(writer|general)\s/);
    expect(list.stderr).toContain(`<builtin>: ${REFUSED}`);
  });

  // The same mode is allowed when a person wrote the permission in a file: proves the
  // refusals above come from where the permission was set, not from the mode itself.
  it.each([
    ['the project config (of a folder the person trusted)', () => fleet.layout.configFile],
    ['the user config', () => join(env.XDG_CONFIG_HOME!, 'flotilla', 'config.yaml')],
  ])('runs when %s allows it', async (what, file) => {
    mkdirSync(join(file(), '..'), { recursive: true });
    writeFileSync(file(), 'agents:\n  allow_bypass_permissions: true\n');
    if (what.includes('trusted')) expect((await flotilla(['trust'], { cwd: fleet.project, env })).exitCode).toBe(0);
    const r = await run([], { FLOTILLA_AGENTS_DEFAULT_PERMISSION_MODE: 'bypass_permissions' });
    expect(r.stdout).toBe('There are 2 lines.');
    expect(r.exitCode).toBe(0);
    expect(scriptCalls(calls)).toHaveLength(2);
    const [rec] = listRecords(fleet.layout);
    expect(rec).toMatchObject({ status: 'completed', permissionMode: 'bypass_permissions' });
  });

  // docs/security-trust.md "Folder trust": the allowance is the person's only once they trust the folder.
  it("is refused when only an untrusted project's config allows it", async () => {
    writeFileSync(fleet.layout.configFile, 'agents:\n  allow_bypass_permissions: true\n');
    const r = await run([], { FLOTILLA_AGENTS_DEFAULT_PERMISSION_MODE: 'bypass_permissions' });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain(REFUSED);
    expect(r.stderr).toContain('agents.allow_bypass_permissions in');
    expect(scriptCalls(calls)).toEqual([]);
  });
});
