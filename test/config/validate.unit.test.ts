import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CONFIG_LEAVES, parseConfig } from '../../src/config/config-validate.generated.js';
import { CONFIG_REFINEMENTS } from '../../src/config/refinements.js';
import { configSchema, defaultConfig } from '../../src/config/schema.js';
import { leaves } from '../../src/config/walk.js';
// @ts-expect-error a plain .mjs build tool without types
import { generateValidator, TARGETS } from '../../tools/gen-validators.mjs';
import { rng } from '../helpers/seeded.js';

/**
 * Reading the config checks it with a validator generated from the zod schema, so a spawn in a
 * new fleet does not load zod (§14). zod stays the source of truth: this file fails when the
 * generated file is stale, and compares the two on thousands of generated configs.
 */

const repo = (p: string): string => fileURLToPath(new URL(`../../${p}`, import.meta.url));

/** A config that sets something in every section, records and lists included. */
const BASE = {
  model: 'anthropic:claude-sonnet-4-5',
  models: {
    aliases: { fast: 'ollama:llama3' },
    providers: { local: { base_url: 'http://localhost:11434/v1', api_key_env: 'LOCAL_KEY' } },
    prices: { 'ollama:llama3': { input_per_mtok: 0, output_per_mtok: 0.5 } },
    max_retries: 2,
  },
  limits: { max_depth: 2, max_running: 4, timeout_secs: 30.5 },
  budget: { max_tokens_per_tree: 1000 },
  agents: { default_disallowed_tools: ['shell'], default_permission_mode: 'plan', default_memory_scope: 'project' },
  hooks: { start: [{ command: 'true' }], stop: [{ command: 'echo done', timeout_secs: 5 }] },
  security: {
    deny_commands: ['sudo'],
    opaque_commands: 'ask',
    sandbox: 'none',
    secrets: { github: { env: 'GH_TOKEN', var: 'GH' }, npm: { command: 'pass npm' } },
  },
  runtimes: { claude: { command: '/usr/bin/claude', login: 'isolated' } },
  fleet: { bus: 'nats://localhost:4222', host: 'box-1', nats: { ca_file: '/etc/ca.pem' } },
  inbox: { poll: 'always' },
  hosts: { gpu1: { ssh: 'me@gpu1', port: 22, ssh_options: ['-i', 'k'], env: { PATH: '/bin' } } },
};

/** Where a case changes something: every key, record entries, list items, unknown keys at each level. */
const PATHS = [
  ...CONFIG_LEAVES.map((l) => l.path),
  ...['models', 'limits', 'hooks', 'security', 'runtimes', 'runtimes.claude', 'fleet', 'fleet.nats', 'hosts'],
  ...['models.aliases.x', 'models.providers.local', 'models.providers.local.base_url', 'models.prices.m'],
  ...['models.prices.ollama:llama3.input_per_mtok', 'hooks.start.0', 'hooks.start.0.command', 'hooks.stop.1'],
  ...['hooks.stop.0.timeout_secs', 'security.secrets.github', 'security.secrets.github.env', 'security.secrets.x'],
  ...['security.secrets.npm.env', 'security.secrets.npm.var', 'security.deny_commands.1'],
  ...['hosts.gpu1', 'hosts.gpu1.ssh', 'hosts.gpu1.port', 'hosts.gpu1.env.A B', 'hosts.gpu1.env.HOME'],
  ...['hosts.gpu1.ssh_options.0', 'hosts.local', 'hosts.GPU 1', 'hosts.gpu-2', 'hosts.gpu-2.ssh'],
  ...['extra', 'limits.extra', 'runtimes.claude.extra', 'runtimes.extra', 'hosts.gpu1.extra'],
  ...['security.secrets.github.extra', 'models.providers.local.extra', 'hooks.start.0.extra'],
];

/** Values on and around each key's rules: every type, the edges of bounds, patterns and enums. */
const POOL: unknown[] = [
  undefined,
  null,
  true,
  false,
  0,
  -1,
  1,
  1.5,
  65535,
  65536,
  2 ** 53,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  '',
  'x',
  'local',
  'gpu-1',
  'GPU 1',
  '-oProxyCommand=x',
  'A_B',
  '1A',
  'maildir',
  'nats://h:4222',
  'tls://h:4222',
  'nats://h/x',
  'plan',
  'bypass_permissions',
  'shared',
  'isolated',
  'always',
  'agents',
  'bubblewrap',
  'deny',
  'user',
  [],
  ['a'],
  [1],
  [{ command: 'x' }],
  [{ command: '' }],
  [{ command: 'x', timeout_secs: 0 }],
  {},
  { command: 'x' },
  { env: 'A' },
  { env: 'A', command: 'c' },
  { env: '1A' },
  { var: 'V' },
  { ssh: 'g' },
  { ssh: 'g', port: 0 },
  { ssh: 'g', lost_after_secs: 3 },
  { base_url: 'http://x' },
  { input_per_mtok: 1, output_per_mtok: 0 },
  { input_per_mtok: -1, output_per_mtok: 0 },
  { claude: { login: 'isolated' } },
];

