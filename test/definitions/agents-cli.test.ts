import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { flotilla } from '../helpers/cli.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

let fleet: TempFleet;
let env: NodeJS.ProcessEnv;
const run = (args: string[], extra: { env?: NodeJS.ProcessEnv; input?: string } = {}) =>
  flotilla(['agents', ...args], {
    cwd: fleet.project,
    env: { ...env, ...extra.env },
    ...(extra.input !== undefined ? { input: extra.input } : {}),
  });

beforeEach(() => {
  fleet = tempFleet('flotilla-agents-');
  execFileSync('git', ['init', '-q', fleet.project]);
  const home = join(fleet.project, 'home');
  // TMPDIR: a failed edit keeps the user's copy in a temp dir, on purpose; keep it in ours.
  env = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'xdg'),
    FLOTILLA_ROOT: '',
    VISUAL: '',
    EDITOR: '',
    TMPDIR: fleet.project,
  };
});
afterEach(() => fleet.cleanup());

describe('flotilla agents create / list / show', () => {
  it('creates a definition that list and show then report', async () => {
    const c = await run([
      'create',
      'reviewer',
      '--description',
      'Reviews diffs: finds bugs',
      '--model',
      'sonnet',
      '--tools',
      'read, grep, Bash(git diff *)',
    ]);
    expect(c.stderr).toContain("'Bash(git diff *)' grants the whole 'shell' tool");
    expect(c.exitCode).toBe(0);
    const path = join(fleet.layout.agentsDir, 'reviewer.md');
    expect(String(c.stdout).trim()).toBe(path);
    expect(readFileSync(path, 'utf8')).toMatch(
      /^---\nname: reviewer\ndescription: "Reviews diffs: finds bugs"\nmodel: sonnet\ntools: read, grep, Bash\(git diff \*\)\n---\n\nYou are reviewer\. /,
    );

    const l = await run(['list']);
    expect(l.exitCode).toBe(0);
    expect(String(l.stdout)).toMatch(/^NAME\s+SCOPE\s+MODEL\s+DESCRIPTION\n/);
    expect(String(l.stdout)).toMatch(/\nreviewer\s+project\s+sonnet\s+Reviews diffs: finds bugs\n/);
    expect(String(l.stdout)).toMatch(/\ngeneral\s+builtin\s+-\s+General-purpose/);

    const s = await run(['show', 'reviewer']);
    expect(s.exitCode).toBe(0);
    expect(String(s.stdout)).toContain('model:            sonnet (→ anthropic:claude-sonnet-4-5)');
    expect(String(s.stdout)).toContain('tools:            shell, read, grep');
    expect(String(s.stdout)).toContain(`source:           ${path} (project)`);
    expect(String(s.stdout)).toMatch(/--- prompt ---\nYou are reviewer\./);

    const j = await run(['show', 'reviewer', '--json']);
    expect(JSON.parse(String(j.stdout))).toMatchObject({
      name: 'reviewer',
      effectiveTools: ['shell', 'read', 'grep'],
      permissionMode: 'default',
      maxTurns: 20,
      timeoutSecs: 600,
    });
  });

  it('writes to --dir and refuses to overwrite', async () => {
    const dir = join(fleet.project, '.claude', 'agents');
    expect((await run(['create', 'helper', '--description', 'Helps', '--dir', dir])).exitCode).toBe(0);
    expect(existsSync(join(dir, 'helper.md'))).toBe(true);
    const again = await run(['create', 'helper', '--description', 'Helps', '--dir', dir]);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toBe(
      `flotilla: ${join(dir, 'helper.md')} already exists — change it with 'flotilla agents edit helper' or pick another name`,
    );
  });

  it('rejects a bad name as a usage error', async () => {
    const r = await run(['create', 'bad name', '--description', 'x']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe(
      "flotilla: invalid definition name 'bad name': use 1-64 letters, digits, '_' or '-', starting with a letter or digit",
    );
  });

  it('show of an unknown name says what to do', async () => {
    const r = await run(['show', 'ghost']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe(
      `flotilla: no agent definition named 'ghost' — run 'flotilla agents list' to see them, or 'flotilla agents create ghost --description "…"' to make one`,
    );
  });

  it('lists broken files as errors on stderr and the rest as usual', async () => {
    mkdirSync(fleet.layout.agentsDir, { recursive: true });
    writeFileSync(join(fleet.layout.agentsDir, 'ok.md'), '---\nname: ok\ndescription: fine\n---\nHi\n');
    writeFileSync(join(fleet.layout.agentsDir, 'bad.md'), '---\nname: bad\n---\nHi\n');
    const r = await run(['list']);
    expect(r.exitCode).toBe(0);
    expect(String(r.stdout)).toMatch(/\nok\s+project/);
    expect(r.stderr).toBe(
      `flotilla: error: ${join(fleet.layout.agentsDir, 'bad.md')}: missing required field 'description' (description) — say what the agent does and when to use it, e.g. description: Reviews code changes for bugs; use after every edit`,
    );
  });
});

describe('flotilla agents edit', () => {
  const create = () => run(['create', 'writer', '--description', 'Writes docs']);
  const path = () => join(fleet.layout.agentsDir, 'writer.md');

  it('keeps a valid edit made in $EDITOR', async () => {
    await create();
    const r = await run(['edit', 'writer'], {
      env: { EDITOR: "sed -i 's/^description: .*/description: Writes better docs/'" },
    });
    expect(r.exitCode).toBe(0);
    expect(readFileSync(path(), 'utf8')).toContain('description: Writes better docs\n');
  });

  it('prefers $VISUAL over $EDITOR', async () => {
    await create();
    await run(['edit', 'writer'], {
      env: { VISUAL: "sed -i 's/^description: .*/description: visual/'", EDITOR: 'false' },
    });
    expect(readFileSync(path(), 'utf8')).toContain('description: visual\n');
  });

  it('keeps the old file when the edit does not load', async () => {
    await create();
    const before = readFileSync(path(), 'utf8');
    const r = await run(['edit', 'writer'], { env: { EDITOR: "sed -i 's/^name: .*/name: Bad Name/'" } });
    expect(r.exitCode).toBe(1);
    expect(readFileSync(path(), 'utf8')).toBe(before);
    const lines = String(r.stderr).split('\n');
    expect(lines[0]).toBe(
      `flotilla: error: ${path()}: name 'Bad Name' is not valid (name) — use 1-64 letters, digits, '_' or '-', starting with a letter or digit, e.g. name: bad-name`,
    );
    expect(lines[1]).toMatch(
      new RegExp(
        `^flotilla: the edited definition does not load, so ${path()} was kept unchanged — fix your copy in (/.*writer\\.md) and run 'flotilla agents edit writer' again$`,
      ),
    );
    const copy = /copy in (\S+)/.exec(lines[1]!)![1]!;
    expect(readFileSync(copy, 'utf8')).toContain('name: Bad Name');
  });

  it('keeps the old file when the editor fails', async () => {
    await create();
    const before = readFileSync(path(), 'utf8');
    const r = await run(['edit', 'writer'], { env: { EDITOR: 'false' } });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(
      /^flotilla: the editor \(false\) exited with 1; .*writer\.md is unchanged — your copy is in /,
    );
    expect(readFileSync(path(), 'utf8')).toBe(before);
  });

  it('cannot edit the built-in definition', async () => {
    const r = await run(['edit', 'general'], { env: { EDITOR: 'true' } });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe(
      `flotilla: 'general' is built in and has no file to edit — to change it, create your own: flotilla agents create general --description "…"`,
    );
  });
});

describe('flotilla agents delete', () => {
  const path = () => join(fleet.layout.agentsDir, 'tmp-agent.md');

  it('asks [y/N] and keeps the file unless told yes', async () => {
    await run(['create', 'tmp-agent', '--description', 'x']);
    const no = await run(['delete', 'tmp-agent'], { input: 'n\n' });
    expect(no.exitCode).toBe(1);
    expect(no.stderr).toBe(`delete ${path()}? [y/N] flotilla: not deleted`);
    expect(existsSync(path())).toBe(true);
    const eof = await run(['delete', 'tmp-agent'], { input: '' });
    expect(eof.exitCode).toBe(1);
    expect(existsSync(path())).toBe(true);
    const yes = await run(['delete', 'tmp-agent'], { input: 'y\n' });
    expect(yes.exitCode).toBe(0);
    expect(existsSync(path())).toBe(false);
  });

  it('-y deletes without asking and names what now takes effect', async () => {
    const claude = join(fleet.project, '.claude', 'agents');
    await run(['create', 'tmp-agent', '--description', 'project one']);
    await run(['create', 'tmp-agent', '--description', 'claude one', '--dir', claude]);
    const r = await run(['delete', 'tmp-agent', '-y']);
    expect(r.exitCode).toBe(0);
    expect(String(r.stdout)).toBe(`deleted ${path()}`);
    expect(r.stderr).toBe(
      `flotilla: note: 'tmp-agent' now comes from ${join(claude, 'tmp-agent.md')} (claude-project)`,
    );
  });
});
