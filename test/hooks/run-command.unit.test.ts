import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hookEnv } from '../../src/hooks/env.js';
import { runHookCommand } from '../../src/hooks/run-command.js';
import { tempDir } from '../helpers/fleet.js';
import { eventually } from '../helpers/tmux.js';
import { isRunning } from './helpers.js';

let tmp: { dir: string; cleanup(): void };
beforeEach(() => {
  tmp = tempDir('flotilla-hook-');
});
afterEach(() => tmp.cleanup());

const env = () => hookEnv(process.env, { agentId: 'a-1', agentName: 'worker' });

describe('runHookCommand', () => {
  it('runs sh -c in the given cwd with the JSON on stdin and reports exit code and output', async () => {
    const r = await runHookCommand({
      command: 'cat > input.json; echo "out $(pwd)"; echo oops >&2; exit 3',
      timeoutSecs: 10,
      env: env(),
      stdin: '{"tool_name":"edit"}\n',
      cwd: tmp.dir,
    });
    expect(r).toMatchObject({
      exitCode: 3,
      signal: null,
      timedOut: false,
      stdout: `out ${tmp.dir}\n`,
      stderr: 'oops\n',
    });
    expect(r.pid).toBeGreaterThan(0);
    expect(JSON.parse(readFileSync(join(tmp.dir, 'input.json'), 'utf8'))).toEqual({ tool_name: 'edit' });
  });

  it('runs in its own process group, and on timeout kills the whole group (a child ignoring SIGTERM too)', async () => {
    const pids = join(tmp.dir, 'pids');
    const r = await runHookCommand({
      // The child ignores SIGTERM, so only the SIGKILL after the grace period ends it.
      command: `(trap '' TERM; exec sleep 60) & echo "$$ $! $(ps -o pgid= -p $$)" > ${pids}; wait`,
      // Long enough for sh to fork and run ps before it is killed, on a loaded machine too.
      timeoutSecs: 5,
      killGraceMs: 300,
      env: env(),
      stdin: '',
      cwd: tmp.dir,
    });
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    const [shPid, childPid, pgid] = readFileSync(pids, 'utf8').trim().split(/\s+/).map(Number);
    expect(shPid).toBe(r.pid);
    expect(pgid).toBe(r.pid);
    expect(childPid).toBeGreaterThan(0);
    expect(isRunning(shPid!)).toBe(false);
    expect(isRunning(childPid!)).toBe(false);
  });

  it('returns when sh exits even if a background child still holds its output pipes', async () => {
    // Had it waited for the pipes the hour-long sleep holds, the 40 s timeout would fire.
    const r = await runHookCommand({
      command: 'sleep 3600 & echo started; exit 0',
      timeoutSecs: 40,
      env: env(),
      stdin: '',
      cwd: tmp.dir,
    });
    expect(r).toMatchObject({ exitCode: 0, timedOut: false, stdout: 'started\n' });
    process.kill(-r.pid!, 'SIGKILL');
  });

  it('caps output and says how much was dropped', async () => {
    const r = await runHookCommand({
      command: "head -c 100000 /dev/zero | tr '\\0' a",
      timeoutSecs: 10,
      env: env(),
      stdin: '',
      cwd: tmp.dir,
      maxOutputBytes: 1000,
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.startsWith('a'.repeat(1000) + '\n[flotilla: 99000 more bytes of hook output dropped]')).toBe(true);
  });

  it('reports a command that cannot start instead of throwing', async () => {
    const r = await runHookCommand({
      command: 'true',
      timeoutSecs: 5,
      env: env(),
      stdin: '',
      cwd: join(tmp.dir, 'missing'),
    });
    expect(r.exitCode).toBeNull();
    expect(r.error).toMatch(/could not start: .*ENOENT/);
  });

  it('kills the group when the abort signal fires', async () => {
    const ac = new AbortController();
    const pidFile = join(tmp.dir, 'pid');
    const running = runHookCommand({
      command: `sleep 60 & echo $! > ${pidFile}; wait`,
      timeoutSecs: 60,
      env: env(),
      stdin: '',
      cwd: tmp.dir,
      signal: ac.signal,
    });
    await eventually(
      () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim().length > 0,
      10_000,
      'the hook to start',
    );
    ac.abort();
    const r = await running;
    expect(r.signal).toBe('SIGTERM');
    expect(r.timedOut).toBe(false);
    expect(isRunning(Number(readFileSync(pidFile, 'utf8')))).toBe(false);
  });
});

describe('hookEnv', () => {
  it('holds PATH and the FLOTILLA_* variables only', () => {
    const base = { PATH: '/x/bin:/usr/bin', HOME: '/home/u', SECRET: 's3cr3t', FLOTILLA_ROOT: '/r' };
    expect(hookEnv(base, { agentId: 'a', agentName: 'n', parentId: 'p', toolName: 'shell' })).toEqual({
      PATH: '/x/bin:/usr/bin',
      FLOTILLA_AGENT_ID: 'a',
      FLOTILLA_AGENT_NAME: 'n',
      FLOTILLA_PARENT_ID: 'p',
      FLOTILLA_TOOL_NAME: 'shell',
    });
    expect(hookEnv(base, { agentId: 'a', agentName: 'n', parentId: null, exitReason: 'max_turns' })).toEqual({
      PATH: '/x/bin:/usr/bin',
      FLOTILLA_AGENT_ID: 'a',
      FLOTILLA_AGENT_NAME: 'n',
      FLOTILLA_EXIT_REASON: 'max_turns',
    });
    expect(hookEnv({}, { agentId: 'a', agentName: 'n' }).PATH).toBe('/usr/local/bin:/usr/bin:/bin');
  });
});