/** Sets `path` in `obj`, making objects where there are none (lists stay lists); undefined deletes. */
function put(obj: Record<string, unknown>, path: string, value: unknown): void {
  // Record keys may hold a dot (a price's model string): the known one is kept whole.
  const parts = path.startsWith('models.prices.ollama:llama3.')
    ? ['models', 'prices', 'ollama:llama3', path.split('.').at(-1)!]
    : path.split('.');
  let cur = obj;
  for (const part of parts.slice(0, -1)) {
    const next = cur[part];
    if (typeof next !== 'object' || next === null) cur[part] = {};
    cur = cur[part] as Record<string, unknown>;
  }
  const last = parts.at(-1)!;
  if (value === undefined) delete cur[last];
  else cur[last] = structuredClone(value);
}

function* cases(count: number): Generator<unknown> {
  const r = rng(58);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  for (let i = 0; i < count; i++) {
    if (i % 101 === 0) {
      yield structuredClone(POOL[i % POOL.length]);
      continue;
    }
    const c: Record<string, unknown> = i % 7 === 0 ? {} : structuredClone(BASE);
    const changes = Math.floor(r() * 3);
    for (let k = 0; k < changes; k++) put(c, pick(PATHS), pick(POOL));
    yield c;
  }
}

/** The fields a refusal blames, as dotted paths (zod's issue paths joined). */
const blamed = (issues: { path: string | PropertyKey[] }[]): string[] =>
  [...new Set(issues.map((i) => (typeof i.path === 'string' ? i.path : i.path.map(String).join('.'))))].sort();

describe('config validator generated from the zod schema', () => {
  it('the checked-in file is what the schema generates now (npm run build && node tools/gen-validators.mjs)', () => {
    const target = (TARGETS as unknown[][]).find((t) => t[3] === 'parseConfig')!;
    const [mod, , out, fnName, typeName, testFile, wants] = target as [
      string,
      string,
      string,
      string,
      string,
      string,
      { refinements: [string, string]; leaves: [string, string] },
    ];
    const extra = {
      refinements: { module: wants.refinements[0], name: wants.refinements[1], table: CONFIG_REFINEMENTS },
      leaves: { module: wants.leaves[0], name: wants.leaves[1], items: leaves(configSchema) },
    };
    expect(readFileSync(repo(out), 'utf8')).toBe(
      generateValidator(configSchema, fnName, typeName, mod, testFile, extra),
    );
  });

  it('fills the same defaults as zod for an empty config', () => {
    const ours = parseConfig({});
    expect(ours.success).toBe(true);
    if (ours.success) expect(ours.data).toEqual(defaultConfig());
  });

  it('agrees with zod on 8,000 generated configs: the same verdict, the same data, the same fields blamed', () => {
    const disagreements: string[] = [];
    let valid = 0;
    let total = 0;
    for (const input of cases(8_000)) {
      total++;
      const ours = parseConfig(structuredClone(input));
      const zods = configSchema.safeParse(structuredClone(input));
      let same = ours.success === zods.success;
      if (same && ours.success && zods.success) {
        valid++;
        same = isDeepStrictEqual(JSON.parse(JSON.stringify(ours.data)), JSON.parse(JSON.stringify(zods.data)));
      } else if (same && !ours.success && !zods.success) {
        same = isDeepStrictEqual(blamed(ours.error.issues), blamed(zods.error.issues));
      }
      if (!same)
        disagreements.push(JSON.stringify({ input, ours, zod: zods.success ? zods.data : blamed(zods.error.issues) }));
    }
    expect(disagreements.slice(0, 3)).toEqual([]);
    // Both kinds are well represented, so neither side of the verdict goes untested.
    expect(valid).toBeGreaterThan(total / 5);
    expect(valid).toBeLessThan((total * 4) / 5);
  });
});
