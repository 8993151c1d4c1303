import { readFileSync } from 'node:fs';
import { FlotillaError, isErrno } from '../errors.js';
import { userPaths, type Layout } from '../layout/layout.js';
import { CONFIG_LEAVES, parseConfig } from './config-validate.generated.js';
import type { Config } from './schema.js';
import { stripUntrusted } from './trust-filter.js';
import { isTrusted } from './trust-store.js';
import { deletePath, getPath, setPath, unknownKeys, type KeyLeaf } from './walk.js';

/**
 * Loads the effective config (§2): defaults < user file < project file < `FLOTILLA_*`
 * environment < command-line flags, remembering where each value came from.
 * A good config is checked by the validator generated from the zod schema and a missing file is
 * never parsed, so reading a new fleet's config loads neither zod nor `yaml` (§14); zod is
 * loaded only to word what is wrong with a bad one (docs/decisions.md, "The config read without zod").
 */

export interface LoadedConfig {
  config: Config;
  /** Dotted key → where its value came from: `default`, a file path, `env NAME` or `flag`. */
  sources: Record<string, string>;
  warnings: string[];
  /**
   * Folder trust (docs/security-trust.md "Folder trust"): whether the project's files were trusted,
   * and which keys of its config.yaml were ignored because they were not.
   */
  trust: { trusted: boolean; ignored: string[] };
}

interface Layer {
  source: string;
  values: Record<string, unknown>;
}

export interface LoadOptions {
  layout: Layout;
  env?: NodeJS.ProcessEnv;
  /** Dotted key → value, from command-line flags. */
  flags?: Record<string, unknown>;
  /** Skip the user file (tests). */
  userFile?: string | null;
  /** Whether the project's files are trusted; default: what the person's trust list says. */
  trusted?: boolean;
}

const BYPASS_KEY = 'agents.allow_bypass_permissions';

/** The `FLOTILLA_*` variable of every key: what the config cache keys an entry by. */
export const configEnvNames = (): string[] => CONFIG_LEAVES.map((l) => l.envName);

export async function loadConfig(opts: LoadOptions): Promise<LoadedConfig> {
  const env = opts.env ?? process.env;
  const warnings: string[] = [];
  const userFile = opts.userFile === undefined ? userPaths(env).configFile : opts.userFile;
  const layers: Layer[] = [];
  const trusted = opts.trusted ?? isTrusted(opts.layout, env);
  let ignored: string[] = [];
  const allLeaves = CONFIG_LEAVES;
  for (const file of [userFile, opts.layout.configFile]) {
    if (!file) continue;
    const values = await readConfigFile(file);
    if (!values) continue;
    for (const key of unknownKeys(allLeaves, values)) {
      warnings.push(`${file}: unknown key '${key}' is ignored — see 'flotilla config schema' for the keys`);
      deletePath(values, key);
    }
    if (file === opts.layout.configFile && !trusted) {
      // Judged against what the person's own layers make, so "tighter" means tighter than theirs.
      const lower: Record<string, unknown> = {};
      for (const layer of layers) deepMerge(lower, layer.values);
      const lowerParsed = parseConfig(lower);
      ignored = stripUntrusted(
        values,
        lowerParsed.success ? lowerParsed.data : defaults(),
        allLeaves.map((l) => l.path),
      );
    }
    layers.push({ source: file, values });
  }
  layers.push({ source: 'env', values: envLayer(allLeaves, env) });
  const flagValues: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(opts.flags ?? {})) if (v !== undefined) setPath(flagValues, k, v);
  layers.push({ source: 'flag', values: flagValues });

  const merged: Record<string, unknown> = {};
  for (const layer of layers) deepMerge(merged, layer.values);
  const parsed = parseConfig(merged);
  const config = parsed.success ? parsed.data : await invalidConfig(merged, layers, allLeaves);

  const sources: Record<string, string> = {};
  for (const leaf of allLeaves) {
    const from = [...layers].reverse().find((l) => getPath(l.values, leaf.path) !== undefined);
    sources[leaf.path] = from ? describeSource(from.source, leaf.path, allLeaves) : 'default';
  }
  // Running without approvals is a person's decision, written in a config file: an agent
  // can set environment variables and flags for the commands it runs, so those cannot allow it.
  const allowFrom = [...layers].reverse().find((l) => getPath(l.values, BYPASS_KEY) !== undefined)?.source;
  if (config.agents.allow_bypass_permissions && (allowFrom === 'env' || allowFrom === 'flag')) {
    warnings.push(
      `${sources[BYPASS_KEY]}: '${BYPASS_KEY}' is ignored — only a config file (${userFile ?? 'user config'} or ${opts.layout.configFile}) can allow bypass_permissions`,
    );
    config.agents.allow_bypass_permissions = false;
    sources[BYPASS_KEY] = 'default';
  }
  return { config, sources, warnings, trust: { trusted, ignored } };
}

