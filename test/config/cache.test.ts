import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { flotilla } from '../helpers/cli.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

/**
 * The effective config is cached (src/config/cached.ts) so that hot commands load neither zod
 * nor YAML. `send` and `status` run from their own bundles and every other command from the
 * full CLI, each with its own copy of the cache code: they must all read one entry, and an
 * edited config file must be seen by the next command of any kind.
 */
let fleet: TempFleet | undefined;
afterEach(() => fleet?.cleanup());

describe('the config cache', () => {
  it('is shared by the fast commands and the full CLI: written once, then read by each', async () => {
    fleet = tempFleet();
    const env = {
      FLOTILLA_ROOT: fleet.layout.root,
      FLOTILLA_AGENT_ID: '',
      XDG_CONFIG_HOME: join(fleet.project, 'xdg'),
    };
    // With a config file, `send` reads its inbox settings through the cache too.
    writeFileSync(fleet.layout.configFile, 'inbox:\n  max_body_bytes: 65536\n');
    expect((await flotilla(['send', 'human', 'first'], { env })).exitCode).toBe(0);
    const written = statSync(fleet.layout.configCache);
    for (const args of [['status'], ['agents', 'list'], ['send', 'human', 'again'], ['status', '--json']]) {
      const r = await flotilla(args, { env });
      expect(r.exitCode, `${args.join(' ')}: ${String(r.stderr)}`).toBe(0);
    }
    // Rewritten means replaced (a new inode) or changed: neither happened.
    const after = statSync(fleet.layout.configCache);
    expect([after.ino, after.mtimeMs]).toEqual([written.ino, written.mtimeMs]);
  });

  it("keeps an entry per environment: an agent's settings and a person's do not evict each other", async () => {
    fleet = tempFleet();
    const person = {
      FLOTILLA_ROOT: fleet.layout.root,
      FLOTILLA_AGENT_ID: '',
      XDG_CONFIG_HOME: join(fleet.project, 'xdg'),
    };
    const agent = { ...person, FLOTILLA_LIMITS_MAX_RUNNING: '7' };
    writeFileSync(fleet.layout.configFile, 'limits:\n  max_running: 3\n');
    const show = async (env: Record<string, string>) => {
      const r = await flotilla(['config', 'show', '--json'], { env });
      return (JSON.parse(String(r.stdout)) as Record<string, { value: unknown }>)['limits.max_running']!.value;
    };
    expect([await show(person), await show(agent)]).toEqual([3, 7]);
    const written = statSync(fleet.layout.configCache);
    for (let i = 0; i < 3; i++) {
      expect((await flotilla(['status'], { env: i % 2 ? agent : person })).exitCode).toBe(0);
      expect((await flotilla(['send', 'human', 'x'], { env: i % 2 ? person : agent })).exitCode).toBe(0);
    }
    expect([await show(person), await show(agent)]).toEqual([3, 7]);
    const after = statSync(fleet.layout.configCache);
    expect([after.ino, after.mtimeMs]).toEqual([written.ino, written.mtimeMs]);
  });

  it('an edited project config is seen by the next command, fast or full', async () => {
    fleet = tempFleet();
    const env = {
      FLOTILLA_ROOT: fleet.layout.root,
      FLOTILLA_AGENT_ID: '',
      XDG_CONFIG_HOME: join(fleet.project, 'xdg'),
    };
    expect((await flotilla(['send', 'human', 'x'.repeat(2000)], { env })).exitCode).toBe(0);
    writeFileSync(fleet.layout.configFile, 'inbox:\n  max_body_bytes: 1024\n');
    const refused = await flotilla(['send', 'human', 'x'.repeat(2000)], { env });
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(/over the 1 KiB limit \(inbox\.max_body_bytes\)/);
    const shown = await flotilla(['config', 'show', '--json'], { env });
    expect(
      (JSON.parse(String(shown.stdout)) as Record<string, { value: unknown }>)['inbox.max_body_bytes']!.value,
    ).toBe(1024);
  });
});
