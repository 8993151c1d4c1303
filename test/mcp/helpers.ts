import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI } from '../helpers/cli.js';

/** A real `flotilla mcp` process driven by the SDK's own Client over stdio. */
export interface McpSession {
  client: Client;
  /** Calls a tool; returns its text and whether it was an error. */
  call(name: string, args?: Record<string, unknown>): Promise<{ text: string; isError: boolean }>;
  /** What the server printed on stderr. */
  stderr(): string;
  close(): Promise<void>;
}

export async function connectMcp(root: string, env: Record<string, string>, cwd: string): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, '--root', root, 'mcp'],
    env,
    cwd,
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const client = new Client({ name: 'flotilla-test', version: '0.0.0' });
  try {
    await client.connect(transport);
  } catch (e) {
    await new Promise((r) => setTimeout(r, 200));
    throw new Error(`${(e as Error).message}; stderr: ${err}`);
  }
  return {
    client,
    async call(name, args = {}) {
      // The SDK gives up on a request after 60 s; wait_for_agents and spawn_agent with wait
      // run whole agents, which a loaded machine can take longer over.
      const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 240_000 });
      const content = r.content as { type: string; text?: string }[];
      return { text: content.map((c) => c.text ?? '').join(''), isError: r.isError === true };
    },
    stderr: () => err,
    close: () => client.close(),
  };
}
