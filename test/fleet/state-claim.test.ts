import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { flotilla } from '../helpers/cli.js';
import { tempDir, tempFleet, type TempFleet } from '../helpers/fleet.js';

/**
 * Fleet state is this machine's, never a repository's (docs/security-trust.md "Folder trust"): a
 * clone that commits `.flotilla/state/` has it moved aside to `state.leftover-<ms>` by the
 * first command, and nothing in it is read. State made here, or by an older Flotilla, stays.
 */
let fleet: TempFleet | undefined;
let home: { dir: string; cleanup(): void } | undefined;
afterEach(() => {
  fleet?.cleanup();
  home?.cleanup();
  fleet = home = undefined;
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    stdio: 'ignore',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@x',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@x',
    },
  });

/** A record of a "working" agent, as a repository might commit it. */
function plant(state: string): string {
  const file = join(state, 'agents', 'planted.json');
  mkdirSync(join(state, 'agents'), { recursive: true });
  writeFileSync(file, JSON.stringify({ id: 'planted', name: 'general', status: 'working' }));
  return file;
}

function setup(): { run(args: string[]): Promise<{ stdout: string; stderr: string; exitCode: number }> } {
  fleet = tempFleet('flotilla-clone-');
  home = tempDir('flotilla-home-');
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home.dir,
    XDG_CONFIG_HOME: join(home.dir, '.config'),
    LANG: 'C.UTF-8',
  };
  return {
    run: async (args) => {
      const r = await flotilla(args, { cwd: fleet!.project, env, extendEnv: false });
      return { stdout: String(r.stdout), stderr: String(r.stderr), exitCode: r.exitCode ?? -1 };
    },
  };
}

describe('state that came with a clone', () => {
  it('is moved aside by the first command and never listed', async () => {
    const { run } = setup();
    git(fleet!.project, 'init', '-q');
    plant(fleet!.layout.state);
    mkdirSync(join(fleet!.layout.state, 'schedules'), { recursive: true });
    writeFileSync(
      join(fleet!.layout.state, 'schedules', 'nightly.json'),
      JSON.stringify({
        version: 1,
        name: 'nightly',
        cron: '* * * * *',
        task: 'touch pwned',
        createdAt: '2026-01-01T00:00:00Z',
      }),
    );
    // Even a copy of the mark made on the author's machine: a checkout makes a new folder.
    writeFileSync(join(fleet!.layout.state, '.made-here'), '1:1\n');
    git(fleet!.project, 'add', '-f', '.flotilla/state');
    git(fleet!.project, 'commit', '-qm', 'state');

    const r = await run(['status', '--all']);
    expect(r.stderr).toContain(
      `${fleet!.layout.state} came with the repository (git tracks it), so it was moved to ${fleet!.layout.state}.leftover-`,
    );
    expect(r.stdout).not.toContain('planted');
    const leftovers = readdirSync(fleet!.layout.root).filter((n) => n.startsWith('state.leftover-'));
    expect(leftovers).toHaveLength(1);
    expect(existsSync(join(fleet!.layout.root, leftovers[0]!, 'agents', 'planted.json'))).toBe(true);
    expect(existsSync(join(fleet!.layout.state, 'agents', 'planted.json'))).toBe(false);
    // A committed schedule is not the scheduler's to fire.
    const schedules = await run(['schedule', 'list']);
    expect(schedules.stdout + schedules.stderr).not.toContain('nightly');

    // The fleet made next is this machine's: kept from then on.
    const send = await run(['send', '--to', 'nobody', 'hi']);
    expect(send.stderr).not.toContain('came with the repository');
    expect(readFileSync(join(fleet!.layout.state, '.made-here'), 'utf8')).not.toBe('1:1\n');
    const again = await run(['status', '--all']);
    expect(again.stderr).not.toContain('came with the repository');
    expect(readdirSync(fleet!.layout.root).filter((n) => n.startsWith('state.leftover-'))).toHaveLength(1);
  });

  it('is kept when git does not track it (a fleet an older Flotilla made here)', async () => {
    const { run } = setup();
    git(fleet!.project, 'init', '-q');
    const file = plant(fleet!.layout.state);
    const r = await run(['status', '--all']);
    expect(r.stderr).not.toContain('came with the repository');
    expect(existsSync(file)).toBe(true);
    expect(readdirSync(fleet!.layout.root).filter((n) => n.startsWith('state.leftover-'))).toEqual([]);
    expect(existsSync(join(fleet!.layout.state, '.made-here'))).toBe(true);
  });
});
