import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHere } from '../../src/harness/cli-host/cli-pane.js';
import { agentEnding } from '../../src/harness/cli-host/ending.js';
import { markedArgv, startContained } from '../../src/harness/cli-host/sandboxed-cli.js';
import { findBubblewrap } from '../../src/tools/sandbox.js';
import { tempDir } from '../helpers/fleet.js';
import { eventually } from '../helpers/tmux.js';

let tmp: { dir: string; cleanup(): void } | undefined;
// The CLI as this process's child, as a person's own `flotilla run` starts it.
const here = { start: startHere, say: () => undefined };
afterEach(() => tmp?.cleanup());

describe('a vendor CLI started in the sandbox', () => {
  it('a directory to hide removed before bwrap made its mounts (a tmux server ending): the CLI is started again and runs once', async () => {
    tmp = tempDir();
    const dir = tmp.dir;
    // Outside /tmp, which the sandbox covers with its own tmpfs: there bwrap cannot make the mount point again.
    const gone = mkdtempSync('/var/tmp/flotilla-test-');
    try {
      const spec = { writable: [dir], readOnly: [], network: false, bwrap: findBubblewrap() };
      let argvs = 0;
      const cli = {
        env: process.env,
        argv: () => {
          const out = markedArgv({ ...spec, hidden: [gone] }, [
            'sh',
            '-c',
            'echo ran >> runs.txt; [ -e /proc/self/fd/3 ] && echo fd3-open >> runs.txt; exit 0',
          ]);
          if (++argvs === 1) rmSync(gone, { recursive: true });
          return out;
        },
      };
      const children: number[] = [];
      const started = await startContained(here, cli, dir, (c) => children.push(c.pid ?? -1));
      expect(await started.exited).toEqual({ code: 0, signal: null });
      // Once, and without the marker's fd.
      expect(readFileSync(join(dir, 'runs.txt'), 'utf8')).toBe('ran\n');
      expect(children).toHaveLength(2);
    } finally {
      rmSync(gone, { recursive: true, force: true });
    }
  });

  it('a CLI that exits 1 on its own is not started again', async () => {
    tmp = tempDir();
    const dir = tmp.dir;
    const spec = { writable: [dir], readOnly: [], network: false, bwrap: findBubblewrap() };
    const cli = { env: process.env, argv: () => markedArgv(spec, ['sh', '-c', 'echo ran >> runs.txt; exit 1']) };
    const started = await startContained(here, cli, dir, () => undefined);
    expect(await started.exited).toEqual({ code: 1, signal: null });
    expect(readFileSync(join(dir, 'runs.txt'), 'utf8')).toBe('ran\n');
  });

  it('a stop reaches the CLI itself, not only bwrap: it writes what it still had to and ends with its own status', async () => {
    tmp = tempDir();
    const dir = tmp.dir;
    const spec = { writable: [dir], readOnly: [], network: false, bwrap: findBubblewrap() };
    // A CLI that writes its last lines when asked to end, as Claude Code writes its session file.
    const script = 'trap "echo written >> end.txt; exit 7" TERM; echo up > up.txt; while :; do sleep 0.05; done';
    const cli = { env: process.env, argv: () => markedArgv(spec, ['sh', '-c', script]) };
    const ending = agentEnding();
    const started = await startContained(here, cli, dir, (c) => ending.setChild(c, true));
    await eventually(() => existsSync(join(dir, 'up.txt')), 20_000, 'the CLI running');
    ending.stop('cancelled (SIGTERM)');
    expect(await started.exited).toEqual({ code: 7, signal: null });
    expect(readFileSync(join(dir, 'end.txt'), 'utf8')).toBe('written\n');
    expect(ending.current()).toEqual({ status: 'cancelled', reason: 'cancelled (SIGTERM)' });
  });
});
