import type { Config } from './schema.js';
import { getPath, setPath } from './walk.js';

/**
 * What an untrusted project's `config.yaml` may set (docs/security-trust.md "Folder trust"), as an
 * allow-list: every leaf key of the schema has one row, and a key without a row is dropped,
 * so a key added to the schema later is untrusted until someone lists it
 * (test/config/trust-keys.unit.test.ts fails until they do).
 *
 * - `allow`: cannot run a program, name a path or command, reach a host or loosen a limit.
 * - `tighten`: kept only when `keeps` says the value is no looser than what the person's own
 *   layers make (`lower`). Refusing a stranger's `sandbox: bubblewrap` would make the untrusted
 *   folder less safe than the trusted one (docs/decisions.md, "An untrusted project may
 *   tighten, never loosen"). A value of the wrong type is kept: the schema rejects it with the
 *   file and key.
 * - `never`: runs a program, names a path, command, URL or host, or is the person's alone.
 */
export type UntrustedRule =
  | { tier: 'allow'; reason: string }
  | { tier: 'tighten'; reason: string; keeps: (value: unknown, lower: Config) => boolean }
  | { tier: 'never'; reason: string };

const MODE_ORDER = ['plan', 'default', 'accept_edits', 'dont_ask', 'bypass_permissions'];

type Lower = (c: Config) => number | null;

/** A number no larger than the person's; for a nullable limit, null there means unlimited. */
const atMost =
  (of: Lower) =>
  (v: unknown, lower: Config): boolean => {
    const mine = of(lower);
    if (v === null) return mine === null;
    if (typeof v !== 'number') return true;
    return mine === null || v <= mine;
  };

/** A number at least the person's (a keep-longer setting where 0 means forever). */
const keepsLonger =
  (of: Lower) =>
  (v: unknown, lower: Config): boolean => {
    if (typeof v !== 'number') return true;
    const mine = of(lower);
    return mine === 0 ? v === 0 : v === 0 || v >= (mine ?? 0);
  };

const supersetOf =
  (of: (c: Config) => readonly string[]) =>
  (v: unknown, lower: Config): boolean =>
    !Array.isArray(v) || of(lower).every((n) => v.includes(n));

const subsetOf =
  (of: (c: Config) => readonly string[]) =>
  (v: unknown, lower: Config): boolean =>
    !Array.isArray(v) || v.every((d) => of(lower).includes(d as string));

/** A `script:` model replays a file of tool calls: a command list the repository wrote. */
const notScript = (v: unknown): boolean => typeof v !== 'string' || !v.trim().startsWith('script:');

const runtimeRows = (name: 'claude' | 'codex' | 'gemini'): Record<string, UntrustedRule> => ({
  [`runtimes.${name}.command`]: { tier: 'never', reason: 'the program an agent runs' },
  [`runtimes.${name}.login`]: {
    tier: 'tighten',
    reason: "'isolated' shares less of the person's login than 'shared'",
    keeps: (v, lower) => v === 'isolated' || v === lower.runtimes[name].login,
  },
});

