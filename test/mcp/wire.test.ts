import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createRecord } from '../../src/fleet/registry.js';
import { processStartTime } from '../../src/fleet/proc.js';
import { CLI } from '../helpers/cli.js';
import { recordInput } from '../helpers/records.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * MCP's wire as `flotilla mcp` speaks it (src/mcp/json-rpc.ts), one raw line at a time: what a client that is not the
 * SDK's (a vendor CLI's, a broken one) may send. The SDK's own client drives the tools in mcp.test.ts.
 */

let fleet: SpawnFleet | undefined;
let server: ChildProcess | undefined;
let sleeper: ChildProcess | undefined;

afterEach(async () => {
  server?.kill('SIGKILL');
  sleeper?.kill('SIGKILL');
  server = sleeper = undefined;
  await fleet?.close();
  fleet = undefined;
});

type Reply = { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } };

function rawMcp(f: SpawnFleet): {
  send(line: string | object): void;
  write(bytes: Buffer): void;
  reply(id: unknown): Promise<Reply>;
  all(): Reply[];
  end(): Promise<number | null>;
} {
  const child = spawn(process.execPath, [CLI, '--root', f.layout.root, 'mcp'], { env: f.env, cwd: f.project });
  server = child;
  const got: Reply[] = [];
  let rest = '';
  child.stdout.on('data', (d: Buffer) => {
    const lines = (rest + d.toString()).split('\n');
    rest = lines.pop()!;
    for (const l of lines) if (l.trim()) got.push(JSON.parse(l) as Reply);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    send: (line) => child.stdin.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`),
    write: (bytes) => child.stdin.write(bytes),
    reply: async (id) => {
      await eventually(() => got.some((m) => m.id === id), 30_000, `the answer to ${String(id)}`);
      return got.find((m) => m.id === id)!;
    },
    all: () => got,
    end: () => {
      child.stdin.end();
      return exited;
    },
  };
}

const rpc = (id: number, method: string, params?: object) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params ? { params } : {}),
});

describe('flotilla mcp on the wire', () => {
  it('answers a line that is not JSON, an unknown method, a call without a tool; reads a character split in two; ends with its input', async () => {
    fleet = await spawnFleet();
    const c = rawMcp(fleet);
    c.send('this is not json');
    c.send(
      rpc(1, 'initialize', {
        protocolVersion: '2024-11-05',
        capabilities: {},
        clientInfo: { name: 'x', version: '1' },
      }),
    );
    const init = await c.reply(1);
    expect(init.result).toMatchObject({
      protocolVersion: '2024-11-05',
      capabilities: { tools: {} },
      serverInfo: { name: 'flotilla' },
      instructions: expect.stringContaining('person'),
    });
    expect(c.all()[0]).toMatchObject({ id: null, error: { code: -32700 } });
    c.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    c.send(rpc(2, 'resources/list'));
    expect((await c.reply(2)).error).toMatchObject({
      code: -32601,
      message: expect.stringContaining('resources/list'),
    });
    // A name in two reads, split inside its first character's bytes: the server reads it whole.
    const split = Buffer.from(`${JSON.stringify(rpc(9, 'tools/call', { name: 'étoile', arguments: {} }))}\n`);
    const at = split.indexOf(Buffer.from('é')) + 1;
    c.write(split.subarray(0, at));
    await new Promise((r) => setTimeout(r, 300));
    c.write(split.subarray(at));
    expect((await c.reply(9)).result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringContaining("'étoile' is not a Flotilla fleet tool") }],
    });
    c.send(rpc(3, 'tools/call', { arguments: {} }));
    expect((await c.reply(3)).error).toMatchObject({ code: -32602, message: expect.stringContaining('params.name') });
    // A revision it does not speak is answered with its newest, which the client may refuse.
    c.send(
      rpc(4, 'initialize', {
        protocolVersion: '1999-01-01',
        capabilities: {},
        clientInfo: { name: 'x', version: '1' },
      }),
    );
    expect((await c.reply(4)).result?.protocolVersion).toBe('2025-11-25');
    c.send(rpc(5, 'tools/list'));
    const names = ((await c.reply(5)).result?.tools as { name: string }[]).map((t) => t.name);
    expect(names).toContain('send_message');
    c.send(rpc(6, 'tools/call', { name: 'send_message', arguments: { to: 'nobody-here', body: 'hi' } }));
    expect((await c.reply(6)).result).toMatchObject({ isError: true });
    expect(await c.end()).toBe(0);
  });

  it('drops a line over its bound, says so once, and reads the next line', async () => {
    fleet = await spawnFleet();
    const c = rawMcp(fleet);
    // 17 Mi characters with no newline: over the 16 Mi bound (the inbox's 1 MiB body, escaped, is far less).
    const mib = 'x'.repeat(2 ** 20);
    for (let i = 0; i < 17; i++) c.write(Buffer.from(mib));
    await eventually(() => c.all().some((m) => m.error?.code === -32600), 30_000, 'the bound said');
    // The line's end, a request in it: read as the rest of the dropped line, never answered.
    c.write(Buffer.from(`${mib}${JSON.stringify(rpc(77, 'ping'))}\n`));
    c.send(rpc(8, 'ping'));
    expect((await c.reply(8)).result).toEqual({});
    expect(c.all().filter((m) => m.id === 77)).toEqual([]);
    expect(c.all().filter((m) => m.error)).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: expect.stringMatching(/over 16777216 characters, dropped — send less/) },
      },
    ]);
    expect(await c.end()).toBe(0);
  });

  it('stops a call the client cancels and sends no answer to it', async () => {
    fleet = await spawnFleet();
    const f = fleet;
    // A live agent to wait for: a sleep, registered as one (wait_for_agents blocks until it ends).
    const busy = spawn('sleep', ['300'], { stdio: 'ignore' });
    sleeper = busy;
    createRecord(
      f.layout,
      recordInput('busy-one', {
        pid: busy.pid!,
        pidStartTime: processStartTime(busy.pid!),
        cwd: f.project,
        status: 'working',
        startedAt: new Date().toISOString(),
      }),
    );
    const c = rawMcp(f);
    c.send(
      rpc(1, 'initialize', {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'x', version: '1' },
      }),
    );
    await c.reply(1);
    c.send(rpc(7, 'tools/call', { name: 'wait_for_agents', arguments: { ids: ['busy-one'] } }));
    const audit = (event: string) => () =>
      readFileSync(f.layout.auditFile, 'utf8')
        .split('\n')
        .some((l) => l.includes(`"event":"${event}"`) && l.includes('"tool":"wait_for_agents"'));
    await eventually(audit('tool_call'), 30_000, 'the wait running');
    c.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'changed my mind' } });
    // The wait ended by the cancel, not by the agent, which still works.
    await eventually(audit('tool_result'), 30_000, 'the wait stopped');
    c.send(rpc(8, 'ping'));
    expect((await c.reply(8)).result).toEqual({});
    expect(await c.end()).toBe(0);
    expect(c.all().filter((m) => m.id === 7)).toEqual([]);
  });
});
