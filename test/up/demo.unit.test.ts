import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/schema.js';
import { loadDefinitions } from '../../src/definitions/load.js';
import { DEMO_DIR, demoDefinitions } from '../../src/definitions/demo.js';
import { removeInstalledDemoAgents } from '../../src/up/demo.js';
import { TOOLS_DIR } from '../../src/layout/package.js';
import { attachCommand, passEnv, sameServer } from '../../src/up/up.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

let fleet: TempFleet | undefined;
afterEach(() => fleet?.cleanup());

describe('demo definitions', () => {
  it("are built in for the demo's tree only, with absolute script paths, and win over files of the same name", async () => {
    fleet = tempFleet();
    mkdirSync(fleet.layout.agentsDir, { recursive: true });
    writeFileSync(join(fleet.layout.agentsDir, 'checker.md'), '---\nname: checker\ndescription: mine\n---\nmy body\n');
    const env = { HOME: fleet.project, XDG_CONFIG_HOME: join(fleet.project, 'xdg') };
    const plain = await loadDefinitions({ layout: fleet.layout, config: defaultConfig(), env });
    expect(plain.definitions.map((d) => d.name).sort()).toEqual(['checker', 'general']);

    const loaded = await loadDefinitions({
      layout: fleet.layout,
      config: defaultConfig(),
      env: { ...env, FLOTILLA_DEMO: '1' },
    });
    expect(loaded.errors).toEqual([]);
    const byName = new Map(loaded.definitions.map((d) => [d.name, d]));
    expect(byName.get('todo-finder')?.model).toBe(`script:${join(DEMO_DIR, 'todo-finder.yaml')}`);
    expect(byName.get('checker')?.model).toBe(`script:${join(DEMO_DIR, 'checker.yaml')}`);
    expect(byName.get('demo-lead')?.model).toBe(`script:${join(DEMO_DIR, 'lead.yaml')}`);
    expect(byName.get('todo-finder')?.permissionMode).toBe('dont_ask');
    expect(byName.get('checker')?.source.scope).toBe('builtin');
    expect(loaded.shadowed.map((s) => s.name)).toEqual(['checker']);
  });

  it('fills a scripts folder that needs quoting', () => {
    fleet = tempFleet();
    const shipped = join(fleet.project, 'shipped');
    mkdirSync(shipped);
    writeFileSync(
      join(shipped, 'x.md'),
      '---\nname: x\ndescription: d\nmodel: script:{{demo_dir}}/x.yaml\n---\nbody\n',
    );
    const r = demoDefinitions(defaultConfig(), { shippedDir: shipped, demoDir: '/opt/my demo: #1' });
    expect(r.definitions[0]?.model).toBe('script:/opt/my demo: #1/x.yaml');
  });

  it("removes the files an older up installed into .flotilla/agents/, and never a person's", () => {
    fleet = tempFleet();
    mkdirSync(fleet.layout.agentsDir, { recursive: true });
    const old = join(fleet.layout.agentsDir, 'todo-finder.md');
    writeFileSync(
      old,
      "---\n# Installed by 'flotilla up' for the offline demo (no model configured); refreshed on each demo run. Delete it freely.\nname: todo-finder\n---\nx\n",
    );
    const own = join(fleet.layout.agentsDir, 'checker.md');
    writeFileSync(own, '---\nname: checker\ndescription: mine\n---\nmy body\n');
    expect(removeInstalledDemoAgents(fleet.layout)).toEqual([old]);
    expect(existsSync(old)).toBe(false);
    expect(readFileSync(own, 'utf8')).toContain('my body');
    // Only the demo's own files: the folder goes when nothing else was in it.
    rmSync(own);
    writeFileSync(
      old,
      "---\n# Installed by 'flotilla up' for the offline demo (no model configured); refreshed on each demo run. Delete it freely.\n---\n",
    );
    removeInstalledDemoAgents(fleet.layout);
    expect(existsSync(fleet.layout.agentsDir)).toBe(false);
  });
});

describe('up helpers', () => {
  it('prints the attach command for a named, a path and the default server', () => {
    expect(attachCommand('flot', 's')).toBe('tmux -L flot attach -t s');
    expect(attachCommand('/tmp/sock', 's')).toBe('tmux -S /tmp/sock attach -t s');
    expect(attachCommand(null, 's')).toBe('tmux attach -t s');
  });

  it("knows whether $TMUX is the fleet's server", () => {
    expect(sameServer('/tmp/tmux-1000/default', null)).toBe(true);
    expect(sameServer('/tmp/tmux-1000/flot', 'flot')).toBe(true);
    expect(sameServer('/tmp/tmux-1000/default', 'flot')).toBe(false);
    expect(sameServer('/tmp/s', '/tmp/s')).toBe(true);
  });

  it('passes settings and the root to the session, never a model key or an agent identity', () => {
    fleet = tempFleet();
    const env = passEnv(fleet.layout, defaultConfig(), {
      FLOTILLA_TMUX_SOCKET: 's',
      FLOTILLA_AGENT_ID: 'x',
      FLOTILLA_DEMO: '1',
      FLOTILLA_SLOT: '1:ab',
      ANTHROPIC_API_KEY: 'k',
      HOME: '/h',
      FLOTILLA_ROOT: '/elsewhere',
    });
    expect(env).toEqual({ FLOTILLA_TMUX_SOCKET: 's', FLOTILLA_ROOT: fleet.layout.root, PATH: TOOLS_DIR });
  });
});
