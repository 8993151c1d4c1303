import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync, readlinkSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ancestors,
  isProcessAlive,
  parentPid,
  parseProcStat,
  processStartTime,
  selfProcess,
} from '../../src/fleet/proc.js';
import { tempDir } from '../helpers/fleet.js';
import { eventually } from '../helpers/tmux.js';
import { compileSources, type CompiledSources } from './helpers/compile.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function sleeper(cmd = process.execPath, args = ['-e', 'setInterval(() => {}, 1000)']) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'] });
  cleanups.push(() => child.kill('SIGKILL'));
  return child;
}

describe('proc', () => {
  it('reads its own start time, parent and liveness', () => {
    const own = readFileSync('/proc/self/stat', 'utf8');
    // /proc/self is this process; field 22 is the 20th after the comm.
    expect(processStartTime(process.pid)).toBe(own.slice(own.lastIndexOf(')') + 2).split(' ')[19]);
    expect(parentPid(process.pid)).toBe(process.ppid);
    expect(isProcessAlive(process.pid)).toBe(true);
    expect(isProcessAlive(process.pid, processStartTime(process.pid))).toBe(true);
    expect(ancestors(process.pid)[0]).toBe(process.ppid);
    expect(ancestors(process.pid)).not.toContain(process.pid);
  });

  it("reads a child's start time and parent; the child is dead after SIGKILL", async () => {
    const child = sleeper();
    const start = processStartTime(child.pid!);
    expect(start).toMatch(/^\d+$/);
    expect(parentPid(child.pid!)).toBe(process.pid);
    expect(ancestors(child.pid!).slice(0, 2)).toEqual([process.pid, process.ppid]);
    expect(isProcessAlive(child.pid!, start)).toBe(true);
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(isProcessAlive(child.pid!, start)).toBe(false);
    expect(isProcessAlive(child.pid!)).toBe(false);
    expect(processStartTime(child.pid!)).toBeNull();
  });

  it('a reused pid (start time differs) is not alive', () => {
    const child = sleeper();
    const start = processStartTime(child.pid!)!;
    expect(isProcessAlive(child.pid!, String(Number(start) + 1))).toBe(false);
    expect(isProcessAlive(child.pid!, start)).toBe(true);
  });

  it('a zombie counts as dead', async () => {
    // sh starts a subshell that exits only once sh has become `sleep 30`, which never reaps it
    // (a child that exits sooner could be reaped by sh itself on a slow machine).
    const child = sleeper('sh', [
      '-c',
      'p=$$; (while [ "$(cat /proc/$p/comm)" = sh ]; do sleep 0.05; done) & echo $!; exec sleep 30',
    ]);
    const [line] = (await once(child.stdout!, 'data')) as [Buffer];
    const zombie = Number(line.toString().trim());
    await eventually(
      () => parseProcStat(readFileSync(`/proc/${zombie}/stat`, 'utf8'))?.state === 'Z',
      15_000,
      'zombie',
    );
    // kill(pid, 0) succeeds on a zombie, so only the state check can tell.
    expect(() => process.kill(zombie, 0)).not.toThrow();
    expect(isProcessAlive(zombie)).toBe(false);
  });

  it('parses stat of a process whose name holds spaces and parentheses', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const odd = join(dir, 'a) b (c');
    symlinkSync(process.execPath, odd);
    const child = sleeper(odd);
    await eventually(() => readFileSync(`/proc/${child.pid}/stat`, 'utf8').includes('(a) b (c)'), 15_000, 'odd comm');
    expect(parentPid(child.pid!)).toBe(process.pid);
    expect(processStartTime(child.pid!)).toMatch(/^\d+$/);
    expect(isProcessAlive(child.pid!, processStartTime(child.pid!))).toBe(true);
    expect(parseProcStat('42 (x) y) (z) S 7 42 42 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1 0 999 0 0')).toEqual({
      state: 'S',
      ppid: 7,
      pgrp: 42,
      startTime: '999',
    });
    expect(parseProcStat('garbage')).toBeNull();
  });

  it('nonsense pids are neither alive nor have parents', () => {
    for (const pid of [0, -1, 1.5, Number.NaN]) {
      expect(isProcessAlive(pid)).toBe(false);
      expect(parentPid(pid)).toBeNull();
      expect(processStartTime(pid)).toBeNull();
    }
  });
});

