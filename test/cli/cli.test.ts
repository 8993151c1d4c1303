import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { flotilla } from '../helpers/cli.js';
import { tempFleet } from '../helpers/fleet.js';

describe('CLI conventions', () => {
  it('--version and -V print the version in package.json', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    for (const flag of ['--version', '-V']) {
      const r = await flotilla([flag]);
      expect([r.exitCode, String(r.stdout)]).toEqual([0, version]);
    }
  });

  it('an unknown command exits 2 with a one-line error and a suggestion', async () => {
    const r = await flotilla(['confg']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe("flotilla: unknown command 'confg' (Did you mean config?) — run 'flotilla --help' for usage");
  });

  it('an unknown option exits 2', async () => {
    const r = await flotilla(['config', 'show', '--jsn']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/^flotilla: unknown option '--jsn'/);
  });

  it("a subcommand's usage error points to that subcommand's help", async () => {
    const option = await flotilla(['send', '--bogus', 'x']);
    expect(option.exitCode).toBe(2);
    expect(option.stderr).toBe("flotilla: unknown option '--bogus' — run 'flotilla send --help' for usage");
    const nested = await flotilla(['agents', 'show']);
    expect(nested.exitCode).toBe(2);
    expect(nested.stderr).toBe(
      "flotilla: missing required argument 'name' — run 'flotilla agents show --help' for usage",
    );
  });

  it('reading the inbox of an unknown agent says how to find one, not whom to send to', async () => {
    const f = tempFleet();
    try {
      const r = await flotilla(['--root', f.layout.root, 'inbox', 'nosuch'], { env: { FLOTILLA_AGENT_ID: '' } });
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toBe(
        "flotilla: no agent id starts with 'nosuch' — run 'flotilla status' to list agents, or leave the id out to read the human inbox",
      );
    } finally {
      f.cleanup();
    }
  });

  it('an unknown model provider is named once, with the forms that work', async () => {
    const f = tempFleet();
    try {
      const r = await flotilla(['--root', f.layout.root, 'run', '--model', 'nope:x', 'hi'], {
        cwd: f.project,
        env: { FLOTILLA_AGENT_ID: '' },
      });
      expect(r.exitCode).toBe(1);
      const lines = String(r.stderr)
        .split('\n')
        .filter((line) => line.startsWith('flotilla: '));
      const error = lines.find((line) => line.includes("'nope:x'"));
      expect(error).toMatch(
        /^flotilla: invalid model 'nope:x': unknown provider 'nope' — use provider:model-id \(anthropic:<id>/,
      );
      expect(error!.split("'nope:x'")).toHaveLength(2);
    } finally {
      f.cleanup();
    }
  });

  it('config show --json parses and names sources; doctor --json parses', async () => {
    const f = tempFleet();
    try {
      const r = await flotilla(['--root', f.layout.root, 'config', 'show', '--json'], {
        env: { FLOTILLA_LIMITS_MAX_DEPTH: '2' },
      });
      expect(r.exitCode).toBe(0);
      const shown = JSON.parse(String(r.stdout)) as Record<string, { value: unknown; source: string }>;
      expect(shown['limits.max_depth']).toEqual({ value: 2, source: 'env FLOTILLA_LIMITS_MAX_DEPTH' });
      expect(shown['limits.max_running']).toEqual({ value: 8, source: 'default' });
      const d = await flotilla(['--root', f.layout.root, 'doctor', '--json']);
      const checks = JSON.parse(String(d.stdout)) as { name: string; ok: boolean }[];
      expect(checks.map((c) => c.name)).toEqual(expect.arrayContaining(['node', 'tmux', 'fleet root']));
      expect(checks.find((c) => c.name === 'node')!.ok).toBe(true);
      // Linux CI: lineage is enforced by a pid namespace per tool command (docs/security.md).
      expect(checks.find((c) => c.name.startsWith('lineage'))!.ok).toBe(true);
    } finally {
      f.cleanup();
    }
  });

  it('config schema prints a JSON Schema with descriptions', async () => {
    const r = await flotilla(['config', 'schema']);
    const schema = JSON.parse(String(r.stdout)) as {
      properties: { limits: { properties: { max_depth: { description: string; default: number } } } };
    };
    expect(schema.properties.limits.properties.max_depth.description).toMatch(/spawn depth/);
    expect(schema.properties.limits.properties.max_depth.default).toBe(3);
    // Descriptions say what a setting does, never a section number of the design.
    expect(String(r.stdout)).not.toContain('§');
  });
});
