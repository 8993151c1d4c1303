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

/** A pattern matching exactly `text`: the whole one line, nothing before or after it. */
const exactly = (text: string): RegExp => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);

describe('loadConfig', () => {
  it('merges defaults < user < project < env < flags and names each source', async () => {
    const { userFile } = setup(
      'limits:\n  max_running: 6\n  max_children: 3\n',
      'limits:\n  max_depth: 5\n  max_running: 7\n  max_children: 2\n  max_spawns_per_tree: 10\n',
    );
    const { config, sources } = await loadConfig({
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

  it('names the file, key, expectation and found value for a wrong type', async () => {
    setup('limits:\n  max_depth: "deep"\n', null);
    await expect(loadConfig({ layout: fleet.layout, userFile: null, env: {} })).rejects.toThrow(
      `${fleet.layout.configFile}: 'limits.max_depth' expected number, received string, found "deep" — fix the value or remove the key`,
    );
  });

  it('blames the env variable when the bad value came from the environment', async () => {
    setup(null, null);
    await expect(
      loadConfig({ layout: fleet.layout, userFile: null, env: { FLOTILLA_INBOX_POLL: 'sometimes' } }),
    ).rejects.toThrow(/^env FLOTILLA_INBOX_POLL: 'inbox.poll' .*found "sometimes"/);
  });

  it('warns about an unknown key and ignores it', async () => {
    setup('limits:\n  max_depth: 2\n  max_dept: 9\nfrobnicate: true\n', null);
    const { config, warnings } = await loadConfig({ layout: fleet.layout, userFile: null, env: {} });
    expect(config.limits.max_depth).toBe(2);
    expect(warnings).toEqual([
      `${fleet.layout.configFile}: unknown key 'limits.max_dept' is ignored — see 'flotilla config schema' for the keys`,
      `${fleet.layout.configFile}: unknown key 'frobnicate' is ignored — see 'flotilla config schema' for the keys`,
    ]);
  });

  it('reports invalid YAML with the file and line', async () => {
    setup('limits:\n  max_depth: 2\nmodel: [unclosed\n', null);
    await expect(loadConfig({ layout: fleet.layout, userFile: null, env: {} })).rejects.toThrow(
      new RegExp(
        `^${fleet.layout.configFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+: invalid YAML: .+ — fix the syntax at that line$`,
      ),
    );
  });

  it('reads records (aliases, providers) only from files, and lists from env as comma lists', async () => {
    setup('models:\n  aliases:\n    fast: ollama:llama3\n', null);
    const { config } = await loadConfig({
      layout: fleet.layout,
      userFile: null,
      env: { FLOTILLA_AGENTS_DEFAULT_DISALLOWED_TOOLS: 'shell, write', FLOTILLA_MODEL: 'ollama:qwen' },
    });
    expect(config.models.aliases).toEqual({ fast: 'ollama:llama3' });
    expect(config.agents.default_disallowed_tools).toEqual(['shell', 'write']);
    expect(config.model).toBe('ollama:qwen');
  });

  // The validator generated from the schema refuses these; zod, loaded for the refusal only, words
  // them. Each line is the one the loader printed when zod checked every config (main before it).
  it.each([
    [
      'a number out of range',
      'limits:\n  max_running: 0\n',
      "'limits.max_running' Too small: expected number to be >0, found 0",
    ],
    [
      'a word not among the choices',
      'inbox:\n  poll: sometimes\n',
      '\'inbox.poll\' Invalid option: expected one of "auto"|"always", found "sometimes"',
    ],
    ['a wrong type', 'model: 5\n', "'model' expected string, received number, found 5"],
    [
      'an empty hook command',
      'hooks:\n  start: [{command: ""}]\n',
      '\'hooks.start.0.command\' Too small: expected string to have >=1 characters, found ""',
    ],
    [
      'a bus that is none',
      'fleet:\n  bus: http://x\n',
      "'fleet.bus' expected 'maildir' or nats://host:port (tls://host:port for TLS), found \"http://x\"",
    ],
    [
      'a secret with two sources',
      'security:\n  secrets:\n    gh: {env: A, command: c}\n',
      '\'security.secrets.gh\' give env or command, not both, found {"env":"A","command":"c"}',
    ],
    [
      'a host named local',
      'hosts:\n  local:\n    ssh: x\n',
      '\'hosts.local\' is reserved: \'local\' is this machine, found {"ssh":"x"}',
    ],
  ])('refuses %s with the same one line as before', async (_what, yaml, expected) => {
    setup(yaml, null);
    // Trusted: an untrusted project's hooks, secrets, bus and hosts are dropped before they are checked.
    await expect(loadConfig({ layout: fleet.layout, userFile: null, env: {}, trusted: true })).rejects.toThrow(
      exactly(`${fleet.layout.configFile}: ${expected} — fix the value or remove the key`),
    );
  });
});
