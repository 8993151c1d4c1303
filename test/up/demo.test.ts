import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/schema.js';
import { loadDefinitions } from '../../src/definitions/load.js';
import { DEMO_DIR, installDemoAgents } from '../../src/up/demo.js';
import { TOOLS_DIR } from '../../src/layout/package.js';
import { attachCommand, passEnv, sameServer } from '../../src/up/up.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

let fleet: TempFleet | undefined;
afterEach(() => fleet?.cleanup());

describe('demo definitions', () => {
  it('installs the lead and both children with absolute script paths, loadable by spawn', async () => {
    fleet = tempFleet();
    const { written, kept } = installDemoAgents(fleet.layout);
    expect(written.map((p) => p.slice(fleet!.layout.agentsDir.length + 1))).toEqual(['checker.md', 'demo-lead.md', 'todo-finder.md']);
    expect(kept).toEqual([]);
    const env = { HOME: fleet.project, XDG_CONFIG_HOME: join(fleet.project, 'xdg') };
    const loaded = await loadDefinitions({ layout: fleet.layout, config: defaultConfig(), env });
    expect(loaded.errors).toEqual([]);
    const byName = new Map(loaded.definitions.map((d) => [d.name, d]));
    expect(byName.get('todo-finder')?.model).toBe(`script:${join(DEMO_DIR, 'todo-finder.yaml')}`);
    expect(byName.get('checker')?.model).toBe(`script:${join(DEMO_DIR, 'checker.yaml')}`);
    expect(byName.get('demo-lead')?.model).toBe(`script:${join(DEMO_DIR, 'lead.yaml')}`);
    expect(byName.get('todo-finder')?.permissionMode).toBe('dont_ask');
  });

  it('is idempotent, refreshes its own files, and never overwrites a person\'s definition', () => {
    fleet = tempFleet();
    installDemoAgents(fleet.layout);
    expect(installDemoAgents(fleet.layout).written).toEqual([]);
    const own = join(fleet.layout.agentsDir, 'checker.md');
    writeFileSync(own, '---\nname: checker\ndescription: mine\n---\nmy body\n');
    const stale = join(fleet.layout.agentsDir, 'todo-finder.md');
    writeFileSync(stale, readFileSync(stale, 'utf8').replace('dont_ask', 'default'));
    const again = installDemoAgents(fleet.layout);
    expect(again.kept).toEqual([own]);
    expect(again.written).toEqual([stale]);
    expect(readFileSync(own, 'utf8')).toContain('my body');
    expect(readFileSync(stale, 'utf8')).toContain('dont_ask');
  });

  it('fills a scripts folder that needs quoting', () => {
    fleet = tempFleet();
    const shipped = join(fleet.project, 'shipped');
    mkdirSync(shipped);
    writeFileSync(join(shipped, 'x.md'), '---\nname: x\ndescription: d\nmodel: script:{{demo_dir}}/x.yaml\n---\nbody\n');
    installDemoAgents(fleet.layout, { shippedDir: shipped, demoDir: '/opt/my demo: #1' });
    expect(readFileSync(join(fleet.layout.agentsDir, 'x.md'), 'utf8')).toContain('model: "script:/opt/my demo: #1/x.yaml"');
  });
});

describe('up helpers', () => {
  it('prints the attach command for a named, a path and the default server', () => {
    expect(attachCommand('flot', 's')).toBe('tmux -L flot attach -t s');
    expect(attachCommand('/tmp/sock', 's')).toBe('tmux -S /tmp/sock attach -t s');
    expect(attachCommand(null, 's')).toBe('tmux attach -t s');
  });

  it('knows whether $TMUX is the fleet\'s server', () => {
    expect(sameServer('/tmp/tmux-1000/default', null)).toBe(true);
    expect(sameServer('/tmp/tmux-1000/flot', 'flot')).toBe(true);
    expect(sameServer('/tmp/tmux-1000/default', 'flot')).toBe(false);
    expect(sameServer('/tmp/s', '/tmp/s')).toBe(true);
  });

  it('passes settings, keys and the root to the session, never an agent identity', () => {
    fleet = tempFleet();
    const env = passEnv(fleet.layout, defaultConfig(), {
      FLOTILLA_TMUX_SOCKET: 's', FLOTILLA_AGENT_ID: 'x', FLOTILLA_SLOT: '1:ab', ANTHROPIC_API_KEY: 'k', HOME: '/h', FLOTILLA_ROOT: '/elsewhere',
    });
    expect(env).toEqual({ FLOTILLA_TMUX_SOCKET: 's', ANTHROPIC_API_KEY: 'k', FLOTILLA_ROOT: fleet.layout.root, PATH: TOOLS_DIR });
  });
});
