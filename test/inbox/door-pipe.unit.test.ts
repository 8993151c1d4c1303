import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openDoor, type Door, type DoorPipe } from '../../src/inbox/door.js';
import { doorClient } from '../helpers/door-client.js';

/**
 * tools/door-pipe: a sandboxed vendor CLI's `flotilla mcp` (harness/cli-host/cli-launch.ts). It
 * must ask the door what the Node client (cli/door-forward.ts) asks — `pipe` of `mcp` from the
 * caller's cwd — then carry both ways byte for byte for as long as the CLI keeps it: the CLI's
 * end of input reaches the server as its end, and the server's end ends the client.
 * A real door on a real socket; the harness's side is a piper that echoes, then hangs up.
 */
const AWKWARD = 'say "hi" \\ back\\slash\nline two\ttab \u0001\u001f é ✉ 🚀 {"jsonrpc":"2.0"}\n';

let dir: string;
let door: Door | undefined;
afterEach(() => {
  door?.close();
  door = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** A door whose piper answers each chunk with `echo:` + it, and when its input ends writes `bye` and closes. */
async function echoDoor(): Promise<{ path: string; got: DoorPipe[] }> {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'flotilla-door-pipe-')));
  const got: DoorPipe[] = [];
  door = await openDoor(
    join(dir, 'doors', 'a.sock'),
    1 << 20,
    async () => ({}),
    (req: DoorPipe, sock: Socket, rest: Buffer) => {
      got.push(req);
      const heard: Buffer[] = rest.length ? [rest] : [];
      sock.on('data', (c: Buffer) => heard.push(c));
      sock.on('end', () => sock.end(`echo:${Buffer.concat(heard).toString('utf8')}bye`));
      sock.resume();
    },
  );
  return { path: door.path, got };
}

function pipe(path: string | undefined, input: string, fallback?: string[]) {
  return doorClient('door-pipe', 'mcp', { cwd: dir, door: path, input, ...(fallback ? { fallback } : {}) });
}

describe('tools/door-pipe, the MCP client without a Node process', () => {
  it('asks the door to join mcp from its cwd, and carries both ways byte for byte until the server ends', async () => {
    const d = await echoDoor();
    const big = AWKWARD.repeat(4000); // ~300 KB: more than one read each way
    const r = await pipe(d.path, big);
    expect(r.exitCode).toBe(0);
    expect(d.got).toEqual([{ op: 'pipe', args: ['mcp'], cwd: dir }]);
    expect(r.stdout).toBe(`echo:${big}bye`);
    expect(r.stderr).toBe('');
  });

  it("a door that refuses: its one line reaches the CLI as the Node client's does, and the client ends", async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'flotilla-door-pipe-')));
    door = await openDoor(join(dir, 'doors', 'a.sock'), 1 << 20, async () => ({}));
    const r = await pipe(door.path, '{}\n');
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ok: false, message: 'this door joins no command to its connection' });
  });
});