export const UNTRUSTED_KEYS: Readonly<Record<string, UntrustedRule>> = {
  model: {
    tier: 'tighten',
    reason: 'a provider model may be chosen; a script: model is a file of commands',
    keeps: notScript,
  },
  'models.aliases': {
    tier: 'tighten',
    reason: 'aliases may point at provider models, never at a script: file',
    keeps: (v) => typeof v !== 'object' || v === null || Object.values(v).every(notScript),
  },
  'models.providers': {
    tier: 'never',
    reason: "a base URL (a host of the repository's choosing) and the variable whose key is sent there",
  },
  'models.prices': {
    tier: 'tighten',
    reason: 'a lower price loosens max_cost_usd_per_tree; only new or dearer prices',
    keeps: (v, lower) =>
      typeof v !== 'object' ||
      v === null ||
      Object.entries(lower.models.prices).every(([m, p]) => {
        const q = (v as Record<string, { input_per_mtok?: unknown; output_per_mtok?: unknown } | undefined>)[m];
        return (
          q === undefined ||
          (Number(q.input_per_mtok) >= p.input_per_mtok && Number(q.output_per_mtok) >= p.output_per_mtok)
        );
      }),
  },
  'models.max_retries': { tier: 'allow', reason: 'retries of a refused request cost no tokens' },
  'limits.max_depth': { tier: 'tighten', reason: 'a spawn limit', keeps: atMost((c) => c.limits.max_depth) },
  'limits.max_running': { tier: 'tighten', reason: 'a spawn limit', keeps: atMost((c) => c.limits.max_running) },
  'limits.max_children': { tier: 'tighten', reason: 'a spawn limit', keeps: atMost((c) => c.limits.max_children) },
  'limits.max_spawns_per_tree': {
    tier: 'tighten',
    reason: 'a spawn limit',
    keeps: atMost((c) => c.limits.max_spawns_per_tree),
  },
  'limits.max_turns': { tier: 'tighten', reason: 'a run limit', keeps: atMost((c) => c.limits.max_turns) },
  'limits.timeout_secs': { tier: 'tighten', reason: 'a run limit', keeps: atMost((c) => c.limits.timeout_secs) },
  'limits.idle_timeout_secs': { tier: 'allow', reason: 'only ends idle agents sooner or later; nothing runs' },
  'limits.cancel_grace_secs': {
    tier: 'tighten',
    reason: 'a longer grace keeps a cancelled process alive longer',
    keeps: atMost((c) => c.limits.cancel_grace_secs),
  },
  'budget.max_tokens_per_tree': {
    tier: 'tighten',
    reason: 'a budget (null = unlimited)',
    keeps: atMost((c) => c.budget.max_tokens_per_tree),
  },
  'budget.max_cost_usd_per_tree': {
    tier: 'tighten',
    reason: 'a budget (null = unlimited)',
    keeps: atMost((c) => c.budget.max_cost_usd_per_tree),
  },
  'tmux.socket': { tier: 'never', reason: 'names the tmux server (a socket path) agents open windows on' },
  'tmux.session_prefix': { tier: 'allow', reason: 'a name for the fleet session' },
  'watch.bell': { tier: 'allow', reason: 'a terminal bell' },
  'agents.default_disallowed_tools': {
    tier: 'tighten',
    reason: 'may add tools to the list, never drop one',
    keeps: supersetOf((c) => c.agents.default_disallowed_tools),
  },
  'agents.default_permission_mode': {
    tier: 'tighten',
    reason: 'plan or default only',
    keeps: (v) =>
      typeof v === 'string' && MODE_ORDER.indexOf(v) >= 0 && MODE_ORDER.indexOf(v) <= MODE_ORDER.indexOf('default'),
  },
  'agents.allow_bypass_permissions': {
    tier: 'tighten',
    reason: "running without approvals is the person's decision",
    keeps: (v) => v === false,
  },
  'agents.approval_timeout_secs': { tier: 'allow', reason: 'an unanswered approval is denied either way' },
  'agents.default_memory_scope': {
    tier: 'tighten',
    reason: "'user' memory is a folder in the person's home, shared with every project",
    keeps: (v, lower) => v !== 'user' || lower.agents.default_memory_scope === 'user',
  },
  'agents.context_window_turns': { tier: 'allow', reason: "how much of a parent's talk a child sees" },
  'agents.default': {
    tier: 'never',
    reason: 'picks the definition (its prompt, tools and mode) every plain spawn runs',
  },
  'permissions.read_dirs': {
    tier: 'tighten',
    reason: "each folder widens where agents read without asking: only the person's own",
    keeps: subsetOf((c) => c.permissions.read_dirs),
  },
  'security.deny_commands': {
    tier: 'tighten',
    reason: 'may add to the deny list, never drop from it',
    keeps: supersetOf((c) => c.security.deny_commands),
  },
  'security.opaque_commands': {
    tier: 'tighten',
    reason: "'ask' or 'deny' only",
    keeps: (v) => v === 'ask' || v === 'deny',
  },
  'security.sandbox': {
    tier: 'tighten',
    reason: 'may ask for a sandbox, never turn it off',
    keeps: (v) => v !== 'none',
  },
  'security.sandbox_network': { tier: 'tighten', reason: 'may only keep the network out', keeps: (v) => v === false },
  'security.secrets': {
    tier: 'never',
    reason: "a secret's source is a variable or a command the person's process runs",
  },
  'security.hidden_paths': {
    tier: 'never',
    reason: "the person's own paths to hide; a project could only make the sandbox show less of it",
  },
  'tools.shell_timeout_secs': {
    tier: 'tighten',
    reason: 'a run limit',
    keeps: atMost((c) => c.tools.shell_timeout_secs),
  },
  'tools.max_output_bytes': {
    tier: 'tighten',
    reason: 'a cap on what the model is shown',
    keeps: atMost((c) => c.tools.max_output_bytes),
  },
  'transcripts.enabled': {
    tier: 'tighten',
    reason: 'may not turn off the record resume and audits read',
    keeps: (v) => v !== false,
  },
  'transcripts.max_files': {
    tier: 'tighten',
    reason: "may not delete the person's transcripts sooner",
    keeps: keepsLonger((c) => c.transcripts.max_files),
  },
  'output.max_bytes': {
    tier: 'tighten',
    reason: 'a cap on each answer file',
    keeps: atMost((c) => c.output.max_bytes),
  },
  'output.retention_secs': {
    tier: 'tighten',
    reason: "may not delete the person's outputs sooner",
    keeps: keepsLonger((c) => c.output.retention_secs),
  },
  'hooks.start': { tier: 'never', reason: 'a command' },
  'hooks.stop': { tier: 'never', reason: 'a command' },
  'hooks.task_created': { tier: 'never', reason: 'a command' },
  'hooks.task_completed': { tier: 'never', reason: 'a command' },
  'hooks.teammate_idle': { tier: 'never', reason: 'a command' },
  ...runtimeRows('claude'),
  ...runtimeRows('codex'),
  ...runtimeRows('gemini'),
  'fleet.bus': { tier: 'never', reason: "a host: mail would go to a server of the repository's choosing (design §18)" },
  'fleet.name': { tier: 'never', reason: "joins another fleet's subjects on a shared bus" },
  'fleet.host': { tier: 'never', reason: "this machine's name in the fleet: the person's to give" },
  'fleet.lost_after_secs': { tier: 'never', reason: "marks other hosts' agents lost; the fleet's, not one clone's" },
  'fleet.audit_max_age_secs': { tier: 'never', reason: "drops the fleet's shared audit lines" },
  'fleet.nats.token_env': { tier: 'never', reason: "names which of the person's variables is sent to the bus" },
  'fleet.nats.user_env': { tier: 'never', reason: "names which of the person's variables is sent to the bus" },
  'fleet.nats.password_env': { tier: 'never', reason: "names which of the person's variables is sent to the bus" },
  'fleet.nats.ca_file': { tier: 'never', reason: 'a path: the CA trusted for the bus' },
  'inbox.rescan_secs': { tier: 'allow', reason: 'how often mail is rescanned' },
  'inbox.poll': { tier: 'allow', reason: 'how mail is noticed' },
  'inbox.poll_interval_ms': { tier: 'allow', reason: 'how often mail is polled' },
  'inbox.max_body_bytes': {
    tier: 'tighten',
    reason: 'a cap on a message',
    keeps: atMost((c) => c.inbox.max_body_bytes),
  },
  'inbox.broadcast_all': {
    tier: 'tighten',
    reason: "'people' only: an agent's broadcast reaches agents it never worked with (design §4)",
    keeps: (v) => v === 'people',
  },
  hosts: {
    tier: 'never',
    reason: 'ssh destinations and options (ProxyCommand runs a command here) and remote commands',
  },
};

