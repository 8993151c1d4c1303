import { execa } from 'execa';
import { existsSync, linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  bubblewrapArgv,
  bubblewrapUserNamespace,
  findBubblewrap,
  hostExecutedPaths,
  installedPaths,
  type SandboxSpec,
} from '../../src/tools/sandbox.js';
import { createShellTool } from '../../src/tools/shell.js';
import { createWriteTool } from '../../src/tools/write.js';
import { tempDir } from '../helpers/fleet.js';
import { ctxFor } from './process-helpers.js';

/**
 * Each known escape from the bubblewrap sandbox (docs/security.md), tried from inside it. A test
 * fails if the escape works. The project is a git repo with a fleet root, `.claude/`, and a
 * user home inside it (so the user-level dirs are inside the writable cwd too).
 */
let tmp: { dir: string; cleanup(): void };
let project: string;
let memory: string;
let home: string;
let spec: SandboxSpec;
beforeEach(async () => {
  tmp = tempDir('flotilla-escape-');
  project = join(tmp.dir, 'project');
  home = join(project, 'home');
  memory = join(project, '.flotilla', 'agent-memory', 'worker');
  // Made first so each escape aims at a folder that exists (test/tools/sandbox-homes.test.ts starts from none).
  for (const d of [
    memory,
    join(project, '.flotilla', 'agents'),
    join(project, '.claude', 'agents'),
    join(home, '.config', 'flotilla'),
    join(home, '.claude'),
    join(home, '.cache', 'flotilla'),
  ])
    mkdirSync(d, { recursive: true });
  await execa('git', ['init', '-q', project]);
  const bwrap = findBubblewrap();
  const readOnly = hostExecutedPaths({
    fleetRoot: join(project, '.flotilla'),
    project,
    cwd: project,
    home,
    userConfigDir: join(home, '.config', 'flotilla'),
    userCacheDir: join(home, '.cache', 'flotilla'),
  });
  spec = {
    writable: [project, memory],
    readOnly,
    network: false,
    bwrap,
    userNamespace: bubblewrapUserNamespace(bwrap),
  };
});
afterEach(() => tmp.cleanup());

const sandboxed = (command: string) =>
  createShellTool({ timeoutSecs: 30, env: process.env, wrap: (argv) => bubblewrapArgv(spec, argv) }).execute(
    { command },
    ctxFor(project),
  );

function state(pid: number): string {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[0]!;
}

