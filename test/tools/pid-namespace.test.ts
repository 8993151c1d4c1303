import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ancestors, selfPid } from '../../src/fleet/proc.js';
import { pidNamespace, pidNamespaceArgv } from '../../src/tools/sandbox.js';
import { createShellTool } from '../../src/tools/shell.js';
import { tempDir, tempFleet } from '../helpers/fleet.js';
import { killLeftoverGroups, trackToolGroups } from '../../src/lifecycle/tool-groups.js';
import { eventually } from '../helpers/tmux.js';
import { ctxFor, isDead, readPid } from './process-helpers.js';

let tmp: { dir: string; cleanup(): void };
beforeEach(() => {
  tmp = tempDir('flotilla-pidns-');
});
afterEach(() => tmp.cleanup());

const shell = (timeoutSecs = 30) =>
  createShellTool({ timeoutSecs, env: process.env, killGraceMs: 500, wrap: (argv) => pidNamespaceArgv(argv) });
// The orphan writes its host pid (the shell's own /proc/self, read by a builtin), then lives on.
const orphan = (file: string, how: string) => {
  writeFileSync(
    `${file}.sh`,
    `read -r p _ < /proc/self/stat; echo $p > ${file}.tmp; mv ${file}.tmp ${file}; exec sleep 30\n`,
  );
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
  ])(
    'a process detached with %s stays a descendant of the harness, and the call returns at once',
    async (_name, how) => {
      const file = join(tmp.dir, 'pid');
      const r = await shell().execute({ command: `${orphan(file, how)}\necho started` }, ctxFor(tmp.dir));
      // It returns as soon as the command exits. Its output went to /dev/null, so the footer does
      // not tell the model to redirect it (the namespace's wrappers hold the pipe, not the orphan).
      expect(r.output).toBe('started\n[exit code 0]');
      await eventually(() => existsSync(file), 20_000, 'the orphan to write its pid');
      const pid = readPid(file);
      expect(ancestors(pid)).toContain(selfPid());
      process.kill(pid, 'SIGKILL');
    },
  );

  it('a background process that still holds the output gets the footer that says so', async () => {
    const file = join(tmp.dir, 'held');
    const r = await shell().execute({ command: `${orphan(file, 'setsid -f CMD')}\necho started` }, ctxFor(tmp.dir));
    expect(r.output).toMatch(
      /^started\n\[exit code 0\]\n\[processes it started in the background still hold its output/,
    );
    await eventually(() => existsSync(file), 20_000, 'the orphan to write its pid');
    process.kill(readPid(file), 'SIGKILL');
  });

  it('reports exit codes and output as before; a timeout kills a setsid escapee too', async () => {
    expect((await shell().execute({ command: 'echo out; echo err >&2; exit 3' }, ctxFor(tmp.dir))).output).toBe(
      'out\nerr\n[exit code 3]',
    );
    const file = join(tmp.dir, 'esc');
    // The command waits for the escapee's pid before it idles, so a slow machine cannot time it
    // out before there is an escapee to check.
    const r = await shell(5).execute(
      {
        command: `${orphan(file, 'setsid -f CMD > /dev/null 2>&1')}; while [ ! -e ${file} ]; do sleep 0.05; done; echo ready; sleep 60`,
      },
      ctxFor(tmp.dir),
    );
    expect(r.isError).toBe(true);
    expect(r.output).toMatch(/^ready\n[\s\S]*timed out after 5 s/);
    const pid = readPid(file);
    await eventually(() => isDead(pid), 10_000, 'the escapee to die with its namespace');
  });

  it('when its agent ends, whatever its commands left behind is killed with the recorded group', async () => {
    const fleet = tempFleet();
    try {
      const file = join(tmp.dir, 'left');
      const tool = createShellTool({
        timeoutSecs: 30,
        env: process.env,
        wrap: (argv) => pidNamespaceArgv(argv),
        track: trackToolGroups(fleet.layout, 'agent-abc123'),
      });
      const r = await tool.execute(
        { command: `${orphan(file, 'setsid -f CMD > /dev/null 2>&1')}\necho started` },
        ctxFor(tmp.dir),
      );
      expect(r.output).toMatch(/^started/);
      await eventually(() => existsSync(file), 20_000, 'the orphan to write its pid');
      const pid = readPid(file);
      // finishAgent and the reaper both call this for an agent that ended.
      expect(killLeftoverGroups(fleet.layout, 'agent-abc123')).toHaveLength(1);
      await eventually(() => isDead(pid), 10_000, 'the orphan to die with its namespace');
    } finally {
      fleet.cleanup();
    }
  });
});
