import { Command } from 'commander';
import { VERSION } from '../../versions.js';
import { cliConfig, cliContext } from '../context.js';
import { traceMark } from '../../trace.js';

/**
 * `flotilla mcp` (§13): serve the fleet tools over MCP stdio to any MCP client. Who the
 * client is comes from the process it runs under: inside an agent's window it is that
 * agent; anywhere else it is a person. Loaded only when run, so other commands never pay
 * for the MCP SDK.
 */
export function command(): Command {
  return new Command('mcp')
    .description(
      'serve the fleet tools (send_message, check_inbox, spawn_agent, …) over MCP stdio; identity from the process it runs under',
    )
    .action(async (_opts: unknown, cmd: Command) => {
      traceMark('mcp: command runs');
      const { layout } = cliContext(cmd);
      const { config } = await cliConfig(layout);
      const [{ mcpIdentity }, { serveMcp }] = await Promise.all([
        import('../../mcp/identity.js'),
        import('../../mcp/server.js'),
      ]);
      const identity = await mcpIdentity(layout);
      const { closed } = await serveMcp(layout, config, identity, { version: VERSION });
      traceMark('mcp: serving');
      await closed;
    });
}
