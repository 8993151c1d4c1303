import { TOOL_TABLE } from '../../src/policy/tool-table.js';
import type { LaunchInput } from '../../src/runtimes/types.js';

/** Every tool a definition can grant a vendor agent, canonical names (the secret broker is the harness's own). */
export const ALL_TOOLS: string[] = TOOL_TABLE.filter((r) => r.group !== 'secrets').map((r) => r.name);

/** A runtime's launch input with fixed paths, for reading what it would write. */
export const launchInput = (env: NodeJS.ProcessEnv): LaunchInput => ({
  id: 'a',
  cwd: '/p',
  trusted: true,
  configDir: '/c',
  prompt: 'do it',
  mcp: { command: '/node', args: ['cli.js', 'mcp'] },
  hookCommand: (e) => `flotilla runtime-hook ${e}`,
  env,
  maxRetries: 3,
  approvalTimeoutSecs: 300,
});