describe('the bubblewrap sandbox contains', () => {
  it('cannot kill or stop another harness, read its environ, or see it at all', async () => {
    const other = execa('sleep', ['120'], { env: { SECRET_TOKEN: 'hunter2' }, reject: false });
    try {
      const pid = other.pid!;
      const r = await sandboxed(
        `kill -STOP ${pid}; kill -9 ${pid}; cat /proc/${pid}/environ; ls /proc | grep -c '^[0-9]'; echo end`,
      );
      expect(r.output).not.toContain('hunter2');
      expect(r.output).toMatch(/No such (process|file)/);
      // Only the sandbox's own few processes are visible.
      expect(Number(/\n(\d+)\nend/.exec(r.output)?.[1])).toBeLessThan(10);
      // Neither stopped (T) nor killed (Z): sleeping, or running if the machine was slow to start it.
      expect(state(pid)).toMatch(/^[SR]$/);
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('has no capabilities: remounting / read-write fails, and / stays read-only', async () => {
    const r = await sandboxed(
      'grep CapEff /proc/self/status; mount -o remount,rw / && echo REMOUNTED; touch /etc/flotilla-escape && echo WROTE-ETC; echo end',
    );
    expect(r.output).toMatch(/CapEff:\s+0+\n/);
    expect(r.output).not.toMatch(/REMOUNTED|WROTE-ETC/);
    expect(existsSync('/etc/flotilla-escape')).toBe(false);
  });

  it('cannot write any path that later runs on the host, but can write its cwd, memory and /tmp', async () => {
    const targets = [
      '.flotilla/agents/evil.md',
      '.flotilla/config.yaml',
      '.claude/agents/evil.md',
      '.claude/settings.json',
      '.git/hooks/pre-commit',
      '.git/config',
      'home/.config/flotilla/config.yaml',
      'home/.config/flotilla/agents/evil.md',
      'home/.claude/agents/evil.md',
      'home/.flotilla/agent-memory/other/MEMORY.md',
      'home/.cache/flotilla/v8/fast-send-x.cache',
    ];
    const before = readFileSync(join(project, '.git', 'config'), 'utf8');
    const r = await sandboxed(
      [
        ...targets.map(
          (t) => `mkdir -p $(dirname ${t}) 2>/dev/null; echo pwned >> ${t} 2>/dev/null && echo WROTE ${t}`,
        ),
        'echo ok > work.txt',
        `echo mem > ${memory}/MEMORY.md`,
        'echo t > /tmp/x && echo TMP-OK',
      ].join('\n'),
    );
    expect(r.output).not.toContain('WROTE');
    for (const t of targets.filter((x) => x !== '.git/config')) expect(existsSync(join(project, t)), t).toBe(false);
    expect(readFileSync(join(project, '.git', 'config'), 'utf8')).toBe(before);
    expect(readFileSync(join(project, 'work.txt'), 'utf8')).toBe('ok\n');
    expect(readFileSync(join(memory, 'MEMORY.md'), 'utf8')).toBe('mem\n');
    expect(r.output).toContain('TMP-OK');
  });

  it('cannot create a missing .claude/ or .git/hooks inside its cwd', async () => {
    const bare = join(tmp.dir, 'bare');
    mkdirSync(join(bare, '.git'), { recursive: true });
    spec = {
      ...spec,
      writable: [bare],
      readOnly: hostExecutedPaths({
        fleetRoot: join(bare, '.flotilla'),
        project: bare,
        cwd: bare,
        home,
        userConfigDir: join(home, '.config', 'flotilla'),
        userCacheDir: join(home, '.cache', 'flotilla'),
      }),
    };
    const r = await createShellTool({
      timeoutSecs: 30,
      env: process.env,
      wrap: (argv) => bubblewrapArgv(spec, argv),
    }).execute(
      {
        command:
          'mkdir -p .claude/agents && echo x > .claude/agents/evil.md && echo WROTE1; mkdir -p .git/hooks && echo x > .git/hooks/post-checkout && echo WROTE2; echo end',
      },
      ctxFor(bare),
    );
    expect(r.output).not.toMatch(/WROTE/);
    expect(existsSync(join(bare, '.claude', 'agents', 'evil.md'))).toBe(false);
    expect(existsSync(join(bare, '.git', 'hooks', 'post-checkout'))).toBe(false);
  });

  it('runs Flotilla and Node from an install under /tmp or inside its cwd, and cannot change what the host runs from it', async () => {
    // One install where the private /tmp would cover it, one inside the writable cwd (an
    // agent working in a Flotilla checkout).
    const installs = [join(tmp.dir, 'install'), join(project, 'vendor', 'flotilla')];
    for (const root of installs) {
      for (const d of ['dist', 'node_modules', 'tools', 'src']) mkdirSync(join(root, d), { recursive: true });
      writeFileSync(join(root, 'package.json'), '{"type":"module"}\n');
      writeFileSync(
        join(root, 'tools', 'hello'),
        `#!/bin/sh\necho hello-from-${root.endsWith('install') ? 'tmp' : 'cwd'}\n`,
        { mode: 0o755 },
      );
    }
    const readOnly = hostExecutedPaths({
      fleetRoot: join(project, '.flotilla'),
      project,
      cwd: project,
      home,
      userConfigDir: join(home, '.config', 'flotilla'),
      userCacheDir: join(home, '.cache', 'flotilla'),
      installed: installs.flatMap((root) => installedPaths(root, process.execPath)),
    });
    spec = { ...spec, readOnly };
    const writes = installs.flatMap((root) =>
      ['tools/hello', 'dist/main.js', 'node_modules/x.js', 'package.json'].map((p) => join(root, p)),
    );
    const r = await sandboxed(
      [
        ...installs.map((root) => join(root, 'tools', 'hello')),
        `"${process.execPath}" -e 'console.log("node-" + (6 * 7))'`,
        ...writes.map((w) => `echo pwned >> ${w} 2>/dev/null && echo WROTE ${w}`),
        `echo edit > ${join(installs[1]!, 'src', 'edit.ts')} && echo SRC-OK`,
      ].join('\n'),
    );
    expect(r.output).toContain('hello-from-tmp');
    expect(r.output).toContain('hello-from-cwd');
    expect(r.output).toContain('node-42');
    expect(r.output).not.toContain('WROTE');
    for (const root of installs) {
      expect(readFileSync(join(root, 'package.json'), 'utf8')).toBe('{"type":"module"}\n');
      expect(existsSync(join(root, 'dist', 'main.js'))).toBe(false);
    }
    expect(r.output).toContain('SRC-OK');
  });

  it('the write tool applies the same write set: not $HOME, not .git/hooks, not through a symlink or a hard link', async () => {
    const write = createWriteTool({
      protectedRoots: spec.readOnly,
      writableWithin: [memory],
      writableRoots: spec.writable,
    });
    const outside = join(tmp.dir, 'outside.txt');
    writeFileSync(outside, 'original\n');
    linkSync(outside, join(project, 'hard.txt'));
    symlinkSync(outside, join(project, 'soft.txt'));
    const tries = [
      join(homedir(), '.bashrc-flotilla-escape'),
      '.git/hooks/pre-commit',
      '.git/config',
      '.claude/agents/x.md',
      'home/.claude/agents/x.md',
      'hard.txt',
      'soft.txt',
      '.flotilla/config.yaml',
    ];
    for (const path of tries) {
      const r = await write.execute({ path, content: 'pwned\n' }, ctxFor(project));
      expect(r.isError, path).toBe(true);
      expect(r.output).toMatch(/^Refused to write/);
    }
    expect(existsSync(join(homedir(), '.bashrc-flotilla-escape'))).toBe(false);
    expect(readFileSync(outside, 'utf8')).toBe('original\n');
    expect((await write.execute({ path: 'src/ok.ts', content: 'ok\n' }, ctxFor(project))).isError).toBeFalsy();
    expect(
      (await write.execute({ path: join(memory, 'MEMORY.md'), content: 'm\n' }, ctxFor(project))).isError,
    ).toBeFalsy();
  });

  it('has no network but loopback unless security.sandbox_network', async () => {
    const ifaces = async (network: boolean) => {
      spec = { ...spec, network };
      const r = await sandboxed('tail -n +3 /proc/net/dev | cut -d: -f1');
      return r.output
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => /^[a-z][\w.-]*$/.test(l))
        .sort();
    };
    expect(await ifaces(false)).toEqual(['lo']);
    expect((await ifaces(true)).length).toBeGreaterThan(1);
  });
});
