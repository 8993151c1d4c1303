import type { Config } from '../../config/schema.js';
import { runtimeKeyVars } from '../../runtimes/login.js';
import type { VendorRuntimeName } from '../../runtimes/types.js';
import { busCredentialVars, commandEnvironment, providerKeyVars } from '../../tools/command-env.js';

/**
 * The vendor CLI's environment (docs/security-fleet.md "Vendor runtimes"). The CLI runs every
 * command its shell tool is asked for with its own environment, so what it must not hand a
 * command it must not have: `TMUX`/`TMUX_PANE` (the shim keeps them, to type into the pane),
 * and any provider key but the ones that authenticate this CLI (or that the definition lists
 * in `permissions.env`) — a Claude Code member never holds the fleet's OpenAI key — nor the
 * bus's credentials, whatever `permissions.env` lists: its hooks and MCP server reach the bus
 * through the agent's door, as the shim (docs/security-fleet.md "Bus credentials").
 */
export function vendorCliEnvironment(
  config: Pick<Config, 'models' | 'fleet'>,
  runtime: VendorRuntimeName,
  env: NodeJS.ProcessEnv,
  passEnv: readonly string[],
): NodeJS.ProcessEnv {
  const own = runtimeKeyVars(runtime);
  const others = [
    ...providerKeyVars(config),
    ...(['claude', 'codex', 'gemini'] as const).flatMap((r) => runtimeKeyVars(r)),
  ].filter((k) => !own.includes(k));
  return commandEnvironment(env, { keys: [...new Set(others)], allow: passEnv, never: busCredentialVars(config) });
}
