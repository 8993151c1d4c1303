import { execa } from 'execa';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ancestors, selfPid } from '../../src/fleet/proc.js';
import { pidNamespace, pidNamespaceArgv } from '../../src/tools/sandbox.js';
import { createShellTool } from '../../src/tools/shell.js';
import { tempDir } from '../helpers/fleet.js';
import { eventually } from '../helpers/tmux.js';
import { ctxFor, isDead, readPid } from './process-helpers.js';

let tmp: { dir: string; cleanup(): void };
beforeEach(() => {
  tmp = tempDir('flotilla-pidns-');
});
afterEach(() => tmp.cleanup());

const shell = (timeoutSecs = 30) => createShellTool({ timeoutSecs, env: process.env, killGraceMs: 500, wrap: (argv) => pidNamespaceArgv(argv) });
// The orphan writes its host pid (the shell's own /proc/self, read by a builtin), then lives on.
const orphan = (file: string, how: string) => {
  writeFileSync(`${file}.sh`, `read -r p _ < /proc/self/stat; echo $p > ${file}.tmp; mv ${file}.tmp ${file}; exec sleep 30\n`);
  return how.replace('CMD', `sh ${file}.sh`);
};

describe('a pid namespace per tool command', () => {
  it('is available on this machine (CI runs Linux with util-linux)', () => {
    expect(pidNamespace()).toMatchObject({ available: true });
  });

  it.each([
    ['setsid -f', 'setsid -f CMD > /dev/null 2>&1'],
    ['( … & )', '( CMD > /dev/null 2>&1 & )'],
    ['nohup … &', 'nohup CMD > /dev/null 2>&1 &'],
    ['env -i + double fork', "env -i PATH=/usr/bin:/bin sh -c '( CMD > /dev/null 2>&1 & ) &'"],
    ['disown', "bash -c 'CMD > /dev/null 2>&1 & disown'"],
  ])('a process detached with %s stays a descendant of the harness, and the call returns at once', async (_name, how) => {
    const file = join(tmp.dir, 'pid');
    const r = await shell().execute({ command: `${orphan(file, how)}\necho started` }, ctxFor(tmp.dir));
    // It returns as soon as the command exits; the footer says something still runs.
    expect(r.output).toMatch(/^started\n\[exit code 0\]/);
    await eventually(() => existsSync(file), 20_000, 'the orphan to write its pid');
    const pid = readPid(file);
    expect(ancestors(pid)).toContain(selfPid());
    process.kill(pid, 'SIGKILL');
  });

  it('reports exit codes and output as before; a timeout kills a setsid escapee too', async () => {
    expect((await shell().execute({ command: 'echo out; echo err >&2; exit 3' }, ctxFor(tmp.dir))).output).toBe('out\nerr\n[exit code 3]');
    const file = join(tmp.dir, 'esc');
    const r = await shell(2).execute({ command: `${orphan(file, 'setsid -f CMD > /dev/null 2>&1')}; sleep 60` }, ctxFor(tmp.dir));
    expect(r.isError).toBe(true);
    expect(r.output).toMatch(/timed out after 2 s/);
    const pid = readPid(file);
    await eventually(() => isDead(pid), 10_000, 'the escapee to die with its namespace');
  });

  it('when the harness dies, whatever its commands left behind dies with it', async () => {
    const file = join(tmp.dir, 'left');
    const dist = resolve('dist/tools/sandbox.js');
    // A stand-in harness: starts a command that leaves a detached process, then is SIGKILLed.
    const script = `
      const { spawn } = await import('node:child_process');
      const { pidNamespaceArgv } = await import(${JSON.stringify(dist)});
      const argv = pidNamespaceArgv(['sh', '-c', ${JSON.stringify(orphan(file, 'setsid -f CMD > /dev/null 2>&1'))}]);
      spawn(argv[0], argv.slice(1), { stdio: 'ignore', detached: true });
      setInterval(() => {}, 1000);`;
    const harness = execa(process.execPath, ['--input-type=module', '-e', script], { reject: false });
    await eventually(() => existsSync(file), 20_000, 'the orphan to write its pid');
    const pid = readPid(file);
    expect(ancestors(pid)).toContain(harness.pid);
    harness.kill('SIGKILL');
    await harness;
    await eventually(() => isDead(pid), 10_000, 'the orphan to die with the harness');
  });
});
