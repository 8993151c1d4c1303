import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { configSchema, defaultConfig } from '../../src/config/schema.js';
import { stripUntrusted, UNTRUSTED_KEYS } from '../../src/config/trust-filter.js';
import { trustFolder } from '../../src/config/trust-store.js';
import { leaves } from '../../src/config/walk.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

/**
 * The untrusted-config allow-list (docs/security-trust.md "Folder trust"): every key of the schema
 * has a row in UNTRUSTED_KEYS, so a key added later is untrusted until someone decides what a
 * stranger's repository may do with it.
 */

const paths = leaves(configSchema).map((l) => l.path);

describe('UNTRUSTED_KEYS', () => {
  it('lists every leaf key of the config schema, and nothing else', () => {
    const unlisted = paths.filter((p) => !(p in UNTRUSTED_KEYS));
    expect(unlisted, `add a row to UNTRUSTED_KEYS (src/config/trust-filter.ts) for: ${unlisted.join(', ')}`).toEqual(
      [],
    );
    expect(Object.keys(UNTRUSTED_KEYS).filter((k) => !paths.includes(k))).toEqual([]);
    for (const [key, rule] of Object.entries(UNTRUSTED_KEYS)) expect(rule.reason.length, key).toBeGreaterThan(5);
  });

  it('never lets a project set a command, a path, a host or the default definition', () => {
    const never = Object.entries(UNTRUSTED_KEYS)
      .filter(([, r]) => r.tier === 'never')
      .map(([k]) => k);
    expect(never).toEqual(
      expect.arrayContaining([
        'runtimes.claude.command',
        'runtimes.codex.command',
        'runtimes.gemini.command',
        'agents.default',
        'hooks.start',
        'hooks.stop',
        'hooks.task_created',
        'hooks.task_completed',
        'hooks.teammate_idle',
        'models.providers',
        'security.secrets',
        'tmux.socket',
        'fleet.bus',
        'fleet.nats.ca_file',
        'hosts',
      ]),
    );
    // Any key whose description speaks of a command, path, URL or host is never, unless listed here with why.
    const judged: Record<string, string> = {
      'security.deny_commands': 'a longer deny list only',
      'security.opaque_commands': 'ask or deny only',
      'permissions.read_dirs': "a subset of the person's own folders only",
      'tools.shell_timeout_secs': 'a limit, lowered only',
      'fleet.nats.ca_file': 'never already',
      model: 'script: models are dropped',
      'models.aliases': 'script: models are dropped',
      'limits.idle_timeout_secs': 'no command: it ends an idle agent',
      'runtimes.claude.login': 'isolated only',
      'runtimes.codex.login': 'isolated only',
      'runtimes.gemini.login': 'isolated only',
      'models.prices': 'dearer prices only',
      'security.sandbox': 'may never be none',
      'output.max_bytes': 'a cap, lowered only',
    };
    const loose = leaves(configSchema)
      .filter((l) => /command|path|url|host|\bfile\b|folder|server/i.test(l.description ?? '') && !(l.path in judged))
      .filter((l) => UNTRUSTED_KEYS[l.path]?.tier !== 'never')
      .map((l) => `${l.path}: ${l.description}`);
    expect(loose).toEqual([]);
  });

  it('drops a key without a row (a key the schema gains later) and says so', () => {
    const values: Record<string, unknown> = { limits: { max_depth: 1 }, brand_new: { run: 'x' } };
    expect(stripUntrusted(values, defaultConfig(), [...paths, 'brand_new.run'])).toEqual(['brand_new.run']);
    expect(values).toEqual({ limits: { max_depth: 1 } });
  });

  it('drops a scalar where a section belongs', () => {
    const values: Record<string, unknown> = { runtimes: 'x', hooks: null };
    expect(stripUntrusted(values, defaultConfig(), paths)).toEqual(['runtimes']);
    expect(values).toEqual({});
  });
});

describe("a stranger's runtimes.claude.command and agents.default", () => {
  let fleet: TempFleet;
  let env: NodeJS.ProcessEnv;
  beforeEach(() => {
    fleet = tempFleet();
    const home = join(fleet.project, 'home');
    env = { HOME: home, XDG_CONFIG_HOME: join(home, 'xdg') };
    mkdirSync(join(home, 'xdg', 'flotilla'), { recursive: true });
    writeFileSync(fleet.layout.configFile, 'runtimes:\n  claude:\n    command: ./evil.sh\nagents:\n  default: evil\n');
  });
  afterEach(() => fleet.cleanup());

  it('are dropped and reported while the folder is untrusted', async () => {
    const { config, trust } = await loadConfig({ layout: fleet.layout, env });
    expect(config.runtimes.claude.command).toBeNull();
    expect(config.agents.default).toBe('general');
    expect(trust).toEqual({ trusted: false, ignored: ['agents.default', 'runtimes.claude.command'] });
  });

  it('are honoured once the folder is trusted', async () => {
    trustFolder(fleet.layout, env);
    const { config, trust } = await loadConfig({ layout: fleet.layout, env });
    expect(config.runtimes.claude.command).toBe('./evil.sh');
    expect(config.agents.default).toBe('evil');
    expect(trust).toEqual({ trusted: true, ignored: [] });
  });
});

describe('limits an untrusted project may only lower', () => {
  let fleet: TempFleet;
  let env: NodeJS.ProcessEnv;
  beforeEach(() => {
    fleet = tempFleet();
    const home = join(fleet.project, 'home');
    env = { HOME: home, XDG_CONFIG_HOME: join(home, 'xdg') };
    mkdirSync(join(home, 'xdg', 'flotilla'), { recursive: true });
    writeFileSync(
      join(home, 'xdg', 'flotilla', 'config.yaml'),
      'budget:\n  max_tokens_per_tree: 1000\nmodels:\n  prices:\n    "anthropic:x": {input_per_mtok: 3, output_per_mtok: 15}\n',
    );
  });
  afterEach(() => fleet.cleanup());

  it('keeps a lower limit and drops a higher one, a null budget, a cheaper price and a script: model', async () => {
    writeFileSync(
      fleet.layout.configFile,
      [
        'limits:\n  max_turns: 5\n  timeout_secs: 100000\n  max_running: 2\n  max_depth: 9',
        'budget:\n  max_tokens_per_tree: null\n  max_cost_usd_per_tree: 2',
        'models:\n  prices:\n    "anthropic:x": {input_per_mtok: 0, output_per_mtok: 0}',
        'model: script:./evil.yaml',
        'agents:\n  default_memory_scope: user',
        'transcripts:\n  enabled: false',
      ].join('\n') + '\n',
    );
    const { config, trust } = await loadConfig({ layout: fleet.layout, env });
    expect(config.limits).toMatchObject({ max_turns: 5, timeout_secs: 600, max_running: 2, max_depth: 3 });
    expect(config.budget).toEqual({ max_tokens_per_tree: 1000, max_cost_usd_per_tree: 2 });
    expect(config.models.prices['anthropic:x']).toEqual({ input_per_mtok: 3, output_per_mtok: 15 });
    expect(config.model).toBeNull();
    expect(config.agents.default_memory_scope).toBeNull();
    expect(config.transcripts.enabled).toBe(true);
    expect(trust.ignored.sort()).toEqual([
      'agents.default_memory_scope',
      'budget.max_tokens_per_tree',
      'limits.max_depth',
      'limits.timeout_secs',
      'model',
      'models.prices',
      'transcripts.enabled',
    ]);
  });
});