/**
 * Keeps in `values` (the project file's parsed YAML, changed in place) only what an untrusted
 * project may set, judged against `lower` (the config the person's own layers make). Returns
 * the dotted keys it dropped; a record's entries (a provider, a secret) are named one by one.
 * `leafPaths` are the schema's leaf keys (config/walk.ts `leaves`).
 */
export function stripUntrusted(values: Record<string, unknown>, lower: Config, leafPaths: readonly string[]): string[] {
  const kept: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const path of leafPaths) {
    const v = getPath(values, path);
    if (v === undefined) continue;
    const rule = UNTRUSTED_KEYS[path];
    if (rule?.tier === 'allow' || (rule?.tier === 'tighten' && rule.keeps(v, lower))) {
      setPath(kept, path, v);
      continue;
    }
    const isRecord = typeof v === 'object' && v !== null && !Array.isArray(v);
    const entries = isRecord ? Object.keys(v) : [];
    ignored.push(...(entries.length && rule?.tier === 'never' ? entries.map((k) => `${path}.${k}`) : [path]));
  }
  // What is neither a leaf nor a section holding one (a scalar where a section belongs) goes too.
  ignored.push(...strays(values, leafPaths, ''));
  for (const key of Object.keys(values)) delete values[key];
  Object.assign(values, kept);
  return ignored;
}

function strays(values: unknown, leafPaths: readonly string[], prefix: string): string[] {
  if (typeof values !== 'object' || values === null || Array.isArray(values)) return [];
  const out: string[] = [];
  for (const [key, v] of Object.entries(values)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (leafPaths.includes(path)) continue;
    const section = leafPaths.some((l) => l.startsWith(`${path}.`));
    if (!section) out.push(path);
    // An empty heading (`hooks:` with nothing under it) sets nothing.
    else if (v === null) continue;
    else if (typeof v !== 'object' || v === null || Array.isArray(v)) out.push(path);
    else out.push(...strays(v, leafPaths, path));
  }
  return out;
}
