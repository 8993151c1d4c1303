import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Layout } from '../layout/layout.js';

/**
 * How a spawned harness gets its model provider keys (docs/security-shell.md "Keys on request
 * only", docs/decisions.md "Harness keys through a file, never tmux"): the spawner writes
 * the keys it has into a 0600 file in the agent's runtime folder, the harness reads it once
 * at start and removes it, and each key is unset before the harness starts (by the pane's sh,
 * spawn/pane-command.ts, or `env -u`), so
 * neither tmux's environment nor `/proc/<harness>/environ` holds one — whether the tmux
 * server is the fleet's (started without them, tmux/client.ts) or a person's that has them.
 */
const FILE = 'harness-keys.json';

/** Writes the keys among `names` that `env` holds; nothing when it holds none. */
export function writeHarnessKeys(layout: Layout, id: string, env: NodeJS.ProcessEnv, names: readonly string[]): void {
  const picked: Record<string, string> = {};
  for (const name of names) {
    const value = env[name];
    if (value) picked[name] = value;
  }
  if (Object.keys(picked).length === 0) return;
  const dir = layout.runtimeDir(id);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, FILE), JSON.stringify(picked), { mode: 0o600 });
}

/** The keys the spawner left for this agent, read once: the file is gone afterwards. */
export function takeHarnessKeys(layout: Layout, id: string): Record<string, string> {
  const file = join(layout.runtimeDir(id), FILE);
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (!parsed || typeof parsed !== 'object') return {};
    return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return {};
  } finally {
    rmSync(file, { force: true });
  }
}

/** `argv` started with these variables removed from its environment (`env -u NAME …`). */
export function withoutVars(argv: readonly string[], names: readonly string[]): string[] {
  return names.length ? ['env', ...names.flatMap((n) => ['-u', n]), ...argv] : [...argv];
}

/** A copy of `env` without `names`. */
export function envWithout(env: NodeJS.ProcessEnv, names: readonly string[]): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const name of names) delete out[name];
  return out;
}
