import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually, testSocketDir } from '../helpers/tmux.js';
import { tempDir } from '../helpers/fleet.js';
import { completionsFrom } from '../spawn/helpers.js';
import { TARGETS } from './targets.js';
import { requireTool } from '../helpers/requires.js';
import { vendorFleets } from './vendor-suite.js';

/**
 * A vendor CLI inside Flotilla's bubblewrap (docs/security-fleet.md "Vendor runtimes"): each CLI,
 * started by spawn-agent as a person's spawn starts it with `security.sandbox: bubblewrap`,
 * in real tmux whose socket lives under a TMUX_TMPDIR outside /tmp, is told by its model (the
 * fake vendor API replaying sandbox-probe.yaml) to write the fleet root, plant a git hook,
 * move `.git`, and reach the tmux server by `-L` and by its socket path (`run-shell` on the
 * host), and looks for TMUX/TMUX_PANE; then to report to its parent through the
 * fleet's MCP tool. Every probe fails and nothing changed on the host, and the agent still
 * reports and completes: its hooks and MCP server reach the fleet through its door.
 */
let marks: { dir: string; cleanup(): void } | undefined;
const ENV = ['SP_TMUX_TMPDIR', 'SP_TMUX_NAME', 'SP_TMUX_SOCKET', 'SP_MARKS'];
const fleets = vendorFleets(() => {
  marks?.cleanup();
  marks = undefined;
  for (const k of ENV) delete process.env[k];
});

// The sandbox is what these tests prove: without bwrap, fail saying what to install.
beforeAll(() => {
  requireTool('bwrap');
});

describe(
  "a vendor CLI in the sandbox cannot reach the fleet's controls, and still does its work",
  { timeout: 600_000 },
  () => {
    // Codex in accept_edits runs its commands in its own bubblewrap, nested in Flotilla's.
    it.each([
      ['claude', 'dont_ask'],
      ['codex', 'dont_ask'],
      ['codex', 'accept_edits'],
      ['gemini', 'dont_ask'],
    ] as const)('%s in %s', async (name, mode) => {
      const t = TARGETS[name]();
      const tmuxTmpdir = testSocketDir();
      const f = await fleets.open({
        ...t,
        script: 'sandbox-probe.yaml',
        tmuxTmpdir,
        config: 'security:\n  sandbox: bubblewrap\n',
        definitions: { a: `permissions:\n  permission_mode: ${mode}\n` },
      });
      marks = tempDir('flotilla-host-marks-');
      await execa('git', ['init', '-q', f.project]);
      const socket = join(tmuxTmpdir, `tmux-${process.getuid?.() ?? 0}`, f.tmux.socket);
      // The fake vendor renders the script's {{env.…}} from this process's environment.
      Object.assign(process.env, {
        SP_TMUX_TMPDIR: tmuxTmpdir,
        SP_TMUX_NAME: f.tmux.socket,
        SP_TMUX_SOCKET: socket,
        SP_MARKS: marks.dir,
      });

      const id = await f.spawnChild('a', `${name}-boxed-${mode.replace('_', '-')}`, 'probe and report', t.spawnArgs);
      await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 480_000, 'the completion');
      expect(completionsFrom(f, 'lead-parent', id)[0]!).toMatchObject({ status: 'completed' });
      expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toContain('Final answer: probed and reported');
      // Its MCP server, joined through the door, delivered as the agent.
      expect(f.mail('lead-parent').filter((m) => m.kind === 'message')).toEqual([
        expect.objectContaining({ from: id, summary: 'contained', body: 'report from inside the sandbox' }),
      ]);

      const probes = Object.fromEntries(
        readFileSync(join(f.project, 'probe.txt'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => l.split(':') as [string, string]),
      );
      expect(probes).toEqual({
        'fleet-write': '1',
        'git-hook': '1',
        'git-move': '1',
        'tmux-L': '1',
        'tmux-S': '1',
        'socket-seen': '1',
        'tmux-env-absent': '0',
      });
      // Judged on the host: the server was there all along and nothing was written or run.
      expect(existsSync(socket)).toBe(true);
      expect((await f.tmux.tmux('list-panes', '-a', '-F', '#{pane_id}')).trim()).not.toBe('');
      expect(existsSync(join(f.layout.root, 'probe-fleet'))).toBe(false);
      expect(existsSync(join(f.project, '.git', 'hooks', 'probe-hook'))).toBe(false);
      expect(existsSync(join(f.project, '.git'))).toBe(true);
      expect(readdirSync(marks.dir)).toEqual([]);
    });
  },
);
