import type { Config } from './schema.js';
import { deletePath, getPath } from './walk.js';

/**
 * What an untrusted project's `config.yaml` may not set (docs/security.md "Folder trust"):
 * nothing that runs a command or loosens a limit the person's own config or the defaults
 * set. A key that only tightens (a sandbox, a longer deny list, more disallowed tools, a
 * lower default mode) is kept: refusing a stranger's `sandbox: bubblewrap` would make the
 * untrusted folder less safe than the trusted one (docs/decisions.md, "An untrusted project
 * may tighten, never loosen").
 */

const MODE_ORDER = ['plan', 'default', 'accept_edits', 'dont_ask', 'bypass_permissions'];

type Check = (value: unknown, lower: Config) => boolean;

const subsetOf = (needed: readonly string[]) => (value: unknown): boolean =>
  Array.isArray(value) && needed.every((n) => value.includes(n));

/** Keys checked one by one: kept when the check says the value does not loosen anything. */
const TIGHTEN_ONLY: Record<string, Check> = {
  'security.sandbox': (v) => v !== 'none',
  'security.sandbox_network': (v) => v === false,
  'security.opaque_commands': (v) => v === 'ask' || v === 'deny',
  'security.deny_commands': (v, lower) => subsetOf(lower.security.deny_commands)(v),
  'agents.default_permission_mode': (v) => typeof v === 'string' && MODE_ORDER.indexOf(v) >= 0 && MODE_ORDER.indexOf(v) <= MODE_ORDER.indexOf('default'),
  'agents.allow_bypass_permissions': (v) => v === false,
  'agents.default_disallowed_tools': (v, lower) => subsetOf(lower.agents.default_disallowed_tools)(v),
  // Each folder listed widens where agents read without asking: only the person's own folders.
  // An agent's broadcast to every tree reaches agents it never worked with (docs/design.md §4).
  'inbox.broadcast_all': (v) => v === 'people',
  'permissions.read_dirs': (v, lower) => Array.isArray(v) && v.every((d) => lower.permissions.read_dirs.includes(d as string)),
};

/**
 * Whole subtrees an untrusted project never sets: commands, secret sources, provider endpoints,
 * hosts (an ssh option such as ProxyCommand runs a command here; docs/security.md "Hosts"),
 * and the bus (its mail would go to a server of the stranger's choosing; design §18).
 */
const NEVER = ['hooks', 'security', 'models.providers', 'hosts', 'fleet'];

/**
 * Removes from `values` (the project file's parsed YAML, changed in place) what an untrusted
 * project may not set, against `lower` (the config the person's own layers make). Returns the
 * dotted keys it removed.
 */
export function stripUntrusted(values: Record<string, unknown>, lower: Config): string[] {
  const ignored: string[] = [];
  for (const [key, check] of Object.entries(TIGHTEN_ONLY)) {
    const v = getPath(values, key);
    if (v === undefined) continue;
    if (!check(v, lower)) {
      ignored.push(key);
      deletePath(values, key);
    }
  }
  for (const key of NEVER) {
    const v = getPath(values, key);
    if (v === undefined || v === null || typeof v !== 'object') {
      if (v !== undefined) {
        ignored.push(key);
        deletePath(values, key);
      }
      continue;
    }
    for (const child of Object.keys(v)) {
      const path = `${key}.${child}`;
      if (key === 'security' && path in TIGHTEN_ONLY) continue;
      ignored.push(path);
      deletePath(values, path);
    }
  }
  return ignored;
}