/**
 * A tool command runs in a pid namespace of its own (docs/security.md): under `unshare` /proc
 * is still the host's, under bubblewrap it is the namespace's own. Whatever a process there
 * records about itself, or judges about others, must hold on the host.
 */
describe('proc inside a pid namespace', () => {
  let compiled: CompiledSources;
  beforeAll(() => {
    compiled = compileSources(['src/fleet/proc.ts']);
  });
  afterAll(() => compiled.cleanup());

  /** Runs `body` (with proc.ts in scope) as a Node process under `prefix`; its stdout parsed as JSON. */
  function inside(prefix: string[], body: string, env: NodeJS.ProcessEnv = process.env): Record<string, unknown> {
    const script = `const proc = await import(${JSON.stringify(join(compiled.srcDir, 'fleet/proc.js'))}); ${body}`;
    const out = execFileSync(prefix[0]!, [...prefix.slice(1), process.execPath, '--input-type=module', '-e', script], {
      encoding: 'utf8',
      env,
    });
    return JSON.parse(out) as Record<string, unknown>;
  }

  it('a process under unshare names itself by its host pid and start time, not its namespace-local pid', () => {
    // The namespace's first pids are taken by `true`s until the next free one names no host
    // process: the pid a process there would have recorded before the fix names nobody here.
    const host = new Set(
      readdirSync('/proc')
        .filter((n) => /^\d+$/.test(n))
        .map(Number),
    );
    let local = 2;
    while (host.has(local + 1)) local++;
    const burn = `i=1; while [ $i -lt ${local} ]; do /bin/true; i=$((i+1)); done; "$@"`;
    const r = inside(
      ['unshare', '--pid', '--fork', '--map-current-user', 'sh', '-c', burn, 'sh'],
      `
      const me = proc.selfProcess();
      process.stdout.write(JSON.stringify({ local: process.pid, me, alive: proc.isProcessAlive(me.pid, me.start), stat: (await import('node:fs')).readFileSync('/proc/self/stat', 'utf8') }));`,
    );
    expect(r.local).toBe(local + 1);
    const me = r.me as { pid: number; start: string };
    // The host pid: /proc/self there is the host's entry for it, with the same start time.
    expect(me.pid).not.toBe(local + 1);
    expect(String(r.stat).startsWith(`${me.pid} `)).toBe(true);
    expect(me.start).toBe(parseProcStat(String(r.stat))!.startTime);
    expect(r.alive).toBe(true);
  });

  it('under bubblewrap, whose /proc shows only its own namespace, no fleet process is judged dead', () => {
    const me = selfProcess();
    const fleetNs = readlinkSync('/proc/self/ns/pid');
    const bwrap = [
      'bwrap',
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--unshare-user',
      '--unshare-pid',
      '--',
    ];
    const r = inside(
      bwrap,
      `process.stdout.write(JSON.stringify({ runner: proc.isProcessAlive(${me.pid}, ${JSON.stringify(me.start)}), shows: proc.procShowsFleet() }));`,
      { ...process.env, FLOTILLA_PIDNS: fleetNs },
    );
    // This test's own process is not in that /proc, and is alive: nothing there proves a death.
    expect(r).toEqual({ runner: true, shows: false });
  });

  it('a pid with no /proc entry is dead, this process alive', () => {
    expect(isProcessAlive(process.pid, processStartTime(process.pid))).toBe(true);
    // A pid that is no process: ENOENT, proof of death.
    const unused =
      Math.max(
        ...readdirSync('/proc')
          .filter((n) => /^\d+$/.test(n))
          .map(Number),
      ) + 100_000;
    expect(isProcessAlive(unused)).toBe(false);
  });
});
