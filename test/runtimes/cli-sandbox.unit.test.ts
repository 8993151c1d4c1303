import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { cliSandbox } from '../../src/harness/cli-host/sandboxed-cli.js';
import { PERMISSION_MODES } from '../../src/policy/permission-mode.js';
import { bubblewrapArgv, bubblewrapUserNamespace, NESTING_ID } from '../../src/tools/sandbox.js';
import { tempDir } from '../helpers/fleet.js';
import { requireTool } from '../helpers/requires.js';

/**
 * Where each CLI runs (docs/security-fleet.md, "Vendor runtimes"): in Flotilla's bubblewrap in every
 * mode, Codex's own bubblewrap nested inside in `plan`, `default` and `accept_edits`. On a
 * machine that forbids a user namespace inside another, Codex in those modes runs outside and
 * its pane is told why; the other CLIs and modes are unaffected.
 */
let dir: { dir: string; cleanup(): void } | undefined;
afterEach(() => {
  dir?.cleanup();
  dir = undefined;
});

const config = configSchema.parse({ security: { sandbox: 'bubblewrap' } });

describe("a vendor CLI's sandbox", () => {
  it("here, where a bubblewrap nests: every runtime in every mode runs in Flotilla's", () => {
    const bwrap = requireTool('bwrap');
    for (const runtime of ['claude', 'codex', 'gemini'] as const) {
      for (const mode of PERMISSION_MODES)
        expect({ runtime, mode, ...cliSandbox(config, process.env, runtime, mode) }).toEqual({ runtime, mode, bwrap });
    }
  });

  it('a nested bubblewrap starts; as root only with a sandbox user other than root', () => {
    const bwrap = requireTool('bwrap');
    const inner = [bwrap, '--unshare-user', '--unshare-net', '--ro-bind', '/', '/', 'true'];
    const run = (id?: number) => {
      const [file, ...args] = bubblewrapArgv(
        {
          writable: [],
          readOnly: [],
          network: true,
          bwrap,
          userNamespace: bubblewrapUserNamespace(bwrap),
          id,
          direct: true,
        },
        inner,
      );
      return spawnSync(file!, args, { encoding: 'utf8', timeout: 10_000 });
    };
    const root = process.geteuid?.() === 0;
    const nested = run(root ? NESTING_ID : undefined);
    expect(nested.stderr).toBe('');
    expect(nested.status).toBe(0);
    // Root's own id cannot be mapped again without the capability the sandbox dropped.
    if (root) expect(run().stderr).toMatch(/setting up uid map: Operation not permitted/);
  });

  it('where nesting is forbidden: Codex in plan, default and accept_edits runs outside, saying why', () => {
    dir = tempDir('flotilla-no-nesting-');
    // A bwrap that runs anything but a bubblewrap inside it (which cuts the network).
    const fake = join(dir.dir, 'bwrap');
    writeFileSync(
      fake,
      '#!/bin/sh\ncase "$*" in *--unshare-net*) echo "bwrap: setting up uid map: Operation not permitted" >&2; exit 1;; esac\nexit 0\n',
    );
    chmodSync(fake, 0o755);
    const env = { ...process.env, PATH: `${dir.dir}:${process.env.PATH ?? ''}` };
    for (const mode of PERMISSION_MODES) {
      const s = cliSandbox(config, env, 'codex', mode);
      if (mode === 'dont_ask' || mode === 'bypass_permissions') expect(s).toEqual({ bwrap: fake });
      else
        expect(s).toEqual({
          outside: expect.stringMatching(
            new RegExp(`^flotilla: Codex runs outside Flotilla's sandbox in ${mode} mode: .*credentials`),
          ),
        });
      expect(cliSandbox(config, env, 'claude', mode)).toEqual({ bwrap: fake });
    }
  });
});
