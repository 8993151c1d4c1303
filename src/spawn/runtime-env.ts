import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Layout } from '../layout/layout.js';

/**
 * The vendor CLI's own settings from the spawner's environment (API base URLs, keys, model
 * choices: ANTHROPIC_*, OPENAI_*, GEMINI_* …), handed to the shim through a 0600 file in
 * the agent's runtime folder instead of tmux's argv, where a key would be readable in `ps`.
 * The shim reads it once and deletes it.
 */
const PREFIXES = ['ANTHROPIC_', 'CLAUDE_', 'OPENAI_', 'CODEX_', 'GEMINI_', 'GOOGLE_'];
/**
 * HOME too: the spawn decided the CLI can authenticate from the spawner's home (the person's
 * login, docs/runtimes.md "Logins"); the tmux server's may be another's.
 */
const EXACT = ['HOME'];

/** A vendor CLI's own setting (a key among them): kept out of every environment but its CLI's. */
export function isVendorVar(name: string): boolean {
  return PREFIXES.some((p) => name.startsWith(p));
}

export function writeRuntimeEnv(layout: Layout, id: string, env: NodeJS.ProcessEnv): void {
  const picked: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && (EXACT.includes(k) || isVendorVar(k))) picked[k] = v;
  const dir = layout.runtimeDir(id);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, 'spawner-env.json'), JSON.stringify(picked), { mode: 0o600 });
}

export function takeRuntimeEnv(layout: Layout, id: string): Record<string, string> {
  const file = join(layout.runtimeDir(id), 'spawner-env.json');
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  } catch {
    return {};
  } finally {
    rmSync(file, { force: true });
  }
}
