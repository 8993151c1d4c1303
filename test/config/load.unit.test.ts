import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

let fleet: TempFleet;
afterEach(() => fleet?.cleanup());

function setup(project: string | null, user: string | null): { userFile: string } {
  fleet = tempFleet();
  const userFile = join(fleet.project, 'user-config.yaml');
  if (user !== null) writeFileSync(userFile, user);
  if (project !== null) {
    mkdirSync(fleet.layout.root, { recursive: true });
    writeFileSync(fleet.layout.configFile, project);
  }
  return { userFile };
}

describe('loadConfig', () => {
  it('merges defaults < user < project < env < flags and names each source', () => {
    const { userFile } = setup(
      'limits:\n  max_running: 6\n  max_children: 3\n',
      'limits:\n  max_depth: 5\n  max_running: 7\n  max_children: 2\n  max_spawns_per_tree: 10\n',
    );
    const { config, sources } = loadConfig({
      layout: fleet.layout,
      userFile,
      env: {
        FLOTILLA_LIMITS_MAX_CHILDREN: '9',
        FLOTILLA_LIMITS_MAX_SPAWNS_PER_TREE: '11',
        FLOTILLA_TMUX_SOCKET: 'sock',
      },
      flags: { 'limits.max_spawns_per_tree': 12 },
    });
    expect(config.limits.max_depth).toBe(5);
    expect(sources['limits.max_depth']).toBe(userFile);
    expect(config.limits.max_running).toBe(6);
    expect(sources['limits.max_running']).toBe(fleet.layout.configFile);
    expect(config.limits.max_children).toBe(9);
    expect(sources['limits.max_children']).toBe('env FLOTILLA_LIMITS_MAX_CHILDREN');
    expect(config.limits.max_spawns_per_tree).toBe(12);
    expect(sources['limits.max_spawns_per_tree']).toBe('flag');
    expect(config.tmux.socket).toBe('sock');
    expect(config.limits.idle_timeout_secs).toBe(0);
    expect(sources['limits.idle_timeout_secs']).toBe('default');
  });

  it('names the file, key, expectation and found value for a wrong type', () => {
    setup('limits:\n  max_depth: "deep"\n', null);
    expect(() => loadConfig({ layout: fleet.layout, userFile: null, env: {} })).toThrow(
      `${fleet.layout.configFile}: 'limits.max_depth' expected number, received string, found "deep" — fix the value or remove the key`,
    );
  });

  it('blames the env variable when the bad value came from the environment', () => {
    setup(null, null);
    expect(() =>
      loadConfig({ layout: fleet.layout, userFile: null, env: { FLOTILLA_INBOX_POLL: 'sometimes' } }),
    ).toThrow(/^env FLOTILLA_INBOX_POLL: 'inbox.poll' .*found "sometimes"/);
  });

  it('warns about an unknown key and ignores it', () => {
    setup('limits:\n  max_depth: 2\n  max_dept: 9\nfrobnicate: true\n', null);
    const { config, warnings } = loadConfig({ layout: fleet.layout, userFile: null, env: {} });
    expect(config.limits.max_depth).toBe(2);
    expect(warnings).toEqual([
      `${fleet.layout.configFile}: unknown key 'limits.max_dept' is ignored — see 'flotilla config schema' for the keys`,
      `${fleet.layout.configFile}: unknown key 'frobnicate' is ignored — see 'flotilla config schema' for the keys`,
    ]);
  });

  it('reports invalid YAML with the file and line', () => {
    setup('limits:\n  max_depth: 2\nmodel: [unclosed\n', null);
    expect(() => loadConfig({ layout: fleet.layout, userFile: null, env: {} })).toThrow(
      new RegExp(
        `^${fleet.layout.configFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+: invalid YAML: .+ — fix the syntax at that line$`,
      ),
    );
  });

  it('reads records (aliases, providers) only from files, and lists from env as comma lists', () => {
    setup('models:\n  aliases:\n    fast: ollama:llama3\n', null);
    const { config } = loadConfig({
      layout: fleet.layout,
      userFile: null,
      env: { FLOTILLA_AGENTS_DEFAULT_DISALLOWED_TOOLS: 'shell, write', FLOTILLA_MODEL: 'ollama:qwen' },
    });
    expect(config.models.aliases).toEqual({ fast: 'ollama:llama3' });
    expect(config.agents.default_disallowed_tools).toEqual(['shell', 'write']);
    expect(config.model).toBe('ollama:qwen');
  });
});
