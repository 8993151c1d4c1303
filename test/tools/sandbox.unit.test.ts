import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createShellTool } from '../../src/tools/shell.js';
import { bubblewrapArgv, findBubblewrap } from '../../src/tools/sandbox.js';
import { tempDir } from '../helpers/fleet.js';

let tmp: { dir: string; cleanup(): void };
afterEach(() => tmp?.cleanup());

describe('bubblewrap sandbox for shell commands', () => {
  it('writes only in the cwd and memory dir; the fleet root stays read-only', async () => {
    tmp = tempDir();
    const project = join(tmp.dir, 'project');
    const fleetRoot = join(project, '.flotilla');
    const memory = join(fleetRoot, 'agent-memory', 'worker');
    const outside = join(tmp.dir, 'outside');
    for (const d of [project, memory, outside, join(fleetRoot, 'state')]) mkdirSync(d, { recursive: true });
    const spec = { writable: [project, memory], readOnly: [fleetRoot], network: false, bwrap: findBubblewrap() };
    const shell = createShellTool({ timeoutSecs: 20, env: process.env, wrap: (argv) => bubblewrapArgv(spec, argv) });
    const run = (command: string) =>
      shell.execute({ command }, { signal: new AbortController().signal, cwd: project, agentId: 't' });

    const r = await run(
      `echo in > ok.txt; echo mem > ${memory}/MEMORY.md; echo out > ${outside}/x 2>&1; echo st > ${fleetRoot}/state/x 2>&1; echo done`,
    );
    expect(r.output).toContain('done');
    expect(readFileSync(join(project, 'ok.txt'), 'utf8')).toBe('in\n');
    expect(readFileSync(join(memory, 'MEMORY.md'), 'utf8')).toBe('mem\n');
    expect(existsSync(join(outside, 'x'))).toBe(false);
    expect(existsSync(join(fleetRoot, 'state', 'x'))).toBe(false);
    expect(r.output).toMatch(/Read-only file system/);
  });

  it('a background job whose output went to a file gets no footer; one that still holds the output does', async () => {
    tmp = tempDir();
    const spec = { writable: [tmp.dir], readOnly: [], network: false, bwrap: findBubblewrap() };
    const groups: number[] = [];
    const shell = createShellTool({
      timeoutSecs: 20,
      env: process.env,
      wrap: (argv) => bubblewrapArgv(spec, argv),
      track: { started: (g) => groups.push(g), ended: () => undefined },
    });
    const run = (command: string) =>
      shell.execute({ command }, { signal: new AbortController().signal, cwd: tmp.dir, agentId: 't' });
    try {
      expect((await run('nohup sleep 60 > job.log 2>&1 & echo started')).output).toBe('started\n[exit code 0]');
      expect((await run('sleep 60 & echo started')).output).toMatch(
        /^started\n\[exit code 0\]\n\[processes it started in the background still hold its output/,
      );
    } finally {
      // Each sandbox lives on with its sleep (as an agent's does until the agent ends): end them.
      for (const g of groups)
        try {
          process.kill(-g, 'SIGKILL');
        } catch {
          /* gone */
        }
    }
  });

  it('has no network interfaces but loopback unless allowed', async () => {
    tmp = tempDir();
    const spec = { writable: [tmp.dir], readOnly: [], bwrap: findBubblewrap() };
    const ifaces = async (network: boolean) => {
      const sh = createShellTool({
        timeoutSecs: 20,
        env: process.env,
        wrap: (argv) => bubblewrapArgv({ ...spec, network }, argv),
      });
      const r = await sh.execute(
        { command: 'tail -n +3 /proc/net/dev | cut -d: -f1' },
        { signal: new AbortController().signal, cwd: tmp.dir, agentId: 't' },
      );
      return r.output
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => /^[a-z][\w.-]*$/.test(l))
        .sort();
    };
    expect(await ifaces(false)).toEqual(['lo']);
    expect((await ifaces(true)).length).toBeGreaterThan(1);
  });

  it('a directory to hide that is removed before bwrap starts (a tmux server ending): the command still runs, once', async () => {
    tmp = tempDir();
    // Outside /tmp, which the sandbox covers with its own tmpfs: there bwrap cannot make the mount point again.
    const gone = mkdtempSync('/var/tmp/flotilla-test-');
    try {
      const spec = { writable: [tmp.dir], readOnly: [], network: false, bwrap: findBubblewrap() };
      let wraps = 0;
      const shell = createShellTool({
        timeoutSecs: 20,
        env: process.env,
        wrap: (argv) => {
          const out = bubblewrapArgv({ ...spec, hidden: [gone] }, argv);
          if (++wraps === 1) rmSync(gone, { recursive: true });
          return out;
        },
      });
      const r = await shell.execute(
        { command: 'echo ran >> runs.txt; echo hello' },
        { signal: new AbortController().signal, cwd: tmp.dir, agentId: 't' },
      );
      expect(r.output).toBe('hello\n[exit code 0]');
      expect(readFileSync(join(tmp.dir, 'runs.txt'), 'utf8')).toBe('ran\n');
      expect(wraps).toBe(2);
    } finally {
      rmSync(gone, { recursive: true, force: true });
    }
  });
});