/** The defaults alone, from the generated validator (no zod). */
function defaults(): Config {
  const parsed = parseConfig({});
  if (!parsed.success) throw new Error('the config schema rejects its own defaults');
  return parsed.data;
}

/**
 * A config the generated validator refused: zod, loaded only now, words the first thing wrong, with the
 * file or variable it came from. Should zod accept what the validator refused (they agree on
 * thousands of generated configs: test/config/validate.unit.test.ts), zod is the truth and its config is used.
 */
async function invalidConfig(
  merged: Record<string, unknown>,
  layers: Layer[],
  allLeaves: readonly KeyLeaf[],
): Promise<Config> {
  const { configSchema } = await import('./schema.js');
  const parsed = configSchema.safeParse(merged);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const key = issue.path.join('.');
  const from = [...layers].reverse().find((l) => getPath(l.values, key) !== undefined);
  const where = from ? describeSource(from.source, key, allLeaves) : 'config';
  const found = JSON.stringify(getPath(merged, key));
  // A record's bad key (a host name) carries the reason in its own nested issue.
  const message = issue.code === 'invalid_key' && issue.issues[0] ? issue.issues[0].message : issue.message;
  throw new FlotillaError(
    `${where}: '${key}' ${message.replace(/^Invalid input: /, '')}, found ${found} — fix the value or remove the key`,
    { code: 'config-invalid' },
  );
}

function describeSource(source: string, key: string, allLeaves: readonly KeyLeaf[]): string {
  if (source === 'env') return `env ${allLeaves.find((l) => l.path === key)?.envName ?? 'FLOTILLA_*'}`;
  if (source === 'flag') return 'flag';
  return source;
}

async function readConfigFile(file: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return undefined;
    throw new FlotillaError(`cannot read config file ${file}: ${(err as Error).message}`, { cause: err });
  }
  // The YAML parser (~37 ms to load) only for a file that exists.
  const { parseConfigYaml } = await import('./yaml-file.js');
  return parseConfigYaml(text, file);
}

function envLayer(allLeaves: readonly KeyLeaf[], env: NodeJS.ProcessEnv): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const leaf of allLeaves) {
    const raw = env[leaf.envName];
    if (raw === undefined || leaf.kind === 'record') continue;
    setPath(out, leaf.path, parseEnvValue(raw, leaf));
  }
  return out;
}

/** Env values are strings: read them as the key's type, leaving bad ones for the schema to reject. */
function parseEnvValue(raw: string, leaf: KeyLeaf): unknown {
  const s = raw.trim();
  if (leaf.nullable && (s === '' || s === 'null')) return null;
  switch (leaf.kind) {
    case 'number':
      return s !== '' && Number.isFinite(Number(s)) ? Number(s) : s;
    case 'boolean':
      return /^(1|true|yes|on)$/i.test(s) ? true : /^(0|false|no|off)$/i.test(s) ? false : s;
    case 'array':
      if (s.startsWith('[')) {
        try {
          return JSON.parse(s) as unknown;
        } catch {
          return s;
        }
      }
      return s === '' ? [] : s.split(',').map((x) => x.trim());
    default:
      return raw;
  }
}

function deepMerge(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(source)) {
    const t = target[k];
    if (isPlainObject(v) && isPlainObject(t)) deepMerge(t, v);
    else target[k] = isPlainObject(v) ? structuredClone(v) : v;
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
