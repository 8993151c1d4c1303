import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/schema.js';
import { createRecord } from '../../src/fleet/registry.js';
import { openAgentDoor, sendAs } from '../../src/harness/door-send.js';
import { CLI_ENTRY, TOOLS_DIR } from '../../src/layout/package.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';

/**
 * A vendor CLI's `flotilla mcp` through its agent's door (harness/door-send.ts): the shim serves the fleet tools in its
 * own process, as the agent, on the connection tools/door-pipe makes — no Node process of its own per agent. A real
 * door on a real socket, the perl client the CLI runs, the MCP SDK's client on the other end.
 */
let f: TempFleet | undefined;
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  f?.cleanup();
  f = undefined;
});

async function agentDoor(): Promise<{ fleet: TempFleet; door: string }> {
  const fleet = (f = tempFleet('flotilla-door-mcp-'));
  const tools = ['send_message', 'check_inbox'];
  createRecord(fleet.layout, recordInput('lead', { cwd: fleet.project }));
  const rec = createRecord(
    fleet.layout,
    recordInput('va', {
      cwd: fleet.project,
      parentId: 'lead',
      rootId: 'lead',
      depth: 1,
      effectivePolicy: { tools, permissionMode: 'default', secrets: [] },
    }),
  );
  const config = defaultConfig();
  const door = await openAgentDoor(fleet.layout, config, rec, sendAs(fleet.layout, config, rec), {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: fleet.project },
    writable: [fleet.project],
    hooksHere: true,
  });
  if (!door) throw new Error('the door did not open');
  return { fleet, door };
}

/** An MCP client as the CLI runs it: tools/door-pipe with the agent's FLOTILLA_DOOR. */
async function cliClient(fleet: TempFleet, door: string): Promise<Client> {
  const client = new Client({ name: 'cli', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command: 'perl',
      args: [join(TOOLS_DIR, 'door-pipe'), 'mcp', process.execPath, CLI_ENTRY],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', FLOTILLA_DOOR: door },
      cwd: fleet.project,
    }),
  );
  clients.push(client);
  return client;
}

/** The command lines of this process's children. */
function children(): string[][] {
  const out: string[][] = [];
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== process.pid) continue;
      out.push(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** One raw `pipe` (or `run`) request to the door and what it answers before it hangs up. */
function rawPipe(door: string, args: string[], op: 'pipe' | 'run' = 'pipe'): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect({ path: door, allowHalfOpen: true });
    let got = '';
    sock.on('connect', () => sock.end(JSON.stringify({ op, args }) + '\n'));
    sock.on('data', (c: Buffer) => (got += c.toString('utf8')));
    sock.on('close', () => resolve(got));
    sock.on('error', reject);
  });
}

describe("a vendor CLI's fleet MCP server, served by its shim through the door", { timeout: 60_000 }, () => {
  it('offers the agent its fleet tools and sends as the agent, with no Flotilla process started for it', async () => {
    const { fleet, door } = await agentDoor();
    const client = await cliClient(fleet, door);
    expect(client.getInstructions()).toContain('You are fleet agent va (depth 1)');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['check_inbox', 'send_message']);

    const sent = await client.callTool({ name: 'send_message', arguments: { to: 'lead', body: 'from-the-door-5521' } });
    expect(sent.isError).toBeFalsy();
    const inbox = join(fleet.layout.inbox('lead'), 'new');
    const mail = readdirSync(inbox).map((n) => readFileSync(join(inbox, n), 'utf8'));
    expect(mail).toEqual([expect.stringContaining('from-the-door-5521')]);
    expect(mail[0]).toMatch(/^from: va$/m);
    // The CLI's client is the perl pipe; no `flotilla mcp` runs beside it.
    const ours = children().filter((c) => c.includes(CLI_ENTRY) && c[0] !== 'perl');
    expect(ours).toEqual([]);

    // A client that ends leaves the door serving the next (a CLI restarted, a second server asked for).
    await client.close();
    const again = await cliClient(fleet, door);
    expect((await again.listTools()).tools).toHaveLength(2);
  });

  it('refuses what is not a plain `flotilla mcp`, in one line, and hangs up', async () => {
    const { door } = await agentDoor();
    expect(JSON.parse(await rawPipe(door, ['mcp', '--root', '/elsewhere']))).toEqual({
      ok: false,
      message: expect.stringContaining('--root is refused through the door') as unknown,
    });
    expect(JSON.parse(await rawPipe(door, ['mcp', 'extra']))).toEqual({
      ok: false,
      message: 'flotilla mcp takes no arguments — got extra',
    });
    expect(JSON.parse(await rawPipe(door, ['status']))).toEqual({
      ok: false,
      message: 'the door joins only mcp to a connection',
    });
  });

  it("refuses a `run` with the harness's own flags: an agent cannot start a harness or a shim host from its sandbox", async () => {
    const { door } = await agentDoor();
    for (const args of [
      ['run', '--spawned', 'va'],
      ['run', '--shim-host', '/tmp/flotilla-host.sock'],
      ['run', '--shim-host-start=/tmp/flotilla-host.sock'],
    ]) {
      const flag = args[1]!.split('=')[0]!;
      expect(JSON.parse(await rawPipe(door, args, 'run'))).toMatchObject({
        ok: false,
        message: expect.stringContaining(`${flag} is internal to spawn-agent and is refused through the door`),
      });
    }
    expect(children().some((c) => c.includes('--shim-host'))).toBe(false);
  });
});
