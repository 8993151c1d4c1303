import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/fleet.js';
import { eventually } from '../helpers/tmux.js';
import { runTool } from '../../src/tools/run-tool.js';
import { createShellTool } from '../../src/tools/shell.js';
import { ctxFor, hasPid, isDead, readPid } from './process-helpers.js';

let tmp: { dir: string; cleanup(): void };
beforeEach(() => {
  tmp = tempDir('flotilla-shell-');
});
afterEach(() => tmp.cleanup());

const shell = (extra: Partial<Parameters<typeof createShellTool>[0]> = {}) =>
  createShellTool({ timeoutSecs: 30, env: process.env, killGraceMs: 500, ...extra });

describe('shell', () => {
  it('reports output and exit code, with stdout and stderr interleaved in order', async () => {
    const r = await shell().execute({ command: 'echo one; echo two >&2; echo three; exit 3' }, ctxFor(tmp.dir));
    expect(r.output).toBe('one\ntwo\nthree\n[exit code 3]');
    expect(r.meta).toMatchObject({ exitCode: 3, timedOut: false });
    expect(r.isError).toBe(false);
  });

  it('runs in the context cwd with the injected env and stdin closed', async () => {
    const r = await shell({ env: { ...process.env, FLOTILLA_TEST_VAR: 'injected' } }).execute(
      { command: 'pwd; echo "$FLOTILLA_TEST_VAR"; cat; echo after-cat' },
      ctxFor(tmp.dir),
    );
    expect(r.output).toBe(`${tmp.dir}\ninjected\nafter-cat\n[exit code 0]`);
  });

  it('says (no output) for a silent command', async () => {
    const r = await shell().execute({ command: 'true' }, ctxFor(tmp.dir));
    expect(r.output).toBe('(no output)\n[exit code 0]');
  });

  it('timeout kills the whole process group, grandchildren included', async () => {
    const pidfile = join(tmp.dir, 'pid');
    // 5 s: the shell must get to write the pid file before the timeout, on a loaded machine too.
    const r = await shell().execute(
      { command: `sleep 60 & echo $! > ${pidfile}; echo started; wait`, timeout_secs: 5 },
      ctxFor(tmp.dir),
    );
    expect(r.isError).toBe(true);
    expect(r.output).toContain('started\n[timed out after 5 s');
    expect(r.meta).toMatchObject({ timedOut: true });
    const grandchild = readPid(pidfile);
    await eventually(() => isDead(grandchild), 5000, `grandchild ${grandchild} to die`);
  });

  it('escalates to SIGKILL for a group that ignores SIGTERM', async () => {
    const pidfile = join(tmp.dir, 'pid');
    // The group ignores SIGTERM and would live for an hour: without the SIGKILL escalation this
    // never returns and the test times out.
    const r = await shell().execute(
      // 5 s: on a busy machine the shell must get to write the pid file before the timeout.
      {
        command: `trap '' TERM; sleep 3600 > /dev/null 2>&1 & echo $! > ${pidfile}; echo started; wait; wait`,
        timeout_secs: 5,
      },
      ctxFor(tmp.dir),
    );
    expect(r.meta).toMatchObject({ timedOut: true });
    expect(r.output).toContain('started\n');
    const grandchild = readPid(pidfile);
    await eventually(() => isDead(grandchild), 5000, `TERM-ignoring grandchild ${grandchild} to die`);
  });

  it('an aborted signal kills a running command and its background children', async () => {
    const ac = new AbortController();
    const pidfile = join(tmp.dir, 'pid');
    // An hour-long sleep: unless the abort kills it, this never returns and the test times out.
    const running = shell().execute({ command: `sleep 3600 & echo $! > ${pidfile}; wait` }, ctxFor(tmp.dir, ac.signal));
    // Wait for the pid itself, not the file: the shell creates the file before echo writes to
    // it, and an abort in between would leave nothing to check.
    await eventually(() => hasPid(pidfile), 30_000, 'the command to start');
    ac.abort();
    const r = await running;
    expect(r.isError).toBe(true);
    expect(r.output).toContain('[cancelled');
    await eventually(() => isDead(readPid(pidfile)), 5000, 'sleep 3600 to die');
  });

  it('does not run at all when the signal is already aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    const marker = join(tmp.dir, 'ran');
    const r = await shell().execute({ command: `touch ${marker}` }, ctxFor(tmp.dir, ac.signal));
    expect(r.meta).toMatchObject({ aborted: true });
    expect(existsSync(marker)).toBe(false);
  });

  it('passes argv through the wrap hook', async () => {
    const r = await shell({ wrap: (argv) => ['env', 'WRAPPED=yes', ...argv] }).execute(
      { command: 'echo "$WRAPPED"' },
      ctxFor(tmp.dir),
    );
    expect(r.output).toBe('yes\n[exit code 0]');
  });

  it('returns when the command exits even if a background process holds the output', async () => {
    const pidfile = join(tmp.dir, 'pid');
    // Had it waited for the pipes the hour-long sleep holds, this would time out.
    const r = await shell().execute({ command: `sleep 3600 & echo $! > ${pidfile}; echo started` }, ctxFor(tmp.dir));
    expect(r.output).toMatch(/^started\n\[exit code 0\]\n\[processes it started in the background/);
    process.kill(readPid(pidfile), 'SIGKILL');
  });

  it('keeps head and tail of huge output within the central cap', async () => {
    const tool = shell({ maxCaptureBytes: 200_000 });
    const r = await runTool(tool, { command: 'echo FIRST; seq 1 200000; echo LAST' }, ctxFor(tmp.dir), {
      maxOutputBytes: 2000,
    });
    expect(Buffer.byteLength(r.output)).toBeLessThan(2600);
    expect(r.output.startsWith('FIRST\n1\n2\n')).toBe(true);
    expect(r.output.endsWith('200000\nLAST\n[exit code 0]')).toBe(true);
    expect(r.output).toMatch(/cut from the middle .* redirect the output to a file/);
    expect(r.meta).toMatchObject({ truncated: true, exitCode: 0 });
  });

  it('rejects a timeout_secs above the maximum through runTool', async () => {
    const r = await runTool(shell({ maxTimeoutSecs: 60 }), { command: 'true', timeout_secs: 1000 }, ctxFor(tmp.dir), {
      maxOutputBytes: 10_000,
    });
    expect(r.isError).toBe(true);
    expect(r.output).toContain('- timeout_secs: Too big: expected number to be <=60, received 1000');
  });
});
