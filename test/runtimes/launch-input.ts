import type { LaunchInput } from '../../src/runtimes/types.js';

/** Every tool a definition can grant, canonical names. */
export const ALL_TOOLS = ['shell', 'read', 'write', 'edit', 'glob', 'grep', 'send_message', 'check_inbox', 'spawn_agent', 'list_agents', 'wait_for_agents', 'cancel_agent'];

/** A runtime's launch input with fixed paths, for reading what it would write. */
export const launchInput = (env: NodeJS.ProcessEnv): LaunchInput => ({
  id: 'a', cwd: '/p', configDir: '/c', prompt: 'do it', mcp: { command: '/node', args: ['cli.js', 'mcp'] },
  hookCommand: (e) => `flotilla runtime-hook ${e}`, env,
});
