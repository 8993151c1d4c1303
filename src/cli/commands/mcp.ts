import { cliConfig, contextOf, type Globals } from '../context.js';
import { guardStderr, guardStdout } from '../output.js';
import type { CommandSpec, Parsed } from '../spec.js';
import { cacheAtStart, startDone } from '../../start-done.js';
import { traceMark } from '../../trace.js';
import { VERSION } from '../../versions.js';

/**
 * `flotilla mcp` (§13): serve the fleet tools over MCP stdio to any MCP client. Who the
 * client is comes from the process it runs under: inside an agent's window it is that
 * agent; anywhere else it is a person. A vendor CLI waits for it before its first turn, so
 * it runs on the fast path (fast.ts: its own bundle with the MCP SDK, read through V8's code
 * cache, no commander; §14), and the top of this file imports nothing heavy.
 */
export const spec: CommandSpec = {
  name: 'mcp',
  fast: true,
  description:
    'serve the fleet tools (send_message, check_inbox, spawn_agent, …) over MCP stdio; identity from the process it runs under',
  args: [],
  options: [],
};

export async function run(_parsed: Parsed, globals: Globals): Promise<void> {
  traceMark('mcp: command runs');
  // A server lives as long as its client and is often ended by a signal: its code cache is
  // written once it has answered its first tools/list, holding what a start compiles (start-done.ts).
  cacheAtStart();
  // As the full CLI's start does (start.ts): a client that has gone ends the server quietly.
  guardStdout();
  guardStderr();
  const { layout } = contextOf(globals);
  const { config } = await cliConfig(layout);
  const [{ mcpIdentity }, { serveMcp }] = await Promise.all([
    import('../../mcp/identity.js'),
    import('../../mcp/server.js'),
  ]);
  const identity = await mcpIdentity(layout);
  const { closed } = await serveMcp(layout, config, identity, { version: VERSION, listed: startDone });
  traceMark('mcp: serving');
  await closed;
}
